"""Test-wide settings: hypothesis never fails on timing, and on CI it is derandomized; each test
leaves the root logger as it found it.

Deadlines measure the machine, not the code (CI shares two cores with other work), so they are off.
On CI (``CI=true``) every property test draws the same examples each run, so a landing is never
blocked by a newly drawn case; locally examples are random and keep hunting for bugs.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Iterator

import pytest
from hypothesis import HealthCheck, settings

settings.register_profile("local", deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.register_profile(
    "ci", deadline=None, suppress_health_check=[HealthCheck.too_slow], derandomize=True, database=None
)
settings.load_profile("ci" if os.environ.get("CI", "").lower() in ("1", "true", "yes") else "local")


@pytest.fixture(autouse=True)
def _root_logging_restored() -> Iterator[None]:
    """A command under test configures logging (``configure_logging``: one handler on the stderr pytest
    captured for that test, in place of pytest's own); put the root logger back, or a later test's log
    lines go to a closed stream and its stderr shows a logging error."""
    root, own = logging.getLogger(), logging.getLogger("kubetide")
    handlers, root_level, own_level = list(root.handlers), root.level, own.level
    yield
    root.handlers[:] = handlers
    root.setLevel(root_level)
    own.setLevel(own_level)
