"""The one rule every guarded write follows: made, refused (this replica may not act, or it is a
shadow), or, in a dry run, only said (logged and counted)."""

from __future__ import annotations

import logging
from collections.abc import Callable

from kubetide.kube.metrics import DRY_RUN_ACTIONS, SHADOW_WRITES_REFUSED

__all__ = ["WriteGate"]

log = logging.getLogger("kubetide.dry-run")


class WriteGate:
    """One component's gate: ``may_act`` is the leader election's latest view (and no stop asked).
    ``shadow``: every write is refused, always (``--shadow``; its connection refuses them too,
    :mod:`kubetide.live.guard.readonly`)."""

    def __init__(
        self, component: str, may_act: Callable[[], bool], *, dry_run: bool = False, shadow: bool = False
    ) -> None:
        self.component = component
        self.may_act = may_act
        self.dry_run = dry_run
        self.shadow = shadow

    def check_leading(self, refused: Callable[[], Exception]) -> None:
        """Raise ``refused()`` unless this replica may act now (a shadow never may)."""
        if self.shadow:
            SHADOW_WRITES_REFUSED.labels(component=self.component).inc()
            log.error("shadow: a port was asked to write; refused")
            raise refused()
        if not self.may_act():
            raise refused()

    def admit(
        self, action: str, what: str, refused: Callable[[], Exception], *, quiet: bool = False, **fields: str
    ) -> bool:
        """Whether to make the write. Raises ``refused()`` unless this replica may act. In a dry run the
        write is logged (``dry run: would <what>``, at debug level when ``quiet``: writes every loop
        makes) and counted under ``action``, and the answer is False: the port reports it done."""
        self.check_leading(refused)
        if not self.dry_run:
            return True
        DRY_RUN_ACTIONS.labels(component=self.component, action=action).inc()
        level = logging.DEBUG if quiet else logging.INFO
        log.log(level, "dry run: would %s", what, extra={"action": action, **fields})
        return False
