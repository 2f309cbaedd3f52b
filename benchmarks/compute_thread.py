"""What one compute thread buys: demo images generated while no other thread has computed, against the same images
while a second thread that has computed is still alive, alternately in one process.

    python benchmarks/compute_thread.py [--rounds 5]

The second case is how the app ran before :mod:`personalq.compute`: its main thread embedded the demo cards at
start-up, and every image was then generated in a thread of its own. Here a thread adds two tensors once (enough for
OpenMP to give it a team of workers) and then waits until the case is over; once it exits, its team goes with it.
Prints a Markdown table (also written to ``benchmarks/results/compute-thread.md``): a small elementwise operator on the
compute thread, and whole 20-step 64x64 images at FP32 and W8A8 with a preview at every step, as the chat makes them.
"""

from __future__ import annotations

import argparse
import contextlib
import logging
import statistics
import tempfile
import threading
import time
from pathlib import Path
from typing import Iterator

import torch

from personalq import compute
from personalq.config import load_settings
from personalq.runtime import start
from personalq.serving.engine import Engine
from personalq.serving.generation import GenerationParams

log = logging.getLogger("compute_thread")
RESULTS = Path(__file__).parent / "results" / "compute-thread.md"
CASES = ("one computing thread", "a second thread has computed and is alive")


@contextlib.contextmanager
def second_thread_alive(alive: bool) -> Iterator[None]:
    """While inside, (``alive``) a thread that has computed once is waiting, its OpenMP team with it."""
    if not alive:
        yield
        return
    computed, leave = threading.Event(), threading.Event()

    def other() -> None:
        tensor = torch.ones(512, 128)
        _ = tensor + tensor
        computed.set()
        leave.wait()

    thread = threading.Thread(target=other, name="other-computing-thread")
    thread.start()
    computed.wait()
    try:
        yield
    finally:
        leave.set()
        thread.join()


def elementwise_us() -> float:
    """Microseconds for adding two 512x128 tensors on the compute thread (median of 5 runs of 2,000)."""

    def runs() -> list[float]:
        tensor = torch.ones(512, 128)  # made here: filling it would give the main thread a team of its own
        times = []
        for _ in range(5):
            started = time.perf_counter()
            for _ in range(2000):
                _ = tensor + tensor
            times.append((time.perf_counter() - started) / 2000 * 1e6)
        return times

    return statistics.median(compute.run(runs))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(levelname)s %(name)s: %(message)s")
    settings = load_settings(home=Path(tempfile.mkdtemp(prefix="pq-compute-thread-")), preview_interval_s=0)
    repository = start(settings).repository
    engine, card = Engine(settings), repository.get("teddybear-v2")
    prompt = "a photo of a <teddybear-v2> bear on a beach"

    def image(precision: str) -> float:
        started = time.perf_counter()
        for _ in engine.generate(card, prompt, precision, params=GenerationParams(steps=20)):
            pass
        return time.perf_counter() - started

    for precision in ("FP32", "W8A8"):  # loads, quantizes and stores before timing
        image(precision)
    rows = {case: {"add": [], "FP32": [], "W8A8": []} for case in CASES}
    for round_ in range(args.rounds):
        for case in CASES:
            with second_thread_alive(case != CASES[0]):
                rows[case]["add"].append(elementwise_us())
                for precision in ("FP32", "W8A8"):
                    rows[case][precision].append(image(precision))
        log.info("round %d of %d", round_ + 1, args.rounds)
    median = {case: {name: statistics.median(values) for name, values in row.items()} for case, row in rows.items()}
    alone, shared = (median[case] for case in CASES)
    lines = [
        f"`python benchmarks/compute_thread.py --rounds {args.rounds}`: torch {torch.__version__}, "
        f"{torch.get_num_threads()} threads; cases alternate, medians of {args.rounds} rounds",
        "",
        f"| demo zoo, 64x64, 20 steps, previews | {CASES[0]} | {CASES[1]} | slower by |",
        "|---|---|---|---|",
        f"| add two 512x128 tensors | {alone['add']:.1f} us | {shared['add']:.1f} us | "
        f"{shared['add'] / alone['add']:.2f}x |",
        *[
            f"| one image, {p} | {alone[p]:.2f} s | {shared[p]:.2f} s | {shared[p] / alone[p]:.2f}x |"
            for p in ("FP32", "W8A8")
        ],
        f"| W8A8 / FP32 | {alone['W8A8'] / alone['FP32']:.2f}x | {shared['W8A8'] / shared['FP32']:.2f}x | |",
    ]
    report = "\n".join(lines) + "\n"
    print(report)
    RESULTS.write_text(report)


if __name__ == "__main__":
    main()
