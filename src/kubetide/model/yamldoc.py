"""YAML as users' files should be read: a key given twice in one mapping is an error, not "the last one
wins" (PyYAML's default, which silently runs something else than half of what the user wrote).

Every duplicate of a document is reported at once, with its line and the line of the first occurrence.
"""

from __future__ import annotations

from typing import Any

import yaml

__all__ = ["DuplicateKeyError", "safe_load", "safe_load_all"]


class DuplicateKeyError(yaml.YAMLError):
    def __init__(self, duplicates: list[str]) -> None:
        super().__init__("; ".join(duplicates))
        self.duplicates = duplicates


class _StrictLoader(yaml.SafeLoader):
    def __init__(self, stream: Any) -> None:
        super().__init__(stream)
        self.found: list[tuple[int, int, str]] = []

    @property
    def duplicates(self) -> list[str]:
        return [text for _, _, text in sorted(self.found)]

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
        seen: dict[Any, int] = {}
        for key_node, _ in node.value:
            if key_node.tag == "tag:yaml.org,2002:merge":
                continue  # "<<" merges may repeat keys on purpose
            key = self.construct_object(key_node, deep=True)
            try:
                first = seen.get(key)
            except TypeError:  # an unhashable key: the base class reports it
                continue
            line = key_node.start_mark.line + 1
            if first is not None:
                column = key_node.start_mark.column + 1
                text = f"line {line}, column {column}: duplicate key {key!r} (first at line {first})"
                self.found.append((line, column, text))
            else:
                seen[key] = line
        return super().construct_mapping(node, deep=deep)


def safe_load(text: str) -> Any:
    """``yaml.safe_load``, raising DuplicateKeyError (a YAMLError) listing every repeated key."""
    loader = _StrictLoader(text)
    try:
        data = loader.get_single_data()
    finally:
        loader.dispose()
    if loader.duplicates:
        raise DuplicateKeyError(loader.duplicates)
    return data


def safe_load_all(text: str) -> list[Any]:
    loader = _StrictLoader(text)
    try:
        docs = []
        while loader.check_data():  # type: ignore[no-untyped-call]
            docs.append(loader.get_data())
    finally:
        loader.dispose()
    if loader.duplicates:
        raise DuplicateKeyError(loader.duplicates)
    return docs
