"""Series specs: the time-varying values that drive traffic (``rps``) and custom metrics (``series``).

Five shapes, chosen by ``type``; each may add ``noise``. How they evaluate is :mod:`kubetide.sim.series`;
this module only says what a valid spec is. Decisions the contract leaves open:

- ``step``: the value of the last step whose ``at`` is <= t; before the first step, 0. Steps are
  listed in increasing ``at``.
- ``ramp``: ``from`` until ``start``, linear to ``to`` at ``end``, then ``to``.
- ``sine``: ``base + amplitude * sin(2π (t + phase) / period)``; ``phase`` is a time shift (duration).
- ``csv``: ``timeColumn`` defaults to the file's first column; times are seconds (or durations),
  increasing; linear interpolation, holding the first/last value outside the file's range.
- ``noise``: Gaussian, ``stddev`` in the series' own unit, drawn once per ``interval`` (default 15s,
  the metrics resolution) and held, so a value does not depend on how often it is read; a noisy
  value is floored at 0 (rates and queue depths are never negative).
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field, model_validator

from kubetide.sim.scenario.base import Duration, SpecModel, errors_at

__all__ = [
    "SERIES_TYPES",
    "ConstantSeries",
    "CsvSeries",
    "Noise",
    "RampSeries",
    "SeriesSpec",
    "SineSeries",
    "Step",
    "StepSeries",
]


class Noise(SpecModel):
    stddev: Annotated[float, Field(ge=0)]
    interval: Annotated[Duration, Field(gt=0)] = 15.0


class _Series(SpecModel):
    noise: Noise | None = None


class ConstantSeries(_Series):
    type: Literal["constant"]
    value: float


class Step(SpecModel):
    at: Duration
    value: float


class StepSeries(_Series):
    type: Literal["step"]
    steps: Annotated[list[Step], Field(min_length=1)]

    @model_validator(mode="after")
    def _ordered(self) -> StepSeries:
        for i in range(1, len(self.steps)):
            if self.steps[i].at < self.steps[i - 1].at:
                message = f"must be >= steps[{i - 1}].at (steps are listed in increasing time)"
                raise errors_at("StepSeries", [(("steps", i, "at"), message, self.steps[i].at)])
        return self


class RampSeries(_Series):
    type: Literal["ramp"]
    from_: float = Field(alias="from")
    to: float
    start: Duration
    end: Duration

    @model_validator(mode="after")
    def _ordered(self) -> RampSeries:
        if self.end < self.start:
            message = f"must be >= start (got {self.end:g}s < {self.start:g}s)"
            raise errors_at("RampSeries", [(("end",), message, self.end)])
        return self


class SineSeries(_Series):
    type: Literal["sine"]
    base: float
    amplitude: float
    period: Annotated[Duration, Field(gt=0)]
    phase: Duration = 0.0


class CsvSeries(_Series):
    type: Literal["csv"]
    path: Annotated[str, Field(min_length=1)]
    column: Annotated[str, Field(min_length=1)]
    timeColumn: str | None = None


SeriesSpec = Annotated[
    ConstantSeries | StepSeries | RampSeries | SineSeries | CsvSeries, Field(discriminator="type")
]
SERIES_TYPES = ("constant", "step", "ramp", "sine", "csv")
