"""Quantized variants of repository checkpoints: which precision means what, where the file lives, how it is made.

A variant is the UNet a checkpoint runs on, quantized with TAQ (or a baseline) and calibrated on that
checkpoint's own trigger prompts: the base UNet for LoRA adapters and textual inversions (the adapter stays
in full precision on top), the fine-tuned UNet for DreamBooth. It is produced once and stored in a ``taq/``
folder beside the checkpoint's weights (where ``personalq quantize`` writes it and serving looks first) or
in the serving store under the home folder.

Variants are named by what they are made from (the weights' digest, the trigger prompts, the base), never by
the checkpoint id alone: an id can get new weights (``repo import --replace``), and ids that differ only in
case and punctuation slugify to the same file name.
"""

from __future__ import annotations

import copy
import hashlib
import json
import logging
from pathlib import Path

import torch
from diffusers import StableDiffusionPipeline

from personalq.repository.card import StoredCheckpoint
from personalq.repository.importers.base import weights_digest
from personalq.repository.versions import slugify
from personalq.serving.checkpoints import CheckpointLoadError, applied
from personalq.taq.calibration import calibrate, calibration_prompts
from personalq.taq.quantize import QuantizedUNet, TAQConfig, quantize_unet

log = logging.getLogger(__name__)

# (weight bits, activation bits); the TAQ bench measures the same rows the app offers
QUANTIZED_PRECISIONS: dict[str, tuple[int, int]] = {"W8A8": (8, 8), "W4A8": (4, 8), "W8A4": (8, 4), "W4A4": (4, 4)}
PRECISIONS: dict[str, tuple[int, int] | None] = {"FP32": None, **QUANTIZED_PRECISIONS}  # the app's precision menu


def precision_config(
    precision: str, trigger_aware: bool = True, quantizer: str = "linear", float_kv: bool = False
) -> TAQConfig | None:
    """The app's precision menu as a TAQ configuration; ``None`` is full precision.

    ``float_kv`` computes the trigger's K/V rows with float weights too (ignored without protection: see
    ``TAQConfig.keeps_float_kv``).
    """
    if precision not in PRECISIONS:
        raise ValueError(f"unknown precision {precision!r}; choose one of {', '.join(PRECISIONS)}")
    bits = PRECISIONS[precision]
    if bits is None:
        return None
    return TAQConfig(
        wbits=bits[0],
        abits=bits[1],
        mode="taq" if trigger_aware else "plain",
        quantizer=quantizer,
        protect_weights=float_kv,
    )


def beside_checkpoint(checkpoint: StoredCheckpoint) -> Path:
    weights = Path(checkpoint.weights_path)
    return (weights if weights.is_dir() else weights.parent) / "taq"


def weights_key(checkpoint: StoredCheckpoint) -> str:
    """The SHA-256 of the checkpoint's weights: what the engine's caches key fine-tunes and adapters by.

    The repository stores it at import; a card built by hand (no digest yet) is hashed here.
    """
    if checkpoint.weights_sha256:
        return checkpoint.weights_sha256
    if not checkpoint.weights_path:
        raise CheckpointLoadError(f"{checkpoint.id} is a metadata-only card: there are no weights to serve")
    return weights_digest(Path(checkpoint.weights_path))


def variant_key(checkpoint: StoredCheckpoint) -> str:
    """A digest of everything a variant is made from: the weights, and the trigger prompts it is calibrated on
    (TAQ protects the trigger's tokens, so a card replaced with a new trigger needs a new calibration)."""
    made_from = [
        weights_key(checkpoint),
        checkpoint.kind,
        checkpoint.base_model,
        checkpoint.triggers,
        calibration_subject(checkpoint),
    ]
    return hashlib.sha256(json.dumps(made_from).encode()).hexdigest()[:32]


def variant_name(checkpoint: StoredCheckpoint, config: TAQConfig) -> str:
    """The slug is for people browsing the folder; the key is what tells two variants apart."""
    return f"{slugify(checkpoint.id)}.{variant_key(checkpoint)}.{config.tag}.safetensors"


def variant_path(checkpoint: StoredCheckpoint, config: TAQConfig, store: Path) -> Path:
    """The variant ``personalq quantize`` left beside the checkpoint, else the serving store (``HOME/taq``).

    Serving writes only to its store, so a read-only checkpoint folder (a Space, the bundled zoo) still works.
    """
    beside = beside_checkpoint(checkpoint) / variant_name(checkpoint, config)
    return beside if beside.exists() else Path(store) / variant_name(checkpoint, config)


def calibration_subject(checkpoint: StoredCheckpoint) -> str:
    return checkpoint.subjects[0] if checkpoint.subjects else "subject"


def calibration_side(pipe, cap: int | None) -> int | None:
    native = pipe.unet.config.sample_size * pipe.vae_scale_factor
    return native if cap is None else min(native, cap)


@torch.no_grad()
def produce_variant(
    pipe: StableDiffusionPipeline,
    checkpoint: StoredCheckpoint,
    config: TAQConfig,
    captions: int = 64,
    calibration_steps: int = 10,
    calibration_size: int | None = None,
) -> QuantizedUNet:
    """Calibrate ``checkpoint`` in full precision on ``pipe`` (whose UNet must be the float base), then quantize.

    ``calibration_size`` caps the image side calibration generates at (a 512-px base calibrated at 512 on a CPU
    takes hours); a base whose native size is smaller calibrates at its own.
    """
    observer = None
    with applied(pipe, checkpoint) as p:
        if config.needs_calibration:
            trigger = (checkpoint.prompt_triggers or [checkpoint.canonical_trigger])[0]
            prompts = calibration_prompts(trigger, calibration_subject(checkpoint), captions)
            observer = calibrate(
                p,
                prompts,
                checkpoint.trigger_words,
                steps=calibration_steps,
                timestep_groups=config.timestep_groups,
                keep_inputs=8 if config.rounding == "adaround" else 0,
                size=calibration_side(p, calibration_size),
            )
        fine_tuned = copy.deepcopy(p.unet) if checkpoint.kind in ("dreambooth", "checkpoint") else None
    target = fine_tuned if fine_tuned is not None else copy.deepcopy(pipe.unet)
    log.info("quantizing %s as %s", checkpoint.id, config.tag)
    return quantize_unet(target, config, observer)
