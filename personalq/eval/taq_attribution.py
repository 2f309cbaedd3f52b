"""``personalq bench taq-attribution``: which layers' activation rounding makes a precision's error.

For each part of the UNet, the checkpoint is quantized at the precision as usual (every weight packed) and
activation quantization is then left on only in that part; the step error (:mod:`personalq.eval.step_error`)
on the FP32 trajectory says how much that part adds over the weights alone. Per step, unlike the image MSE,
the parts' contributions add up, so the table shows where the error is and how large the share is that
separation can act on: the cross-attention tensors, once with no separation and once with TAQ's.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
from tqdm.auto import tqdm

from personalq.eval.step_error import EVERY, recording_calls, step_error
from personalq.eval.taq_bench import bench_scenes
from personalq.serving.checkpoints import adapters_applied, applied, load_base, replaces_unet
from personalq.taq.calibration import calibrate, calibration_prompts
from personalq.taq.masks import token_mask
from personalq.taq.quantize import TAQConfig, keep_activation_quantization, quantize_unet
from personalq.zoo.build import stored_checkpoint
from personalq.zoo.evaluate import GUIDANCE, generate


def _layer(*fragments: str) -> Callable[[str], bool]:
    return lambda site: ":" not in site and any(f in site for f in fragments)


# part -> the sites whose activations stay quantized; the order is the table's
PARTS: dict[str, Callable[[str], bool]] = {
    "none (weights only)": lambda site: False,
    "conv_in, conv_out": lambda site: site.startswith(("conv_in", "conv_out")),
    "time embedding": _layer("time_embedding", "time_emb_proj"),
    "resnet conv1, conv2": _layer("conv1", "conv2"),
    "resnet skip (conv_shortcut)": _layer("conv_shortcut"),
    "up/downsamplers": _layer("samplers"),
    "transformer proj_in, proj_out": _layer("proj_in", "proj_out"),
    "self-attention (attn1)": _layer(".attn1."),
    "cross-attention projections (attn2 to_q, to_out)": _layer(".attn2."),
    "feed-forward (ff)": _layer(".ff."),
    "cross-attention Q, K/V rows, probabilities": lambda site: ".attn2:" in site,
    "every activation": lambda site: True,
}
SEPARATED = "cross-attention Q, K/V rows, probabilities"  # the part the protection modes treat differently


@dataclass
class AttributionReport:
    checkpoints: list[str]
    images_per_checkpoint: int
    errors: dict[tuple[str, str, str], list[float]] = field(
        default_factory=dict
    )  # (precision, part, mode) -> per image

    def table(self) -> str:
        precisions = list(dict.fromkeys(p for p, _, _ in self.errors))
        lines = [
            "| activations quantized in | "
            + " | ".join(f"{p} step error | {p} added over weights only" for p in precisions)
            + " |",
            "|" + " --- |" * (1 + 2 * len(precisions)),
        ]
        rows = [(part, "plain") for part in PARTS] + [(SEPARATED, "taq")]
        for part, mode in rows:
            cells = []
            for precision in precisions:
                error = np.mean(self.errors[(precision, part, mode)])
                floor = np.mean(self.errors[(precision, "none (weights only)", "plain")])
                cells += [f"{error:.2e}", f"{error - floor:+.2e}"]
            label = f"{part}, TAQ's separation" if mode == "taq" else part
            lines.append(f"| {label} | " + " | ".join(cells) + " |")
        return "\n".join(lines) + (
            f"\n\nStep error: the guided noise prediction's MSE to FP32 on the FP32 trajectory (every {EVERY}th "
            f"step); weights quantized at the precision in every row. {len(self.checkpoints)} checkpoints "
            f"({', '.join(self.checkpoints)}), {self.images_per_checkpoint} images each."
        )


def run_attribution(
    zoo: Path,
    concepts: list,
    precisions: dict[str, tuple[int, int]],
    images: int = 8,
    captions: int = 64,
    calibration_steps: int = 10,
    seed: int = 11,
    recipe: dict | None = None,
) -> AttributionReport:
    """``recipe``: ``TAQConfig`` fields every row shares (smoothing, first_last_8bit); default the config's."""
    recipe = recipe or {}
    zoo = Path(zoo)
    pipe = load_base(zoo / "base")
    base_unet = pipe.unet
    report = AttributionReport([c.id for c in concepts], images)
    for concept in tqdm(concepts, desc="checkpoints", unit=" ckpt"):
        card = stored_checkpoint(concept, zoo / "repository" / "weights" / concept.id)
        prompts = [concept.prompt(scene) for scene in bench_scenes(concept, images)]
        with applied(pipe, card) as p:
            with recording_calls(p.unet) as calls:
                generate(p, prompts, seed)
            observer = calibrate(
                p,
                calibration_prompts(concept.trigger, concept.category, captions),
                [concept.trigger],
                steps=calibration_steps,
            )
            source = copy.deepcopy(p.unet) if replaces_unet(card) else base_unet
        rows = [(precision, part, "plain") for precision in precisions for part in PARTS] + [
            (p, SEPARATED, "taq") for p in precisions
        ]
        for precision, part, mode in tqdm(rows, desc=concept.id, leave=False):
            wbits, abits = precisions[precision]
            quantized = keep_activation_quantization(
                quantize_unet(
                    copy.deepcopy(source), TAQConfig(wbits=wbits, abits=abits, mode=mode, **recipe), observer
                ),
                PARTS[part],
            )
            pipe.unet = quantized.unet
            mask = token_mask(pipe.tokenizer, [""] * len(prompts) + prompts, [concept.trigger], mode)
            with adapters_applied(pipe, card), quantized.context.protecting(mask):
                report.errors.setdefault((precision, part, mode), []).extend(
                    step_error(pipe.unet, calls, GUIDANCE).tolist()
                )
            pipe.unet = base_unet
    return report
