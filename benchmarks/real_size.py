"""Serving at real size: the stand-in SD 1.5 and SDXL bases (published architectures, random weights).

    python benchmarks/real_size.py [--work /tmp/personalq-real-size] [--repeats 2]

Writes the SD 1.5 stand-in base once (``personalq base stand-in``), a rank-32 kohya-ss LoRA for it, imports the
LoRA, and measures, printing a Markdown report (also written to ``benchmarks/results/real-size.md``):

1. resident UNet bytes at FP32 / fp16 / W8 / W4 for SD 1.5 and SDXL (from the shapes: the real-size SDXL UNet
   is built on the ``meta`` device, nothing is allocated);
2. SD 1.5 base load time (fp16 files to float32), and the time to apply and remove the rank-32 LoRA, as every
   request does;
3. one SD 1.5 UNet step at 512x512 with classifier-free guidance (batch 2) per precision, side by side in one
   process, and how long the variant took to be ready: quantized on first use (calibrated on 4 trigger prompts x 2
   steps at 256 px: random weights make calibration quality moot, only speed is measured), loaded when stored;
4. peak process memory of one 512x512 SD 1.5 generation per precision, each in a fresh process that finds its
   variant stored (``--peak PRECISION`` is that child).

Random weights draw noise; speed and memory do not depend on the values.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

import torch

from personalq import compute
from personalq.config import load_settings
from personalq.repository.service import Repository
from personalq.serving.engine import Engine
from personalq.serving.generation import GenerationParams
from personalq.serving.variants import PRECISIONS, precision_config
from personalq.taq.masks import token_mask
from personalq.taq.quantize import quantized_bytes, weight_bytes

log = logging.getLogger("real_size")
RESULTS = Path(__file__).parent / "results" / "real-size.md"
PROMPT = "a photo of sks dog on a beach"
GB = 1024**3


def settings_for(work: Path):
    return load_settings(
        home=work / "home",
        base_models={"sd-1.5": str(work / "sd15")},
        memory_budget_mb=48_000,
        device="cpu",
        calibration_size=256,
        cpu_dtype="float32",  # what these figures call FP32 (auto would pick bfloat16 on a CPU with bf16 units)
    )


def prepare(work: Path) -> None:
    """The stand-in base and the imported LoRA (both kept in ``work`` for later runs)."""
    from personalq.standin.bases import write_stand_in
    from personalq.standin.formats import write_kohya_lora

    if not (work / "sd15" / "model_index.json").is_file():
        started = time.perf_counter()
        write_stand_in("sd15", work / "sd15", "real")
        log.info("wrote the SD 1.5 stand-in in %.0f s", time.perf_counter() - started)
    lora = work / "loras" / "bench-dog-r32.safetensors"
    if not lora.is_file():
        from personalq.serving.checkpoints import load_base

        write_kohya_lora(load_base(work / "sd15"), lora, rank=32, alpha=16.0, trigger="sks", output_name="bench-dog")
    repository = Repository(settings_for(work))
    repository.import_paths([lora.parent])


def card(repository: Repository):
    return repository.get("bench-dog-r32")


def bytes_table() -> list[str]:
    """Resident UNet bytes per precision, for both architectures, from the shapes of meta-device UNets."""
    from diffusers import UNet2DConditionModel

    from personalq.standin.bases import ARCHITECTURES

    rows = ["| architecture | parameters | FP32 | fp16 | W8 (W8A8) | W4 (W4A8) |", "|---|---|---|---|---|---|"]
    for arch in ("sd15", "sdxl"):
        with torch.device("meta"):
            unet = UNet2DConditionModel(**ARCHITECTURES[(arch, "real")].unet)
        full = weight_bytes(unet)
        w8, w4 = (quantized_bytes(unet, precision_config(p)) for p in ("W8A8", "W4A8"))
        params = sum(p.numel() for p in unet.parameters())
        label = ARCHITECTURES[(arch, "real")].label
        rows.append(
            f"| {label} | {params / 1e6:,.0f} M | {full / GB:.2f} GB | {full / 2 / GB:.2f} GB (0.50x) | "
            f"{w8 / GB:.2f} GB ({w8 / full:.3f}x) | {w4 / GB:.2f} GB ({w4 / full:.3f}x) |"
        )
    return rows


def lora_rows(engine: Engine, checkpoint, repeats: int) -> tuple[float, list[str]]:
    from personalq.serving.checkpoints import adapters_applied

    started = time.perf_counter()
    base = engine.base_location(checkpoint)
    pipe = engine.pipeline(base)
    pipe.unet = engine.float_unet(base)
    load_s = time.perf_counter() - started
    lora = engine.adapter(checkpoint)
    tensors = lora.state_dict
    rank = next(t.shape[0] for k, t in tensors.items() if k.endswith("lora_down.weight"))
    timings = []
    for _ in range(repeats + 1):
        started = time.perf_counter()
        with adapters_applied(pipe, checkpoint, lora):
            applied = time.perf_counter()
        timings.append((applied - started, time.perf_counter() - applied))
    apply_s = statistics.median(t[0] for t in timings[1:])
    remove_s = statistics.median(t[1] for t in timings[1:])
    modules = len({k.split(".")[0] for k in tensors})
    return load_s, [
        f"- base load (fp16 files -> float32, CPU): **{load_s:.1f} s**",
        f"- rank-{rank} kohya LoRA ({modules} modules, {sum(t.numel() for t in tensors.values()) / 1e6:.1f} M "
        f"parameters): apply **{apply_s:.2f} s**, remove **{remove_s:.2f} s** per request (median of {repeats})",
    ]


@torch.no_grad()
def step_rows(engine: Engine, checkpoint, repeats: int) -> list[str]:
    base = engine.base_location(checkpoint)
    pipe = engine.pipeline(base)
    prompts = ["", PROMPT]
    embeds, negative = pipe.encode_prompt(PROMPT, "cpu", 1, True, "")
    text = torch.cat([negative, embeds])
    latents = torch.randn(2, 4, 64, 64, generator=torch.Generator().manual_seed(0))
    timestep = torch.tensor(500)
    rows = ["| precision | UNet step (s) | vs FP32 | variant ready (s) |", "|---|---|---|---|"]
    reference = None
    for precision in PRECISIONS:
        config = precision_config(precision)
        started = time.perf_counter()
        variant = None if config is None else engine.quantized_unet(checkpoint, config)
        prepared_s = time.perf_counter() - started
        unet = engine.float_unet(base) if variant is None else variant.unet
        mask = None if variant is None else token_mask(pipe.tokenizer, prompts, checkpoint.triggers, config.mode)
        guard = variant.context.protecting(mask) if variant is not None else torch.no_grad()
        times = []
        with guard:
            for _ in range(repeats + 1):
                started = time.perf_counter()
                unet(latents, timestep, encoder_hidden_states=text)
                times.append(time.perf_counter() - started)
        step = statistics.median(times[1:])
        reference = reference or step
        log.info("%s: %.2f s per step", precision, step)
        prepared = "-" if config is None else f"{prepared_s:.0f}"
        rows.append(f"| {precision} | {step:.2f} | {step / reference:.2f}x | {prepared} |")
    return rows


def peak_child(work: Path, precision: str) -> None:
    """One 512x512 generation (2 steps: the peak does not grow with steps) in this fresh process."""
    settings = settings_for(work)
    engine = Engine(settings)
    checkpoint = card(Repository(settings))
    params = GenerationParams(steps=2, width=512, height=512)
    started = time.perf_counter()
    for _ in engine.generate(checkpoint, PROMPT, precision, params=params, previews=False):
        pass
    status = dict(line.split(":", 1) for line in Path("/proc/self/status").read_text().splitlines() if ":" in line)
    peak, now = (int(status[k].split()[0]) * 1024 for k in ("VmHWM", "VmRSS"))  # since exec, not since fork
    print(json.dumps({"peak_gb": peak / GB, "after_gb": now / GB, "seconds": time.perf_counter() - started}))


def peak_rows(work: Path) -> list[str]:
    rows = ["| precision | peak RSS | RSS after | wall (s) |", "|---|---|---|---|"]
    for precision in PRECISIONS:
        out = subprocess.run(
            [sys.executable, __file__, "--work", str(work), "--peak", precision],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
        result = json.loads(out.splitlines()[-1])
        rows.append(
            f"| {precision} | {result['peak_gb']:.2f} GB | {result['after_gb']:.2f} GB | {result['seconds']:.0f} |"
        )
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--work", type=Path, default=Path("/tmp/personalq-real-size"))
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--peak", choices=list(PRECISIONS), help=argparse.SUPPRESS)
    args = parser.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s: %(message)s")
    for chatty in ("diffusers", "transformers"):
        logging.getLogger(chatty).setLevel(logging.ERROR)
    if args.peak:
        peak_child(args.work, args.peak)
        return
    prepare(args.work)
    settings = settings_for(args.work)
    engine = Engine(settings, calibration_captions=4, calibration_steps=2)
    checkpoint = card(Repository(settings))
    report = [
        "# Real size: stand-in SD 1.5 and SDXL bases",
        "",
        f"`python benchmarks/real_size.py` · torch {torch.__version__} · {torch.get_num_threads()} threads · "
        f"{os.cpu_count()} CPUs",
        "",
        "## Resident UNet weights",
        *bytes_table(),
        "",
        "## SD 1.5: base and LoRA",
    ]
    _, lora = lora_rows(engine, checkpoint, args.repeats)
    report += [
        *lora,
        "",
        "## SD 1.5: one UNet step, 512x512, CFG batch 2 (side by side)",
        *step_rows(engine, checkpoint, args.repeats),
    ]
    del engine
    report += [
        "",
        "## SD 1.5: peak process memory, one 512x512 generation (fresh process each)",
        *peak_rows(args.work),
    ]
    text = "\n".join(report) + "\n"
    print(text)
    RESULTS.write_text(text)


if __name__ == "__main__":
    compute.run(main)  # timed on the engine's compute thread: a second computing thread would slow both
