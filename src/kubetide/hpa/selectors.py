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
        self._version = 0  # bumped whenever any selector is added, changed or removed
        # Per HPA: the verdict for (pod list object, registry version), reused while neither changes.
        self._verdicts: dict[str, tuple[Sequence[Pod], int, SelectorProblem | None]] = {}
        self._texts: dict[str, str] = {}  # per HPA: the selector text its last good validate read
        # Whether a selector matches a label set, by (selector object, sorted labels): a pod list
        # that changed is checked against every HPA's selector of its namespace (all 200 of the
        # benchmark's, after every rescale), and both sides rarely change.
        self._matched: dict[tuple[int, tuple[tuple[str, str], ...]], tuple[LabelSelector, bool]] = {}

    def register(self, key: str, namespace: str) -> None:
        selectors = self._by_namespace.setdefault(namespace, {})
        if key not in selectors:
            selectors[key] = None
            self._version += 1

    def remove(self, key: str) -> None:
        for selectors in self._by_namespace.values():
            if selectors.pop(key, None) is not None:
                self._version += 1
        self._verdicts.pop(key, None)
        self._texts.pop(key, None)

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
        if selectors.get(key) != selector:
            selectors[key] = selector
            self._version += 1
        if len(selectors) > 1:
            pods = targets.list_pods(namespace, selector)
            cached = self._verdicts.get(key)
            if cached is not None and cached[0] is pods and cached[1] == self._version:
                problem = cached[2]
            else:
                problem = self._ambiguity(text, selectors, pods)
                self._verdicts[key] = (pods, self._version, problem)
            if problem is not None:
                raise problem
        self._texts[key] = text
        return selector

    def unchanged(
        self, key: str, namespace: str, text: str, targets: ScaleTargetPort
    ) -> tuple[LabelSelector, Sequence[Pod] | None] | None:
        """What :meth:`validate` would return for ``text`` when it would change nothing: the selector
        (and the pods it listed for the ambiguity check, if it listed any); None when validate must run
        (a new or changed selector, a registry changed since the verdict, a problem). For the quiet lane."""
        if self._texts.get(key) != text:
            return None
        selectors = self._by_namespace.get(namespace)
        selector = selectors.get(key) if selectors is not None else None
        if selector is None or selectors is None:
            return None
        if len(selectors) == 1:
            return selector, None
        pods = targets.list_pods(namespace, selector)
        cached = self._verdicts.get(key)
        if cached is None or cached[0] is not pods or cached[1] != self._version or cached[2] is not None:
            return None
        return selector, pods

    def stamp(self, key: str) -> tuple[int, str | None, object]:
        """Equal between two calls only while nothing :meth:`unchanged` reads for ``key`` changed: the
        registry's version, the HPA's selector text and its verdict object (the quiet lane's plan)."""
        return self._version, self._texts.get(key), self._verdicts.get(key)

    def _ambiguity(
        self, text: str, selectors: dict[str, LabelSelector | None], pods: Sequence[Pod]
    ) -> SelectorProblem | None:
        # Distinct label sets are few (one per pod template); match those, not every pod.
        label_sets = {tuple(sorted(p.labels.items())) for p in pods}
        owners = sorted(
            other
            for other, sel in selectors.items()
            if sel is not None and any(self._matches(sel, labels) for labels in label_sets)
        )
        if len(owners) > 1:
            message = f"pods by selector {text} are controlled by multiple HPAs: {owners}"
            return SelectorProblem(EventReason.AMBIGUOUS_SELECTOR, message, "AmbiguousSelector", message)
        return None

    def _matches(self, selector: LabelSelector, labels: tuple[tuple[str, str], ...]) -> bool:
        key = (id(selector), labels)  # the entry holds the selector: its id names no other meanwhile
        known = self._matched.get(key)
        if known is not None:
            return known[1]
        if len(self._matched) > 65536:  # selectors or pod labels that keep changing: start over
            self._matched.clear()
        result = selector.matches(dict(labels))
        self._matched[key] = (selector, result)
        return result
