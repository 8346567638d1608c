"""The scale target's selector, checked as ``validateAndParseSelector`` does: present, parsable, and not
shared with another HPA (pods selected by two HPAs make both refuse to scale: ``AmbiguousSelector``)."""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache

from kubetide.hpa.conditions import EventReason
from kubetide.hpa.ports import ScaleTargetPort
from kubetide.model.errors import ManifestError
from kubetide.model.pod import Pod
from kubetide.model.selectors import LabelSelector, parse_selector_string


class SelectorProblem(Exception):
    def __init__(
        self, event_reason: str, event_message: str, condition_reason: str, condition_message: str
    ) -> None:
        super().__init__(event_message)
        self.event_reason = event_reason
        self.event_message = event_message
        self.condition_reason = condition_reason
        self.condition_message = condition_message


@lru_cache(maxsize=4096)
def _parse(text: str) -> LabelSelector:
    return parse_selector_string(text)


class SelectorRegistry:
    """Which HPA selects which pods, per namespace. An HPA is known from registration on; its selector
    once a sync has read it (until then it selects nothing, as upstream's ``labels.Nothing()``)."""

    def __init__(self) -> None:
        self._by_namespace: dict[str, dict[str, LabelSelector | None]] = {}

    def register(self, key: str, namespace: str) -> None:
        self._by_namespace.setdefault(namespace, {}).setdefault(key, None)

    def remove(self, key: str) -> None:
        for selectors in self._by_namespace.values():
            selectors.pop(key, None)

    def validate(self, key: str, namespace: str, text: str, targets: ScaleTargetPort) -> LabelSelector:
        if text == "":
            raise SelectorProblem(
                EventReason.SELECTOR_REQUIRED,
                "selector is required",
                "InvalidSelector",
                "the HPA target's scale is missing a selector",
            )
        try:
            selector = _parse(text)
        except ManifestError as exc:
            message = f"couldn't convert selector into a corresponding internal selector object: {exc}"
            raise SelectorProblem(EventReason.INVALID_SELECTOR, message, "InvalidSelector", message) from None
        selectors = self._by_namespace.setdefault(namespace, {})
        selectors[key] = selector
        if len(selectors) > 1:
            self._check_ambiguity(text, selectors, targets.list_pods(namespace, selector))
        return selector

    @staticmethod
    def _check_ambiguity(text: str, selectors: dict[str, LabelSelector | None], pods: Sequence[Pod]) -> None:
        # Distinct label sets are few (one per pod template); match those, not every pod.
        label_sets = {tuple(sorted(p.labels.items())) for p in pods}
        owners = sorted(
            other
            for other, sel in selectors.items()
            if sel is not None and any(sel.matches(dict(labels)) for labels in label_sets)
        )
        if len(owners) > 1:
            message = f"pods by selector {text} are controlled by multiple HPAs: {owners}"
            raise SelectorProblem(EventReason.AMBIGUOUS_SELECTOR, message, "AmbiguousSelector", message)
