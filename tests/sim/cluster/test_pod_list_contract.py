"""The simulated ``ScaleTargetPort.list_pods`` keeps the port's cache contract: the same sequence object
while the matching pods are unchanged, a new one whenever one of them changed."""

from __future__ import annotations

from kubetide.sim.hpa import SimScaleTargets

from .builders import add_ready_node, cluster, deployment, node


def test_the_simulated_pod_lister_keeps_the_contract() -> None:
    engine, c, _ = cluster()
    add_ready_node(c, node("n1", cpu=8000))
    c.apply(deployment("web", 2), 0.0)
    targets = SimScaleTargets(c)
    workload = c.workloads["Deployment/default/web"]
    selector = workload.selector
    engine.run(120.0)
    first = targets.list_pods("default", selector)
    assert len(first) == 2 and all(p.ready for p in first)
    assert targets.list_pods("default", selector) is first  # nothing changed: the same object
    engine.run(240.0)
    assert targets.list_pods("default", selector) is first  # time passing changes no pod
    c.scale(workload.key, 3, engine.now)
    grown = targets.list_pods("default", selector)
    assert grown is not first and len(grown) == 3
    engine.run(400.0)
    ready = targets.list_pods("default", selector)
    assert ready is not grown  # the new pod turned Running and Ready: a changed pod, a new list
    assert all(p.ready for p in ready)
    assert targets.list_pods("default", selector) is ready
