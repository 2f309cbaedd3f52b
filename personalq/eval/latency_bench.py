"""Check-in latency against repository size: the Repo-Prompts repository, then grown with distractor families.

Each size is measured on the same requests (the first ``requests`` Repo-Prompts instances, each with its own
reference date) after one warm-up request, which pays for what a running app builds once per change of the
repository (the BM25 index, the version vocabulary). Accuracy is not reported past 1,000 checkpoints: the
distractors share categories with the ground truth, so the Repo-Prompts answers no longer hold there.
"""

from __future__ import annotations

import datetime as dt
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from tqdm import tqdm

from personalq.checkin.agent import CheckIn
from personalq.config import load_settings
from personalq.eval.repo_prompts import distractor_records, generate, write_cards
from personalq.repository.service import Repository


@dataclass
class LatencyRow:
    checkpoints: int
    import_seconds: float  # for the checkpoints added at this size
    requests: int
    p50_ms: float
    p95_ms: float
    max_ms: float


def table(rows: list[LatencyRow]) -> str:
    lines = [
        "| checkpoints | requests | p50 (ms) | p95 (ms) | max (ms) | import of the added cards |",
        "| --- | --- | --- | --- | --- | --- |",
    ]
    lines += [
        f"| {r.checkpoints:,} | {r.requests} | {r.p50_ms:.1f} | {r.p95_ms:.1f} | {r.max_ms:.1f} | "
        f"{r.import_seconds:.0f} s |"
        for r in rows
    ]
    return "\n".join(lines)


def _timed_requests(checkin: CheckIn, instances: list[dict]) -> list[float]:
    checkin.ask(instances[0]["query"], dt.datetime.fromisoformat(instances[0]["now"]))  # warm-up
    latencies = []
    for instance in instances:
        started = time.perf_counter()
        checkin.ask(instance["query"], dt.datetime.fromisoformat(instance["now"]))
        latencies.append((time.perf_counter() - started) * 1000)
    return latencies


def run(sizes: list[int], requests: int = 200, seed: int = 0, workdir: Path | None = None) -> list[LatencyRow]:
    records, instances = generate(seed)
    asked = [{"query": i.query, "now": i.now} for i in instances[:requests]]
    distractors = distractor_records(max(sizes) - len(records), seed)
    rows: list[LatencyRow] = []
    with tempfile.TemporaryDirectory(dir=workdir) as tmp:
        repository = Repository(load_settings(home=Path(tmp) / "home"))
        checkin = CheckIn(repository)
        present = 0
        for size in tqdm(sorted(sizes), desc="repository sizes", unit=" size"):
            wanted = (records + distractors)[present:size]
            started = time.perf_counter()
            for chunk in range(0, len(wanted), 10_000):  # bounded folders keep one import's memory bounded
                folder = write_cards(wanted[chunk : chunk + 10_000], Path(tmp) / f"cards-{present + chunk}")
                report = repository.import_paths([folder])
                if not report.ok:
                    raise RuntimeError(f"distractor import failed: {report.summary()}")
            import_seconds = time.perf_counter() - started
            present = size
            latencies = _timed_requests(checkin, asked)
            rows.append(
                LatencyRow(
                    size,
                    import_seconds,
                    len(latencies),
                    float(np.percentile(latencies, 50)),
                    float(np.percentile(latencies, 95)),
                    max(latencies),
                )
            )
    return rows
