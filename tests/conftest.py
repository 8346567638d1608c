"""Test-wide settings: hypothesis never fails on timing, and on CI it is derandomized.

Deadlines measure the machine, not the code (CI shares two cores with other work), so they are off.
On CI (``CI=true``) every property test draws the same examples each run, so a landing is never
blocked by a newly drawn case; locally examples are random and keep hunting for bugs.
"""

from __future__ import annotations

import os

from hypothesis import HealthCheck, settings

settings.register_profile("local", deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.register_profile(
    "ci", deadline=None, suppress_health_check=[HealthCheck.too_slow], derandomize=True, database=None
)
settings.load_profile("ci" if os.environ.get("CI", "").lower() in ("1", "true", "yes") else "local")
