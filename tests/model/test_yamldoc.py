"""Every file a user hands kubetide is read by one reader: problems named with file, line and column,
duplicate keys refused, values YAML cannot build reported, never a traceback."""

from __future__ import annotations

import pytest

from kubetide.model.yamldoc import YamlDocumentError, load_documents


def problems(text: str, **kwargs: bool) -> list[str]:
    with pytest.raises(YamlDocumentError) as exc:
        load_documents(text, "f.yaml", **kwargs)
    return exc.value.problems


def test_documents_single_and_multi() -> None:
    assert load_documents("a: 1\n", "f.yaml") == [{"a": 1}]
    assert load_documents("a: 1\n---\n---\nb: 2\n", "f.yaml", multi=True) == [{"a": 1}, {"b": 2}]
    assert load_documents('{"a": [1]}', "f.json", json_syntax=True) == [{"a": [1]}]


def test_every_problem_is_named_with_the_file_and_where() -> None:
    assert problems("a: b: c\n") == ["f.yaml:1:5: invalid YAML: mapping values are not allowed here"]
    assert problems("a: 1\nb: 2\na: 3\nb: 4\n") == [
        "f.yaml: line 3, column 1: duplicate key 'a' (first at line 1)",
        "f.yaml: line 4, column 1: duplicate key 'b' (first at line 2)",
    ]
    assert problems("when: 2024-13-01\n") == ["f.yaml: invalid YAML: month must be in 1..12"]
    assert problems('{"a": }', json_syntax=True) == ["f.yaml:1:7: invalid JSON: Expecting value"]
    assert problems("[" * 5000 + "]" * 5000) == ["f.yaml: invalid YAML: nested too deeply"]
