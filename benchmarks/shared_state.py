"""Shared state: the same load on SQLite + a persistent Chroma folder and on PostgreSQL + a Chroma server.

    python benchmarks/shared_state.py [--people 8,16] [--requests 20] [--votes 50]

For each backend: a fresh repository, the 4,166 Civitai model versions of ``../shared/data`` imported, then at each
load ``people`` threads, each with its own Check-in over the shared repository (warmed by one untimed request, as a
running app's is), send ``requests`` requests of the blind development set (``checkin-dev-requests.jsonl``, with
its own "now") all at once; then as many threads each cast ``votes`` votes. Prints Check-in p50 / p95 and votes
per second (also written to ``benchmarks/results/shared-state.md``). PostgreSQL is a throwaway cluster and Chroma a
``chroma run`` server, started the way the tests start them (``tests/servers.py``).
"""

from __future__ import annotations

import argparse
import contextlib
import datetime as dt
import json
import logging
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
import servers  # noqa: E402 (the tests' real-server helpers)

from personalq.checkin.backends import make_checkin  # noqa: E402
from personalq.config import load_settings  # noqa: E402
from personalq.eval.civitai_cards import write_cards  # noqa: E402
from personalq.rating.votes import Vote, VoteStore  # noqa: E402
from personalq.repository.service import Repository  # noqa: E402

log = logging.getLogger("shared_state")
DATA = Path(__file__).resolve().parent.parent.parent / "shared" / "data"
RESULTS = Path(__file__).parent / "results" / "shared-state.md"


@contextlib.contextmanager
def backend(name: str, work: Path):
    """Settings for a fresh repository on ``name``: ``sqlite`` (file and index folder in the home) or ``postgres``
    (a new database on a throwaway cluster, and a Chroma server)."""
    home = work / name
    if name == "sqlite":
        yield load_settings(home=home)
        return
    with servers.postgres_cluster() as postgres, servers.chroma_server(work / "chroma-server") as chroma:
        yield load_settings(home=home, database_url=servers.new_database(postgres), chroma_url=chroma)


def checkin_latencies(settings, repository: Repository, people: int, requests: int) -> list[float]:
    cases = [json.loads(line) for line in (DATA / "checkin-dev-requests.jsonl").read_text().splitlines() if line]
    latencies, lock, ready = [], threading.Lock(), threading.Barrier(people)

    def person(index: int) -> None:
        checkin = make_checkin(settings, repository)
        checkin.ask(cases[index]["query"])  # untimed: loads this Check-in's card cache and sparse index
        ready.wait()  # then everyone at once
        for r in range(requests):
            case = cases[(index * requests + r) % len(cases)]
            now = dt.datetime.fromisoformat(case["now"])
            started = time.perf_counter()
            checkin.ask(case["query"], now)
            with lock:
                latencies.append(time.perf_counter() - started)

    run_all(person, people)
    return latencies


def votes_per_second(repository: Repository, people: int, votes: int, tag: str) -> float:
    store = VoteStore(repository)

    def rater(index: int) -> None:
        for item in range(votes):
            store.add(Vote(f"{tag}-{index}", f"item-{item}", "a request", "checkin", "random", "a", "b", "left"))

    started = time.perf_counter()
    run_all(rater, people)
    return people * votes / (time.perf_counter() - started)


def run_all(work, people: int) -> None:
    threads = [threading.Thread(target=work, args=(i,)) for i in range(people)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--people", default="8,16", help="comma-separated loads")
    parser.add_argument("--requests", type=int, default=20, help="Check-in requests per person")
    parser.add_argument("--votes", type=int, default=50, help="votes per rater")
    args = parser.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s: %(message)s")
    for chatty in ("personalq", "chromadb", "httpx", "alembic"):
        logging.getLogger(chatty).setLevel(logging.WARNING)
    loads = [int(p) for p in args.people.split(",")]
    rows = [
        "| backend | people | Check-in p50 / p95 | votes / s |",
        "|---|---|---|---|",
    ]
    with tempfile.TemporaryDirectory() as work:
        work = Path(work)
        write_cards(DATA / "civitai-models-2023-07.jsonl", work / "cards")
        for name, label in (("sqlite", "SQLite + Chroma folder"), ("postgres", "PostgreSQL + Chroma server")):
            with backend(name, work) as settings:
                repository = Repository(settings)
                started = time.perf_counter()
                report = repository.import_paths([work / "cards"])
                log.info("%s: imported %s in %.0f s", name, report.summary(), time.perf_counter() - started)
                for people in loads:
                    latencies = checkin_latencies(settings, repository, people, args.requests)
                    rate = votes_per_second(repository, people, args.votes, f"{name}-{people}")
                    p50, p95 = (1e3 * float(np.percentile(latencies, q)) for q in (50, 95))
                    rows.append(f"| {label} | {people} | {p50:.0f} / {p95:.0f} ms | {rate:.0f} |")
                    log.info("%s, %d people: p50 %.0f ms, p95 %.0f ms, %.0f votes/s", name, people, p50, p95, rate)
                    log.info("median %.0f ms", 1e3 * statistics.median(latencies))
    text = "\n".join(
        [
            "# Shared state: SQLite + Chroma folder vs PostgreSQL + Chroma server",
            "",
            f"`python benchmarks/shared_state.py --people {args.people} --requests {args.requests} "
            f"--votes {args.votes}` · 4,166 Civitai versions · every person a thread with its own warmed Check-in · "
            "2 cores",
            "",
            *rows,
        ]
    )
    print(text)
    RESULTS.write_text(text + "\n")


if __name__ == "__main__":
    main()
