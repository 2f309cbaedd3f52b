"""Generation under load: one process against Ray Serve with 1 and 2 replicas (model multiplexing).

    python benchmarks/ray_load.py [--people 8,16] [--requests 4] [--checkpoints 12] [--overhead 10]

Simulated people each send ``--requests`` requests one after another (each waits for its image), all people at
once, for the demo zoo's checkpoints with a skewed popularity (Zipf, s = 1.1, over ``--checkpoints`` of them; every
person draws from a seeded generator, so each configuration gets the same requests). Per configuration, side by
side in one run: requests/s, p50/p95 latency of a whole streamed 20-step 64x64 image, and for Ray the share of
requests that reached a replica already holding their variant (the multiplex hit rate) and variant loads per 100
requests. The single process is the embedded default (one engine, one generation at a time, as the app's queue
runs it). Then the ingress overhead at 1 person: the median of ``--overhead`` requests for one warm checkpoint,
in-process against one Ray replica given the same 2 CPUs.

Prints a Markdown report, also written to ``benchmarks/results/ray-load.md``.
"""

from __future__ import annotations

import argparse
import logging
import statistics
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from personalq.config import DEFAULT_ASSETS, load_settings
from personalq.runtime import start
from personalq.serving.engine import Engine

log = logging.getLogger("ray_load")
RESULTS = Path(__file__).parent / "results" / "ray-load.md"


@dataclass
class Outcome:
    latencies: list[float]
    wall: float
    hits: int | None  # requests that found their variant resident (Ray only)
    loads: int | None  # variant loads the replicas made (concurrent misses for one variant share a load)


def zipf_requests(checkpoints: list, people: int, requests: int, seed: int = 0) -> list[list]:
    weights = 1 / np.arange(1, len(checkpoints) + 1) ** 1.1
    weights /= weights.sum()
    rng = np.random.default_rng(seed)
    return [[checkpoints[i] for i in rng.choice(len(checkpoints), requests, p=weights)] for _ in range(people)]


def run_load(engine: Engine, plan: list[list]) -> Outcome:
    """Every person's requests in its own thread, all at once; a person waits for each image before the next. The
    single process runs one generation at a time in arrival order, as the app's queue does."""
    latencies: list[float] = []
    lock = threading.Lock()
    remote = hasattr(engine, "placements")
    queue = None if remote else ThreadPoolExecutor(max_workers=1)  # first come, first served
    before = len(engine.placements) if remote else 0
    loads_before = _loads() if remote else 0

    def image(card) -> list:
        return list(engine.generate(card, f"a photo of {card.canonical_trigger} on a beach"))

    def person(cards: list) -> None:
        for card in cards:
            started = time.perf_counter()
            frames = image(card) if remote else queue.submit(image, card).result()
            assert frames[-1].final
            with lock:
                latencies.append(time.perf_counter() - started)

    threads = [threading.Thread(target=person, args=(cards,)) for cards in plan]
    started = time.perf_counter()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    wall = time.perf_counter() - started
    if queue is not None:
        queue.shutdown()
    if not remote:
        return Outcome(latencies, wall, None, None)
    time.sleep(0.5)  # the replicas' last reports reach the board
    return Outcome(latencies, wall, sum(p.resident for p in engine.placements[before:]), _loads() - loads_before)


def _loads() -> int:
    from personalq.serving.ray_serving import cluster_status

    return sum(status.loads for status in cluster_status())


def row(label: str, people: int, outcome: Outcome) -> str:
    n = len(outcome.latencies)
    p50 = statistics.median(outcome.latencies)
    p95 = float(np.percentile(outcome.latencies, 95))
    if outcome.hits is None:
        multiplex = "| | "
    else:
        multiplex = f"| {outcome.hits / n:.0%} | {100 * outcome.loads / n:.0f} "
    return f"| {label} | {people} | {n} | {n / outcome.wall:.2f} | {p50:.2f} | {p95:.2f} {multiplex}|"


def overhead(engine: Engine, card, repeats: int) -> float:
    prompt = f"a photo of {card.canonical_trigger} on a beach"
    list(engine.generate(card, prompt))  # warm: base, adapter
    times = []
    for _ in range(repeats):
        started = time.perf_counter()
        list(engine.generate(card, prompt))
        times.append(time.perf_counter() - started)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--people", default="8,16")
    parser.add_argument("--requests", type=int, default=4)
    parser.add_argument("--checkpoints", type=int, default=12)
    parser.add_argument("--overhead", type=int, default=10, help="requests per side for the 1-person overhead")
    parser.add_argument("--batch", type=int, default=4, help="the batched configuration's largest batch")
    args = parser.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s: %(message)s")
    for chatty in ("diffusers", "transformers", "personalq", "ray", "ray.serve", "alembic", "sentence_transformers"):
        logging.getLogger(chatty).setLevel(logging.ERROR)
    import ray
    from ray import serve

    from personalq.serving.ray_serving import start_ray_serving

    people = [int(p) for p in args.people.split(",")]
    rows = [
        "| serving | people | requests | requests/s | p50 (s) | p95 (s) | multiplex hit rate "
        "| variant loads per 100 requests |",
        "|---|---|---|---|---|---|---|---|",
    ]
    with tempfile.TemporaryDirectory() as home:
        settings = load_settings(home=Path(home), assets_dir=DEFAULT_ASSETS)
        runtime = start(settings)
        cards = [c for c in runtime.repository.list() if c.weights_path][: args.checkpoints]
        plans = {n: zipf_requests(cards, n, args.requests) for n in people}
        single = Engine(settings)
        single_overhead = overhead(single, cards[0], args.overhead)
        for n in people:
            rows.append(row("one process", n, run_load(single, plans[n])))
            log.info("one process, %d people done", n)
        del single
        ray_overhead = None
        for replicas, batch in ((1, 1), (2, 1), (2, args.batch)):
            scaled = settings.model_copy(
                update={
                    "ray_min_replicas": replicas,
                    "ray_max_replicas": replicas,
                    "ray_replica_cpus": 2 / replicas,
                    "ray_max_batch_size": batch,
                }
            )
            engine = start_ray_serving(scaled)
            if replicas == 1:
                ray_overhead = overhead(engine, cards[0], args.overhead)
            label = f"Ray Serve, {replicas} replica{'s' if replicas > 1 else ''}"
            label += f", batches of up to {batch}" if batch > 1 else ", no batching"
            for n in people:
                rows.append(row(label, n, run_load(engine, plans[n])))
                log.info("%s, %d people done", label, n)
            serve.shutdown()
            ray.shutdown()
    text = "\n".join(
        [
            "# Generation under load: one process against Ray Serve",
            "",
            f"`python benchmarks/ray_load.py --people {args.people} --requests {args.requests} "
            f"--checkpoints {args.checkpoints} --overhead {args.overhead} --batch {args.batch}` · "
            "demo zoo, 20-step 64x64 images, FP32, "
            "previews streamed",
            "",
            *rows,
            "",
            "| 1 person, one warm checkpoint (median of a whole image) | seconds |",
            "|---|---|",
            f"| one process | {single_overhead:.3f} |",
            f"| through Ray Serve (1 replica, 2 CPUs, no batching) | {ray_overhead:.3f} "
            f"({ray_overhead / single_overhead - 1:+.1%}) |",
        ]
    )
    print(text)
    RESULTS.write_text(text + "\n")


if __name__ == "__main__":
    main()
