"""``personalq quantize``: write a checkpoint's quantized UNet (TAQ or a baseline) as safetensors."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Optional

import typer

from personalq.cli.common import FirstLastOption, HomeOption, SmoothingOption, fail, recipe_overrides, settings_for


def quantize(
    checkpoint_id: Annotated[str, typer.Argument(help="repository checkpoint id")],
    wbits: Annotated[int, typer.Option(help="weight bits: 8 or 4")] = 8,
    abits: Annotated[int, typer.Option(help="activation bits: 8, 4, or 16 (weights only)")] = 8,
    mode: Annotated[
        str, typer.Option(help="taq (protect the trigger), plain (no separation), bos (protect the start token)")
    ] = "taq",
    quantizer: Annotated[str, typer.Option(help="linear (uniform affine) or log")] = "linear",
    rounding: Annotated[
        str, typer.Option(help="nearest, or adaround (learned rounding on the calibration inputs)")
    ] = "nearest",
    protect_weights: Annotated[
        bool,
        typer.Option(
            help="compute the protected K/V rows with a float copy of the cross-attention K/V weights "
            "(costs that copy's bytes)"
        ),
    ] = False,
    smoothing: SmoothingOption = None,
    first_last_8bit: FirstLastOption = None,
    captions: Annotated[int, typer.Option(help="calibration captions")] = 64,
    calibration_steps: Annotated[int, typer.Option(help="denoising steps per calibration caption")] = 10,
    out: Annotated[
        Optional[Path], typer.Option(help="folder for the file; default: a taq/ folder beside the checkpoint")
    ] = None,
    home: HomeOption = None,
) -> None:
    """Quantize the UNet a checkpoint runs on; prints one JSON line with the resident weight bytes."""
    from pydantic import ValidationError

    from personalq.repository.service import CheckpointNotFound, Repository
    from personalq.serving.bases import served_base
    from personalq.serving.checkpoints import CheckpointLoadError, load_base
    from personalq.serving.float_type import float_dtype
    from personalq.serving.variants import beside_checkpoint, produce_variant, variant_name
    from personalq.taq.quantize import TAQConfig, save_quantized, weight_bytes

    settings = settings_for(home)
    try:
        config = TAQConfig(
            wbits=wbits,
            abits=abits,
            mode=mode,
            quantizer=quantizer,
            rounding=rounding,
            protect_weights=protect_weights,
            **recipe_overrides(smoothing, first_last_8bit),
        )
    except ValidationError as error:
        fail("; ".join(f"--{e['loc'][0]}: {e['msg']}" for e in error.errors()))
    try:
        checkpoint = Repository(settings).get(checkpoint_id)
    except CheckpointNotFound:
        fail(f"no checkpoint {checkpoint_id!r} in {settings.home}")
    if not checkpoint.weights_path:
        fail(f"{checkpoint_id} is a metadata-only card: there are no weights to quantize")
    try:
        location = served_base(settings, checkpoint).location
        pipe = load_base(Path(location), settings.resolved_device(), float_dtype(settings, location))
        full_bytes = weight_bytes(pipe.unet)
        variant = produce_variant(
            pipe, checkpoint, config, captions, calibration_steps, calibration_size=settings.calibration_size
        )
    except CheckpointLoadError as error:
        fail(str(error))
    path = save_quantized(variant, (out or beside_checkpoint(checkpoint)) / variant_name(checkpoint, config))
    quantized_bytes = weight_bytes(variant.unet)
    typer.echo(
        json.dumps(
            {
                "checkpoint": checkpoint_id,
                "config": config.tag,
                "path": str(path),
                "weight_bytes_fp32": full_bytes,
                "weight_bytes_quantized": quantized_bytes,
                "ratio": round(quantized_bytes / full_bytes, 4),
            }
        )
    )
