"""``pod_requests`` (with its shortcut for pods without init containers) against upstream's
``PodRequests`` written out plainly: max(sum of containers + sidecars, init peak) + overhead."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from kubetide.model.pod import Container, Pod, pod_requests
from kubetide.model.resources import Resources

_vectors = st.dictionaries(
    st.sampled_from(["cpu", "memory", "nvidia.com/gpu"]), st.integers(0, 5000), max_size=3
)


def _plain(
    containers: list[dict[str, int]], inits: list[tuple[dict[str, int], bool]], overhead: dict[str, int]
) -> dict[str, int]:
    names = {"cpu", "memory", "nvidia.com/gpu"}
    total = {n: sum(c.get(n, 0) for c in containers) for n in names}
    sidecars = {n: 0 for n in names}
    peak = {n: 0 for n in names}
    for req, restartable in inits:
        if restartable:
            total = {n: total[n] + req.get(n, 0) for n in names}
            sidecars = {n: sidecars[n] + req.get(n, 0) for n in names}
            use = dict(sidecars)
        else:
            use = {n: req.get(n, 0) + sidecars[n] for n in names}
        peak = {n: max(peak[n], use[n]) for n in names}
    result = {n: max(total[n], peak[n]) + overhead.get(n, 0) for n in names}
    return {n: v for n, v in result.items() if v}


@given(
    containers=st.lists(_vectors, max_size=3),
    inits=st.lists(st.tuples(_vectors, st.booleans()), max_size=2),
    overhead=_vectors,
)
def test_matches_the_plain_formula(
    containers: list[dict[str, int]], inits: list[tuple[dict[str, int], bool]], overhead: dict[str, int]
) -> None:
    pod = Pod(
        "p",
        containers=tuple(Container(f"c{i}", Resources(r)) for i, r in enumerate(containers)),
        init_containers=tuple(
            Container(f"i{i}", Resources(r), restartable=s) for i, (r, s) in enumerate(inits)
        ),
        overhead=Resources(overhead),
    )
    assert dict(pod_requests(pod)) == _plain(containers, inits, overhead)
    assert dict(pod.requests) == _plain(containers, inits, overhead)
    assert dict(pod_requests(pod, overhead=False)) == _plain(containers, inits, {})
