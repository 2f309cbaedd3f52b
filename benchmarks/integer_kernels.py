"""Integer kernels against float and dequantizing compute: per layer, per SD 1.5 UNet step and image, and the demo
zoo's image error.

    python benchmarks/integer_kernels.py [--work /tmp/personalq-real-size] [--repeats 2] [--images 1] [--seeds 4]

Prints a Markdown report (also written to ``benchmarks/results/integer-kernels.md``):

1. single layers at the shapes SD 1.5 runs at 512 px and the demo zoo runs at 64 px: FP32, bf16 (bf16 weights and
   input), and W8A8 / W4A8 layers (the serving recipe: smoothed input, per-channel weights) on the dequantizing and
   the integer path, side by side; the crossover below which the integer path does not pay
   (``personalq.taq.kernels.SMALL_PRODUCT``) comes from this table;
2. one SD 1.5 UNet step at 512x512 with classifier-free guidance (batch 2), on the stand-in base of
   ``benchmarks/real_size.py`` (same ``--work`` folder, its stored variants reused): FP32, bf16, W8A8 and W4A8 on
   both paths, side by side in one process; and whole 20-step 512x512 images for FP32 and W8A8 on integer kernels;
3. the demo zoo: image MSE to FP32 of W8A8 (TAQ and plain) through the dequantizing path and through integer kernels
   on every layer (the size threshold lifted), for the same seeds: the kernels must not change what quantization
   costs in quality;
4. ``--sections bound [--compile]``: where a demo W8A8 step's time goes: the step with each part of the quantized
   layers' work taken away in turn (an ablation), and FP32 and W8A8 under ``torch.compile``, alternating.

Random weights (SD 1.5 stand-in) draw noise; speed does not depend on the values.
"""

from __future__ import annotations

import argparse
import contextlib
import copy
import logging
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import torch
from torch import nn

sys.path.insert(0, str(Path(__file__).parent))
from real_size import PROMPT, card, prepare, settings_for  # noqa: E402 (the sibling benchmark's stand-in setup)

import personalq.taq.layers as quantized_layers  # noqa: E402
from personalq import compute  # noqa: E402
from personalq.config import DEFAULT_ASSETS, load_settings  # noqa: E402
from personalq.hardware import native_bf16  # noqa: E402
from personalq.repository.service import Repository  # noqa: E402
from personalq.runtime import start  # noqa: E402
from personalq.serving.allocator import reuse_freed_memory  # noqa: E402
from personalq.serving.engine import Engine  # noqa: E402
from personalq.serving.generation import GenerationParams  # noqa: E402
from personalq.serving.variants import precision_config  # noqa: E402
from personalq.taq.activations import ActivationQuantizer  # noqa: E402
from personalq.taq.context import QuantContext  # noqa: E402
from personalq.taq.kernels import SMALL_PRODUCT, integer_support, multiply_adds  # noqa: E402
from personalq.taq.layers import PackedWeight, QuantizedConv2d, QuantizedLinear  # noqa: E402
from personalq.taq.masks import token_mask  # noqa: E402
from personalq.taq.quantizers import QuantSpec, quantize_weight  # noqa: E402

log = logging.getLogger("kernels")
RESULTS = Path(__file__).parent / "results" / "integer-kernels.md"

# (label, layer, input shape): SD 1.5 at 512 px (CFG batch 2), then the demo zoo at 64 px
LAYERS = [
    ("SD 1.5 resnet conv, 320 ch @ 64x64", lambda: nn.Conv2d(320, 320, 3, padding=1), (2, 320, 64, 64)),
    ("SD 1.5 resnet conv, 640 ch @ 32x32", lambda: nn.Conv2d(640, 640, 3, padding=1), (2, 640, 32, 32)),
    ("SD 1.5 resnet conv, 1280 ch @ 16x16", lambda: nn.Conv2d(1280, 1280, 3, padding=1), (2, 1280, 16, 16)),
    ("SD 1.5 resnet conv, 1280 ch @ 8x8", lambda: nn.Conv2d(1280, 1280, 3, padding=1), (2, 1280, 8, 8)),
    ("SD 1.5 attention projection, 8192 x 320", lambda: nn.Linear(320, 320), (2, 4096, 320)),
    ("SD 1.5 GEGLU in, 8192 x 320 -> 2560", lambda: nn.Linear(320, 2560), (2, 4096, 320)),
    ("SD 1.5 feed-forward out, 8192 x 1280 -> 320", lambda: nn.Linear(1280, 320), (2, 4096, 1280)),
    ("SD 1.5 attention projection, 512 x 1280", lambda: nn.Linear(1280, 1280), (2, 256, 1280)),
    ("demo resnet conv, 48 ch @ 16x16", lambda: nn.Conv2d(48, 48, 3, padding=1), (2, 48, 16, 16)),
    ("demo resnet conv, 128 ch @ 4x4", lambda: nn.Conv2d(128, 128, 3, padding=1), (2, 128, 4, 4)),
    ("demo attention projection, 512 x 48", lambda: nn.Linear(48, 48), (2, 256, 48)),
]


@contextlib.contextmanager
def every_call_in_integers():
    """Lift the size threshold: small calls run the integer kernels too, so their cost and error can be measured."""
    saved = quantized_layers.SMALL_PRODUCT
    quantized_layers.SMALL_PRODUCT = 0
    try:
        yield
    finally:
        quantized_layers.SMALL_PRODUCT = saved


def median_time(run, repeats: int) -> float:
    run()  # first call: primitive creation, allocator warm-up
    times = []
    for _ in range(repeats):
        started = time.perf_counter()
        run()
        times.append(time.perf_counter() - started)
    return statistics.median(times)


def quantized(source: nn.Module, wbits: int, context: QuantContext, integer: bool) -> nn.Module:
    generator = torch.Generator().manual_seed(0)
    factors = torch.rand(source.weight.shape[1], generator=generator) + 0.5
    folded = source.weight.detach() * factors.reshape(1, -1, *([1] * (source.weight.dim() - 2)))
    packed = PackedWeight.from_quantized(quantize_weight(folded, QuantSpec(wbits)))
    inputs = ActivationQuantizer(QuantSpec(8, "linear", "tensor"), torch.tensor([[-4.0, 6.0]]))
    kind = QuantizedConv2d if isinstance(source, nn.Conv2d) else QuantizedLinear
    layer = kind(source, packed, inputs, context, smoothing=factors)
    if integer:
        layer.allow_integer_kernel()
    return layer


@torch.no_grad()
def layer_rows(repeats: int) -> list[str]:
    rows = [
        "| layer | multiply-adds | FP32 | bf16 | W8A8 dequantize | W8A8 integer | W4A8 dequantize | W4A8 integer "
        "| W8A8 integer vs FP32 |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    context = QuantContext()
    with every_call_in_integers():
        for label, make, shape in LAYERS:
            torch.manual_seed(0)
            rows.append(layer_row(label, make(), torch.randn(shape), context, repeats))
    return rows


def layer_row(label: str, source: nn.Module, x: torch.Tensor, context: QuantContext, repeats: int) -> str:
    bf16, x_bf16 = copy.deepcopy(source).to(torch.bfloat16), x.bfloat16()
    times = {"FP32": median_time(lambda: source(x), repeats), "bf16": median_time(lambda: bf16(x_bf16), repeats)}
    macs = 0
    for wbits in (8, 4):
        for integer in (False, True):
            layer = quantized(source, wbits, context, integer)
            macs = multiply_adds(layer, x)
            times[f"W{wbits}A8 {'integer' if integer else 'dequantize'}"] = median_time(lambda: layer(x), repeats)
    cells = " | ".join(f"{1e3 * t:.2f} ms" for t in times.values())
    below = " (below the threshold)" if macs < SMALL_PRODUCT else ""
    log.info("%s done", label)
    return f"| {label} | {macs / 1e6:,.0f} M{below} | {cells} | {times['W8A8 integer'] / times['FP32']:.2f}x |"


@torch.no_grad()
def sd15_rows(work: Path, repeats: int, images: int) -> list[str]:
    settings = settings_for(work)
    engines = {
        "dequantize": Engine(settings.model_copy(update={"kernels": "dequantize"}), 4, 2),
        "integer": Engine(settings, 4, 2),
    }
    checkpoint = card(Repository(settings))
    engine = engines["integer"]
    base = engine.base_location(checkpoint)
    pipe = engine.pipeline(base)
    embeds, negative = pipe.encode_prompt(PROMPT, "cpu", 1, True, "")
    text = torch.cat([negative, embeds])
    latents = torch.randn(2, 4, 64, 64, generator=torch.Generator().manual_seed(0))
    timestep = torch.tensor(500)
    unets = {"FP32": (engine.float_unet(base), None)}
    unets["bf16"] = (copy.deepcopy(unets["FP32"][0]).to(torch.bfloat16), None)
    for precision in ("W8A8", "W4A8"):
        config = precision_config(precision)
        for path, on in engines.items():
            unets[f"{precision} {path}"] = (on.quantized_unet(checkpoint, config), config)
    steps = {}
    for label, (unet, config) in unets.items():
        if config is None:
            dtype = torch.bfloat16 if label == "bf16" else torch.float32

            def step(unet=unet, dtype=dtype):
                unet(latents.to(dtype), timestep, encoder_hidden_states=text.to(dtype))

            steps[label] = median_time(step, repeats)
        else:
            mask = token_mask(pipe.tokenizer, ["", PROMPT], checkpoint.triggers, config.mode)
            with unet.context.protecting(mask):
                steps[label] = median_time(
                    lambda unet=unet: unet.unet(latents, timestep, encoder_hidden_states=text), repeats
                )
        log.info("SD 1.5 step, %s: %.2f s", label, steps[label])
    del unets
    rows = [
        "| precision and kernels | UNet step (s) | vs FP32 | vs bf16 |",
        "|---|---|---|---|",
        *[
            f"| {label} | {t:.2f} | {t / steps['FP32']:.2f}x | {t / steps['bf16']:.2f}x |"
            for label, t in steps.items()
        ],
    ]
    if images:
        params = GenerationParams(steps=20, width=512, height=512)
        rows += ["", "| whole 20-step 512x512 image | seconds | vs FP32 |", "|---|---|---|"]
        image_s = {}
        for precision in ("FP32", "W8A8"):
            times = []
            for seed in range(images):
                params = params.model_copy(update={"seed": seed})
                started = time.perf_counter()
                for _ in engine.generate(checkpoint, PROMPT, precision, params=params, previews=False):
                    pass
                times.append(time.perf_counter() - started)
            image_s[precision] = statistics.median(times)
            log.info("SD 1.5 image, %s: %.0f s", precision, image_s[precision])
        rows += [
            f"| {p}{' (integer kernels)' if p != 'FP32' else ''} | {t:.0f} | {t / image_s['FP32']:.2f}x |"
            for p, t in image_s.items()
        ]
    return rows


def demo_step_inputs(engine: Engine, checkpoint):
    """What one demo-zoo UNet step takes (64x64 image, 16x16 latent, CFG batch 2): the pipeline, the prompt, its text
    embeddings with the empty negative, the float UNet and seeded latents."""
    base = engine.base_location(checkpoint)
    pipe = engine.pipeline(base)
    prompt = f"a photo of {checkpoint.canonical_trigger} on a beach"
    embeds, negative = pipe.encode_prompt(prompt, "cpu", 1, True, "")
    unet = engine.float_unet(base)
    latents = torch.randn(2, unet.config.in_channels, 16, 16, generator=torch.Generator().manual_seed(0))
    return pipe, prompt, torch.cat([negative, embeds]), unet, latents


@torch.no_grad()
def demo_step_rows(repeats: int) -> list[str]:
    """One demo-zoo UNet step (64x64 image, 16x16 latent, CFG batch 2) per precision and path, side by side."""
    with tempfile.TemporaryDirectory() as home:
        settings = load_settings(home=Path(home), assets_dir=DEFAULT_ASSETS, memory_budget_mb=4096)
        checkpoint = start(settings).repository.get("teddybear-v2")
        engines = {
            "dequantize": Engine(settings.model_copy(update={"kernels": "dequantize"})),
            "integer": Engine(settings),
        }
        engine = engines["integer"]
        pipe, prompt, text, unet, latents = demo_step_inputs(engine, checkpoint)
        bf16 = copy.deepcopy(unet).to(torch.bfloat16)
        steps = {
            "FP32": median_time(lambda: unet(latents, 500, encoder_hidden_states=text), repeats),
            "bf16": median_time(lambda: bf16(latents.bfloat16(), 500, encoder_hidden_states=text.bfloat16()), repeats),
        }
        for precision in ("W8A8", "W4A8", "W8A4", "W4A4"):
            config = precision_config(precision)
            mask = token_mask(pipe.tokenizer, ["", prompt], checkpoint.triggers, config.mode)
            runs = [("dequantize", engines["dequantize"], False), ("integer, as served", engine, False)]
            runs.append(("integer, every layer", engine, True))
            for label, on, forced in runs:
                variant = on.quantized_unet(checkpoint, config)
                lifted = every_call_in_integers() if forced else contextlib.nullcontext()
                with variant.context.protecting(mask), lifted:
                    steps[f"{precision} {label}"] = median_time(
                        lambda: variant.unet(latents, 500, encoder_hidden_states=text), repeats
                    )
    return [
        "| precision and kernels | UNet step (ms) | vs FP32 |",
        "|---|---|---|",
        *[f"| {label} | {1e3 * t:.1f} | {t / steps['FP32']:.2f}x |" for label, t in steps.items()],
    ]


@contextlib.contextmanager
def without(*parts: str):
    """Take parts of every quantized layer's work away, to measure what the rest costs (an ablation: the UNet
    computes something else while they are away). ``weights``: each packed weight is rebuilt once and then held in
    float; ``inputs``: the input is neither smoothed nor rounded."""
    saved = PackedWeight.dequantize, quantized_layers._Quantized._quantize_input
    if "weights" in parts:
        held: dict[int, torch.Tensor] = {}

        def once(packed):
            if id(packed) not in held:
                held[id(packed)] = saved[0](packed)
            return held[id(packed)]

        PackedWeight.dequantize = once
    if "inputs" in parts:
        quantized_layers._Quantized._quantize_input = lambda layer, x: x
    try:
        yield
    finally:
        PackedWeight.dequantize, quantized_layers._Quantized._quantize_input = saved


@torch.no_grad()
def demo_bound_rows(rounds: int, compiled: bool) -> list[str]:
    """Where a demo W8A8 step's time goes: the step with the weight rebuild, then the input rounding too, taken away,
    and (``compiled``) FP32 and W8A8 under ``torch.compile``, all alternating in one process."""
    with tempfile.TemporaryDirectory() as home:
        settings = load_settings(home=Path(home), assets_dir=DEFAULT_ASSETS, memory_budget_mb=4096)
        checkpoint = start(settings).repository.get("teddybear-v2")
        engine = Engine(settings)
        pipe, prompt, text, unet, latents = demo_step_inputs(engine, checkpoint)
        config = precision_config("W8A8")
        variant = engine.quantized_unet(checkpoint, config)
        mask = token_mask(pipe.tokenizer, ["", prompt], checkpoint.triggers, config.mode)
        runs = {
            "FP32": (unet, contextlib.nullcontext),
            "W8A8 TAQ, as served": (variant.unet, contextlib.nullcontext),
            "W8A8, weights rebuilt once and held in float": (variant.unet, lambda: without("weights")),
            "W8A8, neither weights rebuilt nor inputs smoothed or rounded": (
                variant.unet,
                lambda: without("weights", "inputs"),
            ),
        }
        if compiled:
            # Inductor's buffer reuse corrupted the heap in the W8A8 graph on torch 2.13 (glibc: "malloc(): unaligned
            # tcache chunk detected"); with it off both graphs run, and both are compiled alike
            import torch._inductor.config as inductor

            inductor.allow_buffer_reuse = False
            for label, model in (("FP32 compiled", unet), ("W8A8 TAQ compiled", variant.unet)):
                started = time.perf_counter()
                runs[label] = (torch.compile(model), contextlib.nullcontext)
                with variant.context.protecting(mask):
                    runs[label][0](latents, 500, encoder_hidden_states=text)
                log.info("%s: compiled in %.0f s", label, time.perf_counter() - started)
        times: dict[str, list[float]] = {label: [] for label in runs}
        with variant.context.protecting(mask):
            for _ in range(rounds):
                for label, (model, taken_away) in runs.items():
                    with taken_away():
                        seconds = median_time(lambda m=model: m(latents, 500, encoder_hidden_states=text), 5)
                    times[label].append(seconds)
    step = {label: statistics.median(values) for label, values in times.items()}
    return [
        "| demo zoo step, 64x64, CFG batch 2 | ms | vs FP32 |",
        "|---|---|---|",
        *[f"| {label} | {1e3 * t:.1f} | {t / step['FP32']:.2f}x |" for label, t in step.items()],
    ]


def demo_mse_rows(images: int) -> list[str]:
    """W8A8 image MSE to FP32 on the demo zoo, dequantizing against integer kernels on every layer."""
    checkpoints = ["teddybear-v2", "mochi-v3", "zoomy-v2", "biscuit-v3"]
    with tempfile.TemporaryDirectory() as home:
        settings = load_settings(home=Path(home), assets_dir=DEFAULT_ASSETS, memory_budget_mb=4096)
        repository = start(settings).repository
        engines = {
            "dequantize": Engine(settings.model_copy(update={"kernels": "dequantize"})),
            "integer": Engine(settings),
        }
        errors: dict[tuple[str, str], list[float]] = {}
        with every_call_in_integers():
            for checkpoint_id in checkpoints:
                checkpoint = repository.get(checkpoint_id)
                prompt = f"a photo of {checkpoint.canonical_trigger} on a beach"
                for seed in range(images):
                    params = GenerationParams(seed=seed)

                    def image(engine, precision, trigger_aware=True):
                        frames = engine.generate(checkpoint, prompt, precision, trigger_aware, params, previews=False)
                        return np.asarray(list(frames)[-1].image, dtype=np.float64) / 255

                    reference = image(engines["dequantize"], "FP32")
                    for path, engine in engines.items():
                        for mode, aware in (("plain", False), ("TAQ", True)):
                            mse = float(np.mean((image(engine, "W8A8", aware) - reference) ** 2))
                            errors.setdefault((mode, path), []).append(mse)
                log.info("demo %s done", checkpoint_id)
    rows = ["| W8A8 | image MSE to FP32, dequantize | integer kernels (every layer) |", "|---|---|---|"]
    for mode in ("plain", "TAQ"):
        deq, integer = (statistics.mean(errors[(mode, path)]) for path in ("dequantize", "integer"))
        rows.append(f"| {mode} | {deq:.2e} | {integer:.2e} |")
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--work", type=Path, default=Path("/tmp/personalq-real-size"))
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--images", type=int, default=1, help="whole SD 1.5 images per precision (0: none)")
    parser.add_argument("--seeds", type=int, default=4, help="demo images per checkpoint for the error table")
    parser.add_argument(
        "--sections",
        default="layers,sd15,demo",
        help="comma-separated: layers, sd15, demo, bound (the report has those)",
    )
    parser.add_argument("--compile", action="store_true", help="bound: add FP32 and W8A8 under torch.compile")
    args = parser.parse_args()
    sections = set(args.sections.split(","))
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s: %(message)s")
    for chatty in ("diffusers", "transformers", "personalq"):
        logging.getLogger(chatty).setLevel(logging.ERROR)
    reuse_freed_memory()  # as the engine does: the float rows get the same allocator as the quantized ones
    support = integer_support()
    if not support.available:
        sys.exit(f"no integer kernels on this machine: {support.reason}")
    report = [
        "# Integer kernels",
        "",
        f"`python benchmarks/integer_kernels.py --repeats {args.repeats} --images {args.images} --seeds {args.seeds} "
        f"--sections {args.sections}{' --compile' if args.compile else ''}` · torch {torch.__version__} · "
        f"{torch.get_num_threads()} threads · {os.cpu_count()} CPUs · {support.describe()} · "
        f"native bf16: {native_bf16()}",
    ]
    if "layers" in sections:
        report += ["", "## Single layers (median per call)", *layer_rows(max(args.repeats, 5))]
    if "sd15" in sections:
        prepare(args.work)
        report += [
            "",
            "## SD 1.5 stand-in, 512x512, CFG batch 2 (side by side)",
            *sd15_rows(args.work, args.repeats, args.images),
        ]
    if "bound" in sections:
        report += [
            "",
            "## Demo zoo: where a W8A8 step's time goes (alternating, median of rounds)",
            *demo_bound_rows(max(args.repeats, 8), args.compile),
        ]
    if "demo" in sections:
        report += [
            "",
            "## Demo zoo: one UNet step, 64x64 image, CFG batch 2 (side by side)",
            *demo_step_rows(max(args.repeats, 10)),
            "",
            f"## Demo zoo: W8A8 image error, {args.seeds} seeds x 4 checkpoints, 20 steps, 64x64",
            *demo_mse_rows(args.seeds),
        ]
    text = "\n".join(report) + "\n"
    print(text)
    RESULTS.write_text(text)


if __name__ == "__main__":
    compute.run(main)  # timed on the engine's compute thread: a second computing thread would slow both
