"""An independent model of the upstream HPA controller, for differential tests.

A close transliteration of ``pkg/controller/podautoscaler`` (``horizontal.go``, ``replica_calculator.go``,
``metrics/``) and ``pkg/apis/autoscaling/v2/defaults.go`` over plain dicts in the conformance-case shape
(``shared/spec/hpa.md`` section 10). It imports nothing from kubetide on purpose.

Time: "now" is 0, an instant ``ago`` seconds in the past is ``-ago``; Go's zero time is a finite instant
far in the past (``goint.ZERO_TIME``), so that ``zero.Add(window)`` is still later than ``zero``.
"""

from .cases import run_oracle
from .goint import Undefined

__all__ = ["Undefined", "run_oracle"]
