"""Abuse: can one visitor starve the others?

Starts ``personalq serve`` on loopback (a fresh home with the bundled demo zoo, an admin token set, so visitors are
anonymous as on a public server), then runs two phases over the same app:

1. **without the abuser**: 5 ordinary visitors (``gradio_client``, one session each) send 3 small chat requests
   each (a 64x64 image in 4 steps), one after another;
2. **with the abuser**: the same, while one abusive session tries to keep 70 of the largest requests a visitor may
   send (20 steps at 64x64, the demo base's native size) in the queue at once: raw queue joins, sent again a second
   after a refusal (``--retry``; 0.05 floods the server with joins) or at once when one is done, and it listens to
   its results (so its jobs are not dropped as a gone client's).

It reports the ordinary visitors' chat latency p50 / p95 in both phases (target: p95 with the abuser <= 2x without),
requests refused per visitor, and errors for ordinary visitors (target: 0). Traffic goes to 127.0.0.1 only; every
count and wait is bounded.

    HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 .venv/bin/python benchmarks/abuse.py --out benchmarks/results/abuse.md

The server runs with this interpreter and this ``PYTHONPATH`` (point it at another checkout to measure that one).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

import httpx
import numpy as np
from app_process import free_port, wait_for

REQUEST = "the latest teddy bear"
SMALL = ("FP32", True, 2048, 0, 4, 5.0, "64 x 64", False)  # precision ... float K/V, in /chat's order
LARGEST = ("FP32", True, 2048, 0, 20, 5.0, "64 x 64", False)  # an anonymous visitor's allowance on the demo base


@dataclass
class Phase:
    latencies: list[float] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    refused: Counter = field(default_factory=Counter)  # visitor -> requests refused
    abuser_accepted: int = 0
    abuser_completed: int = 0
    seconds: float = 0.0
    lock: threading.Lock = field(default_factory=threading.Lock)

    def add(self, other: "Phase") -> None:
        self.latencies += other.latencies
        self.errors += other.errors
        self.refused.update(other.refused)
        self.abuser_accepted += other.abuser_accepted
        self.abuser_completed += other.abuser_completed
        self.seconds += other.seconds

    def percentile(self, q: float) -> float:
        return float(np.percentile(self.latencies, q)) if self.latencies else float("nan")


def visitor(url: str, name: str, requests: int, phase: Phase) -> None:
    from gradio_client import Client

    try:
        client = Client(url, verbose=False)
    except Exception as error:  # noqa: BLE001 - every failure is a finding
        with phase.lock:
            phase.errors.append(f"{name} could not connect: {error!r}")
        return
    for _ in range(requests):
        started = time.perf_counter()
        try:
            _history, _image, stats, _box = client.predict(REQUEST, [], *SMALL, api_name="/chat")
            if "image ready" not in str(stats):
                raise RuntimeError(f"no image: {stats}")
        except Exception as error:  # noqa: BLE001
            with phase.lock:
                phase.errors.append(f"{name}: {str(error)[:200]}")
                if "fair share" in str(error) or "Queue is full" in str(error):
                    phase.refused[name] += 1
            continue
        with phase.lock:
            phase.latencies.append(time.perf_counter() - started)
        time.sleep(0.3)


class Abuser:
    """One session keeping up to ``places`` of the largest requests in the queue until stopped (at most
    ``max_joins`` join attempts in all)."""

    def __init__(self, url: str, phase: Phase, retry_s: float, places: int = 70, max_joins: int = 5000):
        self.url, self.phase, self.places, self.max_joins = url, phase, places, max_joins
        self.retry_s = retry_s
        self.session = "abuser-session"
        self.in_flight = 0
        self.stop = threading.Event()
        self.lock = threading.Lock()
        config = httpx.get(f"{url}config", timeout=30).json()
        self.fn_index = next(d["id"] for d in config["dependencies"] if d.get("api_name") == "chat")

    def run(self) -> list[threading.Thread]:
        threads = [
            threading.Thread(target=self._join, daemon=True),
            threading.Thread(target=self._listen, daemon=True),
        ]
        for thread in threads:
            thread.start()
        return threads

    def _join(self) -> None:
        data = [REQUEST, [], None, *LARGEST, "", None, False]  # ... no negative prompt, no gallery id, not an admin
        body = {"data": data, "fn_index": self.fn_index, "session_hash": self.session}
        with httpx.Client(timeout=30) as http:
            for _ in range(self.max_joins):
                if self.stop.is_set():
                    return
                with self.lock:
                    full = self.in_flight >= self.places
                if full:
                    time.sleep(0.05)
                    continue
                answer = http.post(f"{self.url}gradio_api/queue/join", json=body)
                with self.lock, self.phase.lock:
                    if answer.status_code == 200:
                        self.in_flight += 1
                        self.phase.abuser_accepted += 1
                    else:
                        self.phase.refused["abuser"] += 1
                if answer.status_code != 200:
                    time.sleep(self.retry_s)

    def _listen(self) -> None:
        url = f"{self.url}gradio_api/queue/data?session_hash={self.session}"
        while not self.stop.is_set():
            try:
                with httpx.stream("GET", url, timeout=httpx.Timeout(30, read=60)) as stream:
                    for line in stream.iter_lines():
                        if self.stop.is_set():
                            return
                        message = json.loads(line[5:]) if line.startswith("data:") else {}
                        if message.get("msg") == "process_completed":
                            with self.lock, self.phase.lock:
                                self.in_flight -= 1
                                self.phase.abuser_completed += 1
            except httpx.HTTPError:
                pass
            time.sleep(0.05)


def run_phase(url: str, visitors: int, requests: int, abused: bool, timeout_s: float, retry_s: float = 0.05) -> Phase:
    phase = Phase()
    abuser = Abuser(url, phase, retry_s) if abused else None
    if abuser:
        abuser.run()
        time.sleep(1.0)  # the abuser has queued what it can before anyone else arrives
    started = time.perf_counter()
    threads = [
        threading.Thread(target=visitor, args=(url, f"visitor {i + 1}", requests, phase), daemon=True)
        for i in range(visitors)
    ]
    for thread in threads:
        thread.start()
        time.sleep(0.2)
    for thread in threads:
        thread.join(timeout=max(1.0, timeout_s - (time.perf_counter() - started)))
    phase.seconds = time.perf_counter() - started
    if any(thread.is_alive() for thread in threads):
        phase.errors.append(f"visitors still waiting after {timeout_s:.0f} s")
    if abuser:
        abuser.stop.set()  # its stream closes, and Gradio drops what it still had queued
        time.sleep(2.0)
    return phase


def _most(phase: Phase) -> float:
    return max(phase.latencies, default=float("nan"))


def report(without: Phase, with_: Phase, args: argparse.Namespace) -> str:
    visitors, requests, rounds, label = args.visitors, args.requests, args.rounds, args.label
    ratio = with_.percentile(95) / without.percentile(95)
    if ratio == ratio:
        verdict = f"{ratio:.2f}x** (target <= 2x: {'met' if ratio <= 2 else 'missed'})"
    else:
        verdict = "no request answered** (target <= 2x: missed)"  # nan: no latencies at all
    lines = [
        "# Abuse: one visitor against five",
        "",
        f"`python benchmarks/abuse.py` ({label}): the app on loopback with an admin token, {visitors} ordinary "
        f"visitors x {requests} small requests (64x64, 4 steps), then the same while one session tries to keep 70 "
        "of the largest anonymous requests (64x64, 20 steps) queued (joining again "
        f"{args.retry:g} s after each refusal); "
        f"both phases {rounds} times, alternating, figures pooled; one generation at a time, "
        f"{os.cpu_count()} CPU cores shared by the app, the visitors and the abuser.",
        "",
        "| ordinary visitors' chat | without the abuser | with the abuser |",
        "|---|---|---|",
        f"| requests answered | {len(without.latencies)} | {len(with_.latencies)} |",
        f"| p50 s | {without.percentile(50):.2f} | {with_.percentile(50):.2f} |",
        f"| p95 s | {without.percentile(95):.2f} | {with_.percentile(95):.2f} |",
        f"| max s | {_most(without):.2f} | {_most(with_):.2f} |",
        f"| errors | {len(without.errors)} | {len(with_.errors)} |",
        f"| phase wall time s | {without.seconds:.1f} | {with_.seconds:.1f} |",
        "",
        f"p95 with the abuser / without: **{verdict}; errors for ordinary visitors: **{len(with_.errors)}** "
        "(target 0).",
        "",
        "| visitor | requests refused (with the abuser, all rounds) |",
        "|---|---|",
        f"| abuser | {with_.refused['abuser']:,} joins refused; {with_.abuser_accepted} accepted, "
        f"{with_.abuser_completed} drawn |",
    ]
    lines += [f"| visitor {i + 1} | {with_.refused[f'visitor {i + 1}']} |" for i in range(visitors)]
    errors = (without.errors + with_.errors)[:10]
    if errors:
        lines += ["", "First errors:", "", *[f"- {e}" for e in errors]]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--visitors", type=int, default=5)
    parser.add_argument("--requests", type=int, default=3)
    parser.add_argument("--rounds", type=int, default=2, help="each phase this many times, alternating")
    parser.add_argument(
        "--retry", type=float, default=1.0, help="seconds the abuser waits after a refusal (0.05: a flood of joins)"
    )
    parser.add_argument("--timeout", type=float, default=300.0, help="seconds a phase may take at most")
    parser.add_argument("--label", default="this checkout", help="what the run measured, for the report")
    parser.add_argument("--out", type=Path, help="write the report here (Markdown)")
    args = parser.parse_args(argv)
    work = Path(tempfile.mkdtemp(prefix="personalq-abuse-"))
    port = free_port()
    url = f"http://127.0.0.1:{port}/"
    env = {**os.environ, "PERSONALQ_ADMIN_TOKEN": "abuse-bench-admin", "PERSONALQ_WARMUP_CHECKPOINTS": "0"}
    app = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "from personalq.cli import main; main()",
            "serve",
            "--home",
            str(work / "home"),
            "--host",
            "127.0.0.1",
            "--port",
            str(port),
        ],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=(work / "app.log").open("w"),
    )
    try:
        wait_for(url, app)
        run_phase(url, args.visitors, 1, abused=False, timeout_s=args.timeout)  # warm: loads the base, Check-in
        without, with_ = Phase(), Phase()
        for _ in range(args.rounds):  # alternating, so a shared machine's slow minute falls on both
            without.add(run_phase(url, args.visitors, args.requests, abused=False, timeout_s=args.timeout))
            with_.add(run_phase(url, args.visitors, args.requests, True, args.timeout, args.retry))
    finally:
        app.terminate()
        app.wait(timeout=60)
    text = report(without, with_, args)
    print(text)
    if args.out:
        args.out.write_text(text)


if __name__ == "__main__":
    main()
