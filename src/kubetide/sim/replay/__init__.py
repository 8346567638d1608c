"""A recorded day beside its replay: what ``kubetide record`` saw, read for the report and compared.

:mod:`.recording` reads the recorded samples and events a scenario's ``spec.recording`` names (the
recorder in the live wing writes them; the two meet only in the file format, docs/simulator.md
"Record a day and replay it"); :mod:`.fidelity` compares them with a simulation's outputs minute by minute (``kubetide replay
compare``).
"""

from kubetide.sim.replay.fidelity import Fidelity, compare_day, read_simulated
from kubetide.sim.replay.recording import RecordedDay, RecordingError, read_recording

__all__ = ["Fidelity", "RecordedDay", "RecordingError", "compare_day", "read_recording", "read_simulated"]
