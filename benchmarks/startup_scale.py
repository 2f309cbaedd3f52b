"""Start-up on a large repository: how long until the app answers, and until Check-in does.

Run it on a home that already holds many checkpoints (``personalq bench latency`` builds 100,000 synthetic cards;
``--build N`` writes and imports N here first). It measures, side by side on the same home:

1. the app process (``personalq serve``) from launch until its page answers, and
2. the library path the app takes (settings -> repository -> index check -> Check-in) until Check-in's first
   answer, with the card index built at start-up as the app builds it in the background; then Check-in's p50 / p95
   over the Repo-Prompts requests.

Nothing reads a weights file at start-up: cards come from the database, and the index from them.

    python benchmarks/startup_scale.py --home /path/to/home [--requests 100]
"""

from __future__ import annotations

import argparse
import datetime as dt
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from app_process import free_port, wait_for  # noqa: E402


def page_seconds(home: Path) -> float:
    """Launch ``personalq serve`` on ``home``; seconds until its page answers."""
    port = free_port()
    env = {**os.environ, "PERSONALQ_WARMUP_CHECKPOINTS": "0"}
    started = time.perf_counter()
    with tempfile.TemporaryFile() as log:
        app = subprocess.Popen(
            [sys.executable, "-c", "from personalq.cli import main; main()", "serve", "--home", str(home)]
            + ["--host", "127.0.0.1", "--port", str(port)],
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=log,
        )
        try:
            wait_for(f"http://127.0.0.1:{port}/", app, timeout_s=900)
            return time.perf_counter() - started
        finally:
            app.terminate()
            app.wait(timeout=60)


def library_seconds(home: Path, requests: int) -> dict[str, float]:
    """Seconds from settings to Check-in's first answer, and its latency afterwards."""
    from personalq.checkin.backends import make_checkin
    from personalq.config import load_settings
    from personalq.eval.latency_bench import generate
    from personalq.runtime import start

    _, instances = generate(0)
    asked = [(i.query, dt.datetime.fromisoformat(i.now)) for i in instances[: requests + 1]]
    started = time.perf_counter()
    runtime = start(load_settings(home=home), import_demo=False)
    opened = time.perf_counter() - started
    checkin = make_checkin(runtime.settings, runtime.repository)
    checkin.cache.prepare()
    indexed = time.perf_counter() - started
    checkin.ask(*asked[0])
    first = time.perf_counter() - started
    latencies = []
    for query, now in asked[1:]:
        began = time.perf_counter()
        checkin.ask(query, now)
        latencies.append((time.perf_counter() - began) * 1000)
    return {
        "checkpoints": runtime.repository.count(),
        "repository open (s)": opened,
        "card index built (s)": indexed,
        "first Check-in answer (s)": first,
        "Check-in p50 (ms)": float(np.percentile(latencies, 50)),
        "Check-in p95 (ms)": float(np.percentile(latencies, 95)),
    }


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--home", type=Path, required=True, help="a PersonalQ home with the checkpoints imported")
    parser.add_argument("--requests", type=int, default=100)
    args = parser.parse_args(argv)
    rows = {"app page answers (s)": page_seconds(args.home), **library_seconds(args.home, args.requests)}
    print("| measure | value |\n| --- | --- |")
    for name, value in rows.items():
        print(f"| {name} | {value:,.0f} |" if name == "checkpoints" else f"| {name} | {value:.1f} |")


if __name__ == "__main__":
    main()
