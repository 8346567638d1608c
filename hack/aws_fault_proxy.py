"""moto's server and the tests' fault proxy in front of it, on their own: an AWS endpoint for trying the
aws provider by hand (docs/live.md, "Against moto").

    .venv/bin/python hack/aws_fault_proxy.py [--port 5000] [--moto-port 0]

Point kubetide at the printed endpoint (``--aws-endpoint-url``); inject faults over HTTP on the same port
(``/_proxy/...``, see tests/live/providers/aws/awsproxy.py), e.g. a stockout reported as a failed activity:

    curl -s localhost:5000/_proxy/stockout -d '{"group": "spot-demo"}'
    curl -s localhost:5000/_proxy/activity -d '{"group": "spot-demo", "status": "Failed",
         "message": "We currently do not have sufficient m5.large capacity ..."}'

Runs until SIGINT or SIGTERM. Needs the dev extra (moto[server]).
"""

from __future__ import annotations

import argparse
import signal
import sys
import threading
from pathlib import Path
from types import FrameType

# The proxy is the tests' module (tests/live/providers/aws/awsproxy.py), not part of the installed package.
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from moto.server import ThreadedMotoServer

from live.providers.aws.awsproxy import AwsProxy


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, default=5000, help="the proxy's port: kubetide's endpoint")
    parser.add_argument("--moto-port", type=int, default=0, help="moto's own port (default: a free one)")
    args = parser.parse_args(argv)
    moto = ThreadedMotoServer(ip_address="127.0.0.1", port=args.moto_port, verbose=False)
    moto.start()
    try:
        proxy = AwsProxy(moto.get_host_and_port(), port=args.port)
    except OSError as exc:
        moto.stop()
        print(
            f"aws_fault_proxy: cannot listen on 127.0.0.1:{args.port}: {exc.strerror or exc}", file=sys.stderr
        )
        return 2
    stop = threading.Event()

    def on_signal(_signum: int, _frame: FrameType | None) -> None:
        stop.set()

    signal.signal(signal.SIGINT, on_signal)
    signal.signal(signal.SIGTERM, on_signal)
    host, port = moto.get_host_and_port()
    print(f"AWS endpoint (fault proxy): {proxy.url}   moto itself: http://{host}:{port}", flush=True)
    print(f"faults: POST {proxy.url}/_proxy/{{stockout,activity,throttle,garbage,price,reset}}", flush=True)
    stop.wait()
    proxy.close()
    moto.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
