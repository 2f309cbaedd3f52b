"""The CPU float type: what bfloat16 buys over float32, for a wide base and for the demo zoo, side by side.

    python benchmarks/cpu_float_type.py [--work /tmp/personalq-real-size] [--repeats 2] [--images 1] [--seeds 2]

Prints a Markdown report (also written to ``benchmarks/results/cpu-float-type.md``):

1. the SD 1.5 stand-in of ``benchmarks/real_size.py`` at 512x512 (same ``--work`` folder, its stored variants reused;
   random weights, so only speed is measured): one UNet step with classifier-free guidance (batch 2) and whole
   20-step images, FP32 and W8A8 (integer kernels), with the pipeline in float32 and in bfloat16 (what
   ``PERSONALQ_CPU_DTYPE=auto`` picks for it on a CPU with bfloat16 units);
2. the demo zoo at 64x64: one UNet step and one 20-step image in both types, and how far the bfloat16 images are
   from the float32 ones (FP32, and W8A8 TAQ against the float32 FP32 image): why ``auto`` keeps the demo in
   float32.

Each engine is pinned to its type (``cpu_dtype``), so the figures hold on any CPU; bfloat16 is only fast where the
processor has bfloat16 units (the report's header says whether this one has).
"""

from __future__ import annotations

import argparse
import logging
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import torch

sys.path.insert(0, str(Path(__file__).parent))
from integer_kernels import median_time  # noqa: E402 (sibling benchmarks: the timing and the stand-in setup)
from real_size import PROMPT, card, prepare, settings_for  # noqa: E402

from personalq import compute  # noqa: E402
from personalq.config import DEFAULT_ASSETS, load_settings  # noqa: E402
from personalq.hardware import native_bf16  # noqa: E402
from personalq.repository.service import Repository  # noqa: E402
from personalq.runtime import start  # noqa: E402
from personalq.serving.allocator import reuse_freed_memory  # noqa: E402
from personalq.serving.engine import Engine  # noqa: E402
from personalq.serving.generation import GenerationParams  # noqa: E402
from personalq.serving.variants import precision_config  # noqa: E402
from personalq.taq.kernels import integer_support  # noqa: E402
from personalq.taq.masks import token_mask  # noqa: E402

log = logging.getLogger("float_type")
RESULTS = Path(__file__).parent / "results" / "cpu-float-type.md"
TYPES = ("float32", "bfloat16")
DEMO_CHECKPOINTS = ["teddybear-v2", "mochi-v3", "zoomy-v2", "biscuit-v3"]


def engines_for(settings, **extra) -> dict[str, Engine]:
    return {name: Engine(settings.model_copy(update={"cpu_dtype": name}), **extra) for name in TYPES}


@torch.no_grad()
def unet_step(engine: Engine, checkpoint, precision: str, prompt: str, side: int, repeats: int) -> float:
    """One UNet step with CFG (batch 2) at ``side`` pixels, in the engine's float type."""
    base = engine.base_location(checkpoint)
    pipe = engine.pipeline(base)
    dtype = engine.float_dtype(base)
    embeds, negative = pipe.encode_prompt(prompt, "cpu", 1, True, "")
    text = torch.cat([negative, embeds])
    latent = side // 8
    channels = pipe.vae.config.latent_channels
    latents = torch.randn(2, channels, latent, latent, generator=torch.Generator().manual_seed(0)).to(dtype)
    config = precision_config(precision)
    if config is None:
        unet = engine.float_unet(base)
        return median_time(lambda: unet(latents, 500, encoder_hidden_states=text), repeats)
    variant = engine.quantized_unet(checkpoint, config)
    mask = token_mask(pipe.tokenizer, ["", prompt], checkpoint.triggers, config.mode)
    with variant.context.protecting(mask):
        return median_time(lambda: variant.unet(latents, 500, encoder_hidden_states=text), repeats)


def image(engine: Engine, checkpoint, precision: str, prompt: str, params: GenerationParams):
    """Seconds for one whole image, and the image as floats in [0, 1]."""
    started = time.perf_counter()
    frames = list(engine.generate(checkpoint, prompt, precision, params=params, previews=False))
    return time.perf_counter() - started, np.asarray(frames[-1].image, dtype=np.float64) / 255


def sd15_rows(work: Path, repeats: int, images: int) -> list[str]:
    settings = settings_for(work)
    engines = engines_for(settings, calibration_captions=4, calibration_steps=2)
    checkpoint = card(Repository(settings))
    steps: dict[tuple[str, str], float] = {}
    for precision in ("FP32", "W8A8"):
        for name, engine in engines.items():
            steps[(precision, name)] = unet_step(engine, checkpoint, precision, PROMPT, 512, repeats)
            log.info("SD 1.5 step, %s in %s: %.2f s", precision, name, steps[(precision, name)])
    rows = [
        "| SD 1.5, 512x512 | float32 | bfloat16 | bfloat16 / float32 |",
        "|---|---|---|---|",
        *[
            f"| one UNet step, {p}{' (integer kernels)' if p != 'FP32' else ''} | {steps[(p, 'float32')]:.2f} s | "
            f"{steps[(p, 'bfloat16')]:.2f} s | {steps[(p, 'bfloat16')] / steps[(p, 'float32')]:.2f}x |"
            for p in ("FP32", "W8A8")
        ],
    ]
    params = GenerationParams(steps=20, width=512, height=512)
    for precision in ("FP32", "W8A8") if images else ():
        seconds = {name: [] for name in TYPES}
        for seed in range(images):
            for name, engine in engines.items():
                spent, _ = image(engine, checkpoint, precision, PROMPT, params.model_copy(update={"seed": seed}))
                seconds[name].append(spent)
                log.info("SD 1.5 image, %s in %s: %.0f s", precision, name, spent)
        f32, b16 = (statistics.median(seconds[name]) for name in TYPES)
        rows.append(f"| whole 20-step image, {precision} | {f32:.0f} s | {b16:.0f} s | {b16 / f32:.2f}x |")
    return rows


def demo_rows(repeats: int, seeds: int) -> list[str]:
    with tempfile.TemporaryDirectory() as home:
        settings = load_settings(home=Path(home), assets_dir=DEFAULT_ASSETS, memory_budget_mb=4096)
        repository = start(settings).repository
        engines = engines_for(settings)
        first = repository.get(DEMO_CHECKPOINTS[0])
        prompt = f"a photo of {first.canonical_trigger} on a beach"
        steps = {name: unet_step(engine, first, "FP32", prompt, 64, repeats) for name, engine in engines.items()}
        seconds: dict[str, list[float]] = {name: [] for name in TYPES}
        errors: dict[str, list[float]] = {"FP32 bfloat16": [], "W8A8 float32": [], "W8A8 bfloat16": []}
        for checkpoint_id in DEMO_CHECKPOINTS:
            checkpoint = repository.get(checkpoint_id)
            prompt = f"a photo of {checkpoint.canonical_trigger} on a beach"
            for seed in range(seeds):
                params = GenerationParams(seed=seed)
                drawn = {}
                for name, engine in engines.items():
                    spent, drawn[("FP32", name)] = image(engine, checkpoint, "FP32", prompt, params)
                    seconds[name].append(spent)
                    _, drawn[("W8A8", name)] = image(engine, checkpoint, "W8A8", prompt, params)
                reference = drawn[("FP32", "float32")]
                for label in errors:
                    precision, name = label.split()
                    errors[label].append(float(np.mean((drawn[(precision, name)] - reference) ** 2)))
            log.info("demo %s done", checkpoint_id)
    f32, b16 = (statistics.median(seconds[name]) for name in TYPES)
    return [
        "| demo zoo, 64x64 | float32 | bfloat16 | bfloat16 / float32 |",
        "|---|---|---|---|",
        f"| one UNet step, FP32 | {1e3 * steps['float32']:.1f} ms | {1e3 * steps['bfloat16']:.1f} ms | "
        f"{steps['bfloat16'] / steps['float32']:.2f}x |",
        f"| whole 20-step image, FP32 (median of {len(seconds['float32'])}) | {f32:.2f} s | {b16:.2f} s | "
        f"{b16 / f32:.2f}x |",
        "",
        f"| image MSE to the float32 FP32 image ({len(DEMO_CHECKPOINTS)} checkpoints x {seeds} seeds) | MSE |",
        "|---|---|",
        *[f"| {label} | {statistics.mean(values):.2e} |" for label, values in errors.items()],
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--work", type=Path, default=Path("/tmp/personalq-real-size"))
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--images", type=int, default=1, help="whole SD 1.5 images per precision and type (0: none)")
    parser.add_argument("--seeds", type=int, default=2, help="demo images per checkpoint")
    parser.add_argument("--sections", default="sd15,demo", help="comma-separated: sd15, demo")
    args = parser.parse_args()
    sections = set(args.sections.split(","))
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s: %(message)s")
    for chatty in ("diffusers", "transformers", "personalq"):
        logging.getLogger(chatty).setLevel(logging.ERROR)
    reuse_freed_memory()  # as the engine does
    report = [
        "# CPU float type",
        "",
        f"`python benchmarks/cpu_float_type.py --repeats {args.repeats} --images {args.images} --seeds {args.seeds} "
        f"--sections {args.sections}` · torch {torch.__version__} · {torch.get_num_threads()} threads · "
        f"{os.cpu_count()} CPUs · native bf16: {native_bf16()} · {integer_support().describe()}",
    ]
    if "sd15" in sections:
        prepare(args.work)
        report += ["", "## SD 1.5 stand-in (side by side)", *sd15_rows(args.work, args.repeats, args.images)]
    if "demo" in sections:
        report += ["", "## Demo zoo (side by side)", *demo_rows(max(args.repeats, 10), args.seeds)]
    text = "\n".join(report) + "\n"
    print(text)
    RESULTS.write_text(text)


if __name__ == "__main__":
    compute.run(main)  # timed on the engine's compute thread: a second computing thread would slow both
