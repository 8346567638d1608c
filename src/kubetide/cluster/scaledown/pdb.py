"""How much of each PodDisruptionBudget is left while one loop simulates removals (CA 1.31's
``pdb.basicRemainingPdbTracker``, core/scaledown/pdb/basic.go).

CA sets the tracker from the PDB lister at the start of every loop. Each node the planner finds
removable spends one disruption of every PDB per pod of that node's pods to reschedule that the PDB
covers (``RemovePods``), so with one disruption allowed and two nodes each holding one covered pod,
the first node simulated is unneeded and the second is blocked by its pod (``NotEnoughPdb``). A node
whose pods would take more than a PDB has left (``CanRemovePods``'s ``inParallel`` false) is risky:
it goes after the other drain nodes. The next loop starts again from the PDBs' own allowances.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Sequence

from kubetide.model.pod import Pod
from kubetide.scheduling.drainability import PDB

__all__ = ["PdbCoverage", "RemainingPdbs"]


class PdbCoverage:
    """Which PDBs (by position) cover each pod, kept from one loop to the next while the PDBs'
    namespaces and selectors are the same (their allowances may change); entries of pods not asked
    about in a loop are dropped at the next one."""

    def __init__(self) -> None:
        self._key: tuple[tuple[str, object], ...] | None = None
        self._last: dict[int, tuple[Pod, tuple[int, ...]]] = {}
        self._now: dict[int, tuple[Pod, tuple[int, ...]]] = {}
        self._pdbs: tuple[PDB, ...] = ()

    def start(self, pdbs: Sequence[PDB]) -> None:
        """Begin a loop with ``pdbs``."""
        key = tuple((p.namespace, p.selector) for p in pdbs)
        self._last = self._now if key == self._key else {}
        self._now = {}
        self._key = key
        self._pdbs = tuple(pdbs)

    def of(self, pod: Pod) -> tuple[int, ...]:
        """The positions of the PDBs covering ``pod`` (``MatchingPdbs``)."""
        key = id(pod)
        hit = self._now.get(key)
        if hit is None:
            hit = self._last.get(key)
            if hit is None:
                hit = (pod, tuple(i for i, p in enumerate(self._pdbs) if p.covers(pod)))
            self._now[key] = hit  # holding the pod keeps its id its own
        return hit[1]


class RemainingPdbs:
    """One loop's remaining disruptions per PDB (``basicRemainingPdbTracker``)."""

    def __init__(self, pdbs: Sequence[PDB], coverage: PdbCoverage | None = None) -> None:
        self.pdbs = tuple(pdbs)
        self._left = [p.disruptions_allowed for p in self.pdbs]
        if coverage is None:
            coverage = PdbCoverage()
        coverage.start(self.pdbs)
        self._coverage = coverage
        # PDBs this loop's removals took from at least one disruption left to none: only pods they
        # cover can be judged differently from the PDBs' own allowances.
        self._exhausted: set[int] = set()
        self._remaining: tuple[PDB, ...] | None = self.pdbs

    def __bool__(self) -> bool:
        return bool(self.pdbs)

    @property
    def exhausted(self) -> bool:
        """Whether some PDB's allowance was spent down to none by this loop's removals."""
        return bool(self._exhausted)

    def _counts(self, pods: Iterable[Pod]) -> dict[int, int]:
        counts: dict[int, int] = {}
        of = self._coverage.of
        for pod in pods:
            for i in of(pod):
                counts[i] = counts.get(i, 0) + 1
        return counts

    def in_parallel(self, pods: Iterable[Pod]) -> bool:
        """``CanRemovePods``'s ``inParallel``: no PDB covering these pods has fewer disruptions left
        than it covers of them (nor none left)."""
        left = self._left
        return all(left[i] >= 1 and left[i] >= count for i, count in self._counts(pods).items())

    def remove_pods(self, pods: Iterable[Pod]) -> None:
        """``RemovePods``: each covering PDB loses one disruption per pod (it may go below zero)."""
        for i, count in self._counts(pods).items():
            before = self._left[i]
            self._left[i] = before - count
            if before >= 1 > self._left[i]:
                self._exhausted.add(i)
            self._remaining = None

    def affects(self, pods: Iterable[Pod]) -> bool:
        """Whether a PDB this loop exhausted covers one of ``pods`` (their drain answer may differ
        from the one the PDBs' own allowances give)."""
        exhausted, of = self._exhausted, self._coverage.of
        return bool(exhausted) and any(not exhausted.isdisjoint(of(pod)) for pod in pods)

    def remaining(self) -> tuple[PDB, ...]:
        """The PDBs with the disruptions they have left (``GetPdbs``)."""
        if self._remaining is None:
            self._remaining = tuple(
                p if p.disruptions_allowed == left else dataclasses.replace(p, disruptions_allowed=left)
                for p, left in zip(self.pdbs, self._left, strict=True)
            )
        return self._remaining
