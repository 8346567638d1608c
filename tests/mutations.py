"""Hypothesis helpers for fuzzing users' files: any value, every place in a document, and a valid
document with a few places replaced (or removed).

Shared by the fuzz tests of the scenario, the snapshots, the live commands' files and the validation.
"""

from __future__ import annotations

import copy
from typing import Any

from hypothesis import strategies as st

__all__ = ["HOSTILE", "any_value", "mutated", "places"]

# Scalars that have broken parsers: NaN and infinities, integers past int64 and float64, quantities
# with huge exponents or thousands of digits, Unicode digits, path-like and percent strings.
HOSTILE = st.sampled_from(
    [float("nan"), float("inf"), 2**63, 10**400, "1e999999999", "9" * 5000, "١٠", "１0s", "a/b", "-1", "150%"]
)


def any_value(max_leaves: int = 16) -> st.SearchStrategy[Any]:
    """Any YAML-like value: scalars (the hostile ones too), lists and mappings (keys may be numbers)."""
    scalars = st.one_of(
        st.none(),
        st.booleans(),
        st.integers(min_value=-(2**70), max_value=2**70),
        st.floats(),
        st.text(max_size=10),
        HOSTILE,
    )
    return st.recursive(
        scalars,
        lambda children: st.one_of(
            st.lists(children, max_size=4),
            st.dictionaries(st.one_of(st.text(max_size=8), st.integers()), children, max_size=4),
        ),
        max_leaves=max_leaves,
    )


def places(node: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Every place in ``node`` as a tuple of keys and indices, ``()`` (the whole) first."""
    out = [prefix]
    if isinstance(node, dict):
        for key, value in node.items():
            out += places(value, (*prefix, key))
    elif isinstance(node, list):
        for i, value in enumerate(node):
            out += places(value, (*prefix, i))
    return out


@st.composite
def mutated(draw: st.DrawFn, valid: Any, removals: bool = True) -> Any:
    """``valid`` with one to three places replaced by any value (or, with ``removals``, removed)."""
    doc = copy.deepcopy(valid)
    for _ in range(draw(st.integers(1, 3))):
        where = places(doc)[1:]
        if not where:
            break
        path = draw(st.sampled_from(where))
        parent = doc
        try:
            for part in path[:-1]:
                parent = parent[part]
            if removals and draw(st.booleans()):
                del parent[path[-1]]
            else:
                parent[path[-1]] = draw(any_value())
        except (KeyError, IndexError, TypeError):
            continue
    return doc
