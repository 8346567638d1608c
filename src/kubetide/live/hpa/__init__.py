"""The live HPA's ports: metrics from the metrics APIs or straight from Prometheus, scale targets
through the scale subresource, and the HPAs to reconcile (kubetide's CRD or the standard objects).

Each module is one adapter; the controller (``kubetide.hpa``) sees only its ports. Wiring::

    api = KubeApi(Rest(make_http_client(kubeconfig)))                # api.py
    targets = ApiScaleTargets(api, pod_store)                        # scale.py (ScaleTargetPort)
    metrics = ApiMetricsSource(api)                                  # metrics_api.py (MetricsSource)
    # or, with --prometheus-url [--prometheus-rules FILE]:
    metrics = PrometheusMetricsSource(                               # prometheus/source.py
        PrometheusClient(url), targets.list_pods, load_rules(path) if path else None, window_s=60.0
    )
    hpas = ApiHPAObjects(api, standard=standard_hpas)                # hpas.py
    listing = hpas.list_hpas()   # .entries, .problems (Event on each), .conflicts (Event on both)
    hpas.write_status(entry.hpa.key, status_dict)

``pod_store`` is any ``pods.PodStore`` (the watch cache); ``pods.ListedPods(api)`` lists pods per
namespace until ``refresh()``, for ``--once``.
"""
