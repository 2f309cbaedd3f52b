"""Crash: kill ``personalq repo import`` with SIGKILL at random moments and check the repository at the next start.

Each run copies a home that already holds part of the Civitai repository, starts an import of every Civitai
model version into it, kills the process after a random delay, and then starts PersonalQ on that home the way
the app does. Half the delays are drawn from the whole length of an import, half from its last 30%, where the
rows are written and committed and Chroma is written after the commit (parsing and embedding take the rest).

What must hold every time: SQLite passes ``PRAGMA integrity_check``; the import landed whole or not at all
(the counts of checkpoints and of their search terms are those before the import or those a complete import
leaves); and after start-up Chroma holds exactly one entry per checkpoint, each with the fingerprint of the
checkpoint's current card.

    HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 .venv/bin/python benchmarks/crash_import.py --runs 10
"""

from __future__ import annotations

import argparse
import logging
import os
import random
import shutil
import signal
import sqlite3
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from tqdm import tqdm

from personalq.config import load_settings
from personalq.eval.civitai_cards import write_cards
from personalq.repository.service import Repository
from personalq.runtime import start

log = logging.getLogger("crash_import")
PERSONALQ = str(Path(sys.executable).with_name("personalq"))
CIVITAI = Path(__file__).resolve().parent.parent.parent / "shared" / "data" / "civitai-models-2023-07.jsonl"


def _counts(home: Path) -> tuple[int, int]:
    """(checkpoints, search terms) in the home's database."""
    with sqlite3.connect(home / "personalq.sqlite") as raw:
        return tuple(
            raw.execute(f"SELECT count(*) FROM {table}").fetchone()[0] for table in ("checkpoints", "checkpoint_terms")
        )


@dataclass
class Run:
    killed_after_s: float
    rows_before: int
    rows_after: int
    repaired: str
    integrity: str
    whole: bool
    consistent: bool

    @property
    def row(self) -> str:
        landed = "all" if self.rows_after > self.rows_before else "none"
        return (
            f"| {self.killed_after_s:.1f} | {landed} ({self.rows_after:,} rows) | {self.integrity} | "
            f"{self.repaired} | "
            f"{'yes' if self.whole else 'NO'} | {'yes' if self.consistent else 'NO'} |"
        )


def _import(home: Path, cards: Path) -> subprocess.Popen:
    return subprocess.Popen(
        [PERSONALQ, "repo", "import", str(cards), "--home", str(home)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )


def check(home: Path, before: tuple[int, int], full: tuple[int, int], killed_after_s: float) -> Run:
    """Start PersonalQ on ``home`` as the app would, then compare SQLite and Chroma."""
    with sqlite3.connect(home / "personalq.sqlite") as raw:
        integrity = raw.execute("PRAGMA integrity_check").fetchone()[0]
    counts = _counts(home)
    runtime = start(load_settings(home=home), import_demo=False)  # the index check every start runs
    report = runtime.repository.sync_index()  # what start left undone would show here
    repository: Repository = runtime.repository
    rows = repository.count()
    wanted = {doc.id: doc.fingerprint for doc in repository.documents()}
    consistent = repository.dense.fingerprints() == wanted and not report.changed
    repaired = (
        (
            f"index patched: +{runtime.index_sync.added} -{runtime.index_sync.removed}"
            f"{' (rebuilt)' if runtime.index_sync.rebuilt else ''}"
        )
        if runtime.index_sync.changed
        else "nothing"
    )
    repository.dense.close()
    return Run(killed_after_s, before[0], rows, repaired, integrity, counts in (before, full), consistent)


def main(argv: list[str] | None = None) -> list[Run]:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--preloaded", type=int, default=500, help="cards in the home before the killed import")
    parser.add_argument("--civitai", type=Path, default=CIVITAI)
    parser.add_argument("--out", type=Path, default=Path(__file__).resolve().parent / "results" / "crash-import.md")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.WARNING, format="%(asctime)s %(name)s %(message)s")

    work = Path(tempfile.mkdtemp(prefix="personalq-crash-"))
    cards, first = work / "cards", work / "first"
    total = write_cards(args.civitai, cards)
    first.mkdir()
    for path in sorted(cards.iterdir())[: args.preloaded]:
        shutil.copy(path, first / path.name)
    base = work / "base"
    subprocess.run(
        [PERSONALQ, "repo", "import", str(first), "--home", str(base)], check=True, stdout=subprocess.DEVNULL
    )
    before = _counts(base)

    started = time.perf_counter()  # one import to its end: the window the kills are drawn from
    subprocess.run(
        [PERSONALQ, "repo", "import", str(cards), "--home", str(work / "timing")],
        check=True,
        stdout=subprocess.DEVNULL,
    )
    full_s = time.perf_counter() - started
    full = _counts(work / "timing")
    shutil.rmtree(work / "timing")

    rng = random.Random(args.seed)
    runs = []
    for i in tqdm(range(args.runs), desc="killed imports", unit=" runs"):
        home = work / f"run-{i}"
        shutil.copytree(base, home)
        delay = rng.uniform(0.5, full_s) if i % 2 == 0 else rng.uniform(0.7 * full_s, full_s)
        process = _import(home, cards)
        time.sleep(delay)
        if process.poll() is None:
            os.kill(process.pid, signal.SIGKILL)
        process.wait()
        runs.append(check(home, before, full, delay))
        shutil.rmtree(home)

    lines = [
        f"# Crash: `personalq repo import` killed with SIGKILL, {args.runs} runs",
        "",
        f"`python benchmarks/crash_import.py --runs {args.runs} --seed {args.seed}`: a home holding {before[0]:,} "
        f"Civitai versions imports all {total:,} (unkilled: {full_s:.1f} s; kills at random moments, every second "
        "one in the last 30% of that window); after each kill PersonalQ starts on the home as the app does.",
        "",
        "| killed after s | import landed | SQLite integrity | at the next start | whole | SQLite = Chroma |",
        "|---|---|---|---|---|---|",
        *(r.row for r in runs),
        "",
        f"{sum(r.whole and r.consistent and r.integrity == 'ok' for r in runs)} of {len(runs)} runs consistent.",
    ]
    print("\n".join(lines))
    args.out.write_text("\n".join(lines) + "\n")
    shutil.rmtree(work, ignore_errors=True)
    return runs


if __name__ == "__main__":
    main()
