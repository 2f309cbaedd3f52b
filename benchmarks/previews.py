"""What streaming previews cost: one demo 20-step 64x64 image with linear latent-to-RGB previews at every step
against the same image without previews, alternately, in one process.

    python benchmarks/previews.py [--rounds 7]

Prints a Markdown table (the first preview's latency too); the fitted factors are made before timing starts.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time

from personalq.config import load_settings
from personalq.runtime import start
from personalq.serving.engine import Engine
from personalq.serving.generation import GenerationParams


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=7)
    args = parser.parse_args()
    # a preview at every step (the chat's default draws at most one per PERSONALQ_PREVIEW_INTERVAL_S)
    settings = load_settings(home=tempfile.mkdtemp(prefix="pq-previews-"), preview_interval_s=0)
    repository = start(settings).repository
    engine, card = Engine(settings), repository.get("sneaks-v1")
    prompt, params = "a <sneaks-v1> on a beach", GenerationParams(steps=20)
    timings: dict[bool, list[float]] = {True: [], False: []}
    first: list[float] = []
    for round_ in range(args.rounds + 1):  # the first round warms up
        for previews in (True, False):
            started = time.perf_counter()
            frames = engine.generate(card, prompt, params=params, previews=previews)
            for frame in frames:
                if previews and frame.step == 1 and not frame.final and round_:
                    first.append(time.perf_counter() - started)
            if round_:
                timings[previews].append(time.perf_counter() - started)
    with_previews, without = (statistics.median(timings[p]) for p in (True, False))
    print("| 20-step 64x64 demo image, FP32 | median of %d |" % args.rounds)
    print("| --- | --- |")
    print(f"| first preview | {statistics.median(first):.3f} s |")
    print(f"| streamed with a preview at every step | {with_previews:.3f} s |")
    print(f"| without previews | {without:.3f} s |")
    print(f"| previews cost | {with_previews - without:+.3f} s ({with_previews / without:.2f}x) |")


if __name__ == "__main__":
    main()
