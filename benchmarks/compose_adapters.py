"""Several adapters per request at real size: the time to apply a set and take it off again, on the SD 1.5 stand-in.

    python benchmarks/compose_adapters.py [--work /tmp/personalq-real-size] [--repeats 5] [--precisions FP32,W8A8]

Uses the stand-in SD 1.5 base and the rank-32 kohya-ss LoRA of ``benchmarks/real_size.py`` (same ``--work`` folder,
written there on first use), writes a second rank-32 LoRA and an AUTOMATIC1111 embedding beside it, imports them, and
measures what every request does before and after its denoising loop (:func:`personalq.serving.checkpoints.
set_applied`, as the engine calls it: the LoRAs' tensors already read into its cache, on the UNet the request runs on):

- one LoRA (the figure ``real_size.py`` reports), two LoRAs at weights 0.8 and 0.6, two LoRAs and the embedding;
- on the float base (FP32) and on the W8A8 variant of the first LoRA (quantized and stored on first use:
  calibrated on 4 trigger prompts x 2 steps at 256 px, minutes on a CPU; random weights make its quality moot).

Applying is ``load_lora_weights`` once per adapter (peft wraps each targeted layer, then copies the adapter's
tensors in) and one ``set_adapters`` for the weights; removing is one ``unload_lora_weights`` for the whole set.
Each round times every set once, so that all see the same load on a shared machine; the median and range of
``--repeats`` rounds after one warm-up round are reported. Last, the embedding is loaded as diffusers loads it by
itself and as serving does (its token table grown first, without transformers' mean resizing), taking turns. The
Markdown report is written to ``benchmarks/results/compose-adapters.md``.
"""

from __future__ import annotations

import argparse
import contextlib
import logging
import os
import statistics
import sys
import time
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).parent))
from real_size import card, prepare, settings_for  # noqa: E402 (the sibling benchmark's stand-in setup)

from personalq import compute  # noqa: E402
from personalq.repository.service import Repository  # noqa: E402
from personalq.repository.weighted import Weighted  # noqa: E402
from personalq.serving.adapter_files import (  # noqa: E402
    load_textual_inversion,
    read_textual_inversion,
    unload_textual_inversion,
)
from personalq.serving.checkpoints import load_base, set_applied  # noqa: E402
from personalq.serving.composition import Composition  # noqa: E402
from personalq.serving.engine import Engine  # noqa: E402
from personalq.serving.variants import precision_config  # noqa: E402
from personalq.taq.layers import weights_read_repeatedly  # noqa: E402

log = logging.getLogger("compose_adapters")
RESULTS = Path(__file__).parent / "results" / "compose-adapters.md"
SECOND_LORA = "bench-style-r32"
EMBEDDING = "bench-token"


def prepare_set(work: Path) -> None:
    """A second rank-32 LoRA and an embedding beside ``real_size.py``'s LoRA, imported (kept for later runs)."""
    from personalq.standin.formats import write_a1111_embedding, write_kohya_lora

    folder = work / "compose"
    lora, embedding = folder / f"{SECOND_LORA}.safetensors", folder / f"{EMBEDDING}.safetensors"
    if not (lora.is_file() and embedding.is_file()):
        pipe = load_base(work / "sd15")
        write_kohya_lora(pipe, lora, rank=32, alpha=16.0, trigger="bnchstyl", tags=("ink wash",), seed=2)
        write_a1111_embedding(pipe, embedding, n_vectors=4, seed=3)
        del pipe
    Repository(settings_for(work)).import_paths([folder])


def sets(repository: Repository) -> dict[str, list[Weighted]]:
    first, second, token = (repository.get(i) for i in (card(repository).id, SECOND_LORA, EMBEDDING))
    return {
        "one LoRA": [Weighted(first)],
        "two LoRAs (0.8, 0.6)": [Weighted(first, 0.8), Weighted(second, 0.6)],
        "two LoRAs + embedding": [Weighted(first, 0.8), Weighted(second, 0.6), Weighted(token)],
    }


def timed(engine: Engine, uses: list[Weighted], precision: str) -> tuple[float, float]:
    """(apply, remove) seconds of one request's ``uses`` on the UNet ``precision`` runs on, as the engine applies
    them: the LoRAs' tensors from its cache, inside ``weights_read_repeatedly``."""
    composition = Composition.of(uses)
    base = engine.base_location(composition.anchor)
    pipe = engine.pipeline(base)
    config = precision_config(precision)
    pipe.unet = engine.float_unet(base) if config is None else engine.quantized_unet(composition.anchor, config).unet
    loras = {use.id: engine.adapter(use.checkpoint) for use in composition.loras}
    with contextlib.ExitStack() as stack:
        started = time.perf_counter()
        with weights_read_repeatedly():
            stack.enter_context(set_applied(pipe, composition.applied, loras))
        applied = time.perf_counter()
    return applied - started, time.perf_counter() - applied


def embedding_rows(engine: Engine, repository: Repository, repeats: int) -> list[str]:
    """Loading the embedding as diffusers does by itself (its token table grown with transformers' default
    ``mean_resizing``) against :func:`load_textual_inversion` (grown first without it), taking turns."""
    pipe = engine.pipeline(engine.base_location(card(repository)))
    token = repository.get(EMBEDDING)
    embedding = read_textual_inversion(Path(token.weights_path))

    def by_diffusers() -> None:
        vectors = embedding.embeddings["text_encoder"]
        pipe.load_textual_inversion(vectors, token=token.canonical_trigger, text_encoder=pipe.text_encoder)

    def grown_first() -> None:
        load_textual_inversion(pipe, embedding, token.canonical_trigger)

    timings: dict[str, list[float]] = {"diffusers alone (mean resizing)": [], "grown first (served)": []}
    for round_ in range(repeats + 1):
        for (label, load), times in zip(
            (("diffusers alone (mean resizing)", by_diffusers), ("grown first (served)", grown_first)),
            timings.values(),
        ):
            started = time.perf_counter()
            load()
            loaded = time.perf_counter() - started
            unload_textual_inversion(pipe, embedding, token.canonical_trigger)
            if round_:
                times.append(loaded)
    return ["| loading the embedding | seconds |", "|---|---|"] + [
        f"| {label} | {spread(times)} |" for label, times in timings.items()
    ]


def spread(values: list[float]) -> str:
    return f"{statistics.median(values):.2f} ({min(values):.2f}-{max(values):.2f})"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--work", type=Path, default=Path("/tmp/personalq-real-size"))
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--precisions", default="FP32,W8A8")
    args = parser.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s: %(message)s")
    for chatty in ("diffusers", "transformers", "peft"):
        logging.getLogger(chatty).setLevel(logging.ERROR)
    prepare(args.work)
    prepare_set(args.work)
    settings = settings_for(args.work)
    repository = Repository(settings)
    engine = Engine(settings, calibration_captions=4, calibration_steps=2)
    rows = [
        "| set | precision | apply (s) | remove (s) | per request (s) | vs one LoRA |",
        "|---|---|---|---|---|---|",
    ]
    load_before = os.getloadavg()[0]
    for precision in args.precisions.split(","):
        timings: dict[str, list[tuple[float, float]]] = {label: [] for label in sets(repository)}
        for round_ in range(args.repeats + 1):  # round 0 warms up; each round times every set, so all see one load
            for label, uses in sets(repository).items():
                apply_s, remove_s = timed(engine, uses, precision)
                log.info("%s at %s: apply %.3f s, remove %.3f s", label, precision, apply_s, remove_s)
                if round_:
                    timings[label].append((apply_s, remove_s))
        one = statistics.median(a + r for a, r in timings["one LoRA"])
        for label, measured in timings.items():
            total = statistics.median(a + r for a, r in measured)
            rows.append(
                f"| {label} | {precision} | {spread([a for a, _ in measured])} | {spread([r for _, r in measured])} "
                f"| {total:.2f} | {total / one:.2f}x |"
            )
    embedding = embedding_rows(engine, repository, args.repeats)
    load_after = os.getloadavg()[0]
    lora = engine.adapter(card(repository))
    parameters = sum(t.numel() for t in lora.state_dict.values()) / 1e6
    modules = len({key.split(".")[0] for key in lora.state_dict})
    text = "\n".join(
        [
            "# Several adapters per request: apply and remove on the stand-in SD 1.5",
            "",
            f"`python benchmarks/compose_adapters.py --repeats {args.repeats} --precisions {args.precisions}` · "
            f"torch {torch.__version__} · {torch.get_num_threads()} threads · {os.cpu_count()} CPUs",
            "",
            f"Each LoRA: rank 32 kohya-ss, {modules} modules, {parameters:.1f} M parameters (UNet and text encoder); "
            f"the embedding: 4 vectors. Median (and range) of {args.repeats} requests after a warm-up, the sets "
            "taking turns in each round; the tensors are already in the engine's cache. Load average "
            f"{load_before:.1f} before and {load_after:.1f} after (other work shared the CPUs).",
            "",
            *rows,
            "",
            *embedding,
            "",
        ]
    )
    print(text)
    RESULTS.write_text(text)


if __name__ == "__main__":
    compute.run(main)  # timed on the engine's compute thread, as serving runs
