"""Time for the autoscalers' runners: one port (:class:`~kubetide.clock.port.Clock`: ``now``, ``every``,
``at``, ``cancel``) and its two implementations over one event heap.

- :mod:`~kubetide.clock.heap`: the heap of timed callbacks, ordered by ``(time, priority, sequence)``,
  and periodic processes whose times are multiplied, never summed.
- :mod:`~kubetide.clock.virtual`: :class:`VirtualClock`, the simulator's: time jumps from one event to
  the next, so an idle simulated day costs nothing.
- :mod:`~kubetide.clock.realtime`: :class:`RealTimeClock`, live mode's: the same heap waiting on the wall
  clock and on wake-ups from other threads (leader election, a signal).
- :mod:`~kubetide.clock.gated`: :class:`GatedClock`, a clock whose callbacks pass through a wrapper (live
  mode's: act only as the leader, on synced caches).

It imports nothing of kubetide: the runners (:mod:`kubetide.runners`) schedule on the port, the wings
choose the implementation. The decision cores never import it (they read no clock: ``now`` is passed).
"""

from kubetide.clock.gated import GatedClock
from kubetide.clock.heap import Callback, Event, Process, SchedulingError
from kubetide.clock.port import Clock, Handle
from kubetide.clock.realtime import RealTimeClock
from kubetide.clock.virtual import VirtualClock

__all__ = [
    "Callback",
    "Clock",
    "Event",
    "GatedClock",
    "Handle",
    "Process",
    "RealTimeClock",
    "SchedulingError",
    "VirtualClock",
]
