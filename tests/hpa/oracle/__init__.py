"""An independent model of the upstream HPA controller, for differential tests.

A close transliteration of ``pkg/controller/podautoscaler`` (``horizontal.go``, ``replica_calculator.go``,
``metrics/``) and ``pkg/apis/autoscaling/v2/defaults.go`` over plain dicts in the conformance-case shape
(``shared/spec/hpa.md`` section 10). It imports nothing from kubetide on purpose.

Time: "now" is 0, an instant ``ago`` seconds in the past is ``-ago``; Go's zero time is a finite instant
far in the past (``goint.ZERO_TIME``), so that ``zero.Add(window)`` is still later than ``zero``.

Where the spec (``hpa.md``) and the Go code differ, the model follows the spec: pod-level requests that
lack the metric's resource are an error (upstream's ``PodRequests`` would fill it in from the
containers), and external AverageValue sums saturate as for Value targets. Where the spec is silent it
follows Go: int32/int64 arithmetic wraps around, and float64 -> int32 conversions out of range (which Go
leaves to the platform) raise :class:`Undefined` so the differential tests skip those inputs.
"""

from .cases import run_oracle
from .goint import Undefined

__all__ = ["Undefined", "run_oracle"]
