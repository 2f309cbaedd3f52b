"""Quantized UNets on a CUDA GPU: half-precision float against W8A8 / W4A8, dequantizing and integer kernels.

    python benchmarks/gpu_kernels.py [--archs sd15,sdxl] [--repeats 10] [--images 1]

Needs a CUDA device. For each stand-in base (the published SD 1.5 and SDXL architectures with random weights, built
on the GPU; ``personalq.standin.bases``), side by side in one process, prints a Markdown report (also written to
``benchmarks/results/gpu-kernels.md`` unless ``--out`` says where):

1. one UNet step with classifier-free guidance (batch 2) at the base's native size: fp16 and bf16 float UNets,
   then W8A8 and W4A8 variants in the bf16 pipeline (what ``personalq.serving.float_type`` picks on such a GPU)
   through the dequantizing path and through integer kernels (``torch._int_mm`` for Linear layers; convolutions
   dequantize on CUDA);
2. how long a variant takes to be ready on the GPU (calibration on 4 trigger prompts x 2 steps, then quantization);
3. resident UNet bytes and the peak GPU memory of one step;
4. whole 20-step images for bf16 and W8A8 on integer kernels (``--images``, per base).

Random weights draw noise; speed and memory do not depend on the values.
"""

from __future__ import annotations

import argparse
import contextlib
import copy
import logging
import statistics
import sys
import time
from pathlib import Path

import torch

from personalq.serving.variants import precision_config
from personalq.standin.bases import ARCHITECTURES, build_pipeline
from personalq.taq.calibration import calibrate, calibration_prompts
from personalq.taq.kernels import integer_support
from personalq.taq.masks import token_mask
from personalq.taq.quantize import allow_integer_kernels, quantize_unet, weight_bytes

log = logging.getLogger("gpu_kernels")
RESULTS = Path(__file__).parent / "results" / "gpu-kernels.md"
PROMPT = "a photo of sks dog on a beach"
TRIGGERS = ["sks"]
GB = 1024**3


def cuda_time(run, repeats: int) -> float:
    """Median seconds of ``run`` over ``repeats`` calls after two warm-up calls, synchronized with the GPU."""
    for _ in range(2):
        run()
    torch.cuda.synchronize()
    times = []
    for _ in range(repeats):
        started = time.perf_counter()
        run()
        torch.cuda.synchronize()
        times.append(time.perf_counter() - started)
    return statistics.median(times)


def peak_bytes(run) -> int:
    torch.cuda.synchronize()
    torch.cuda.reset_peak_memory_stats()
    run()
    torch.cuda.synchronize()
    return torch.cuda.max_memory_allocated()


def step_inputs(pipe, arch: str, dtype: torch.dtype) -> tuple[torch.Tensor, dict]:
    """One CFG step's UNet inputs at the base's native size: latents, text states (and SDXL's added conditions)."""
    side = pipe.unet.config.sample_size
    generator = torch.Generator().manual_seed(0)
    latents = torch.randn(2, pipe.unet.config.in_channels, side, side, generator=generator).cuda().to(dtype)
    if arch == "sdxl":
        embeds, negative, pooled, negative_pooled = pipe.encode_prompt(
            PROMPT, device="cuda", num_images_per_prompt=1, do_classifier_free_guidance=True, negative_prompt=""
        )
        image_side = side * pipe.vae_scale_factor
        time_ids = torch.tensor([[image_side, image_side, 0, 0, image_side, image_side]] * 2, device="cuda")
        added = {"text_embeds": torch.cat([negative_pooled, pooled]).to(dtype), "time_ids": time_ids.to(dtype)}
        return latents, {"encoder_hidden_states": torch.cat([negative, embeds]).to(dtype), "added_cond_kwargs": added}
    embeds, negative = pipe.encode_prompt(PROMPT, "cuda", 1, True, "")
    return latents, {"encoder_hidden_states": torch.cat([negative, embeds]).to(dtype)}


@torch.no_grad()
def arch_rows(arch: str, size: str, repeats: int, images: int, compiled: bool) -> list[str]:
    label = ARCHITECTURES[(arch, size)].label
    pipe = build_pipeline(arch, size)
    pipe.to("cuda", torch.bfloat16)
    pipe.set_progress_bar_config(disable=True)
    side = pipe.unet.config.sample_size * pipe.vae_scale_factor
    float_unet = pipe.unet
    timestep = torch.tensor(500, device="cuda")
    rows = [f"## {label} stand-in, {side}x{side}, CFG batch 2", ""]
    steps: dict[str, float] = {}
    peaks: dict[str, int] = {}
    resident: dict[str, int] = {}

    def measure(name: str, unet, dtype: torch.dtype, protect=None) -> None:
        latents, kwargs = step_inputs(pipe, arch, dtype)

        def step():
            unet(latents, timestep, **kwargs)

        with protect if protect is not None else contextlib.nullcontext():
            steps[name] = cuda_time(step, repeats)
            peaks[name] = peak_bytes(step)
        log.info("%s %s: %.1f ms per step", label, name, 1e3 * steps[name])

    def measure_compiled(name: str, unet, protect=None) -> None:
        """The same step through ``torch.compile`` (Inductor fuses the quantized layers' elementwise work)."""
        if not compiled:
            return
        try:
            started = time.perf_counter()
            measure(f"{name}, torch.compile", torch.compile(unet), torch.bfloat16, protect)
            log.info("compiling and timing %s took %.0f s", name, time.perf_counter() - started)
        except Exception:  # recorded as missing; the other rows still come
            log.exception("torch.compile of %s failed", name)

    fp16 = copy.deepcopy(float_unet).to(torch.float16)
    measure("fp16", fp16, torch.float16)
    resident["fp16"] = weight_bytes(fp16)
    del fp16
    measure("bf16", float_unet, torch.bfloat16)
    measure_compiled("bf16", float_unet)
    resident["bf16"] = weight_bytes(float_unet)

    ready: dict[str, float] = {}
    for precision in ("W8A8", "W4A8"):
        config = precision_config(precision)
        started = time.perf_counter()
        prompts = calibration_prompts("sks", "dog", 4)
        observer = calibrate(pipe, prompts, TRIGGERS, steps=2, timestep_groups=config.timestep_groups, size=side)
        variant = quantize_unet(copy.deepcopy(float_unet), config, observer)
        torch.cuda.synchronize()
        ready[precision] = time.perf_counter() - started
        del observer
        mask = token_mask(pipe.tokenizer, ["", PROMPT], TRIGGERS, config.mode).cuda()
        measure(f"{precision} dequantize", variant.unet, torch.bfloat16, variant.context.protecting(mask))
        layers = allow_integer_kernels(variant)
        measure(f"{precision} integer", variant.unet, torch.bfloat16, variant.context.protecting(mask))
        if precision == "W8A8":
            measure_compiled("W8A8 integer", variant.unet, variant.context.protecting(mask))
        resident[precision] = weight_bytes(variant.unet)
        log.info("%s: %d layers in integers", precision, layers)
        if precision == "W8A8":
            served = (variant, mask)
        del variant

    def ready_after(name: str) -> str:
        return f"{ready[name]:.0f} s" if name in ready else ""

    rows += [
        "| precision and kernels | UNet step (ms) | vs fp16 | vs bf16 | peak GPU memory of a step (GB) |",
        "|---|---|---|---|---|",
        *[
            f"| {name} | {1e3 * t:.1f} | {t / steps['fp16']:.2f}x | {t / steps['bf16']:.2f}x "
            f"| {peaks[name] / GB:.2f} |"
            for name, t in steps.items()
        ],
        "",
        "| UNet | resident weights (GB) | vs bf16 | ready after (calibration + quantization on the GPU) |",
        "|---|---|---|---|",
        *[
            f"| {name} | {b / GB:.2f} | {b / resident['bf16']:.2f}x | {ready_after(name)} |"
            for name, b in resident.items()
        ],
    ]
    if images:
        image_s = {}
        variant, mask = served
        for name, unet, protect in (
            ("bf16", float_unet, None),
            ("W8A8 integer", variant.unet, variant.context.protecting(mask)),
        ):
            pipe.unet = unet
            times = []
            with protect if protect is not None else contextlib.nullcontext():
                pipe(PROMPT, num_inference_steps=2)  # warm-up
                for seed in range(images):
                    torch.cuda.synchronize()
                    started = time.perf_counter()
                    pipe(PROMPT, num_inference_steps=20, generator=torch.Generator().manual_seed(seed))
                    torch.cuda.synchronize()
                    times.append(time.perf_counter() - started)
            image_s[name] = statistics.median(times)
            log.info("%s %s: %.2f s per image", label, name, image_s[name])
        pipe.unet = float_unet
        rows += [
            "",
            f"| whole 20-step {side}x{side} image (text encoders, UNet, VAE) | seconds | vs bf16 |",
            "|---|---|---|",
            *[f"| {name} | {t:.2f} | {t / image_s['bf16']:.2f}x |" for name, t in image_s.items()],
        ]
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--archs", default="sd15,sdxl", help="comma-separated: sd15, sdxl")
    parser.add_argument("--size", choices=["real", "tiny"], default="real", help="tiny: a quick check of the script")
    parser.add_argument("--repeats", type=int, default=10)
    parser.add_argument("--images", type=int, default=1, help="whole 20-step images per base and precision (0: none)")
    parser.add_argument("--compile", action="store_true", help="also time bf16 and W8A8 through torch.compile")
    parser.add_argument("--out", type=Path, default=RESULTS)
    args = parser.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s: %(message)s")
    for chatty in ("diffusers", "transformers", "personalq"):
        logging.getLogger(chatty).setLevel(logging.ERROR)
    if not torch.cuda.is_available():
        sys.exit("no CUDA device: this benchmark measures the GPU path")
    support = integer_support("cuda")
    report = [
        "# Quantized UNets on a GPU",
        "",
        f"`python benchmarks/gpu_kernels.py --size {args.size} --archs {args.archs} --repeats {args.repeats} "
        f"--images {args.images}{' --compile' if args.compile else ''}` · "
        f"torch {torch.__version__} · {torch.cuda.get_device_name()} · {support.describe()}",
    ]
    for arch in args.archs.split(","):
        try:
            report += ["", *arch_rows(arch, args.size, args.repeats, args.images, args.compile)]
        except Exception as error:  # the other base still gets measured; the report says what failed
            log.exception("%s failed", arch)
            report += ["", f"## {arch}: failed: {type(error).__name__}: {error}"]
        torch.cuda.empty_cache()
        args.out.write_text("\n".join(report) + "\n")
    text = "\n".join(report) + "\n"
    print(text)
    args.out.write_text(text)


if __name__ == "__main__":
    main()
