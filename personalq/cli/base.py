"""``personalq base``: base pipelines the repository's checkpoints run on."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Literal

import typer

from personalq.cli.common import fail

app = typer.Typer(help="Base pipelines.", no_args_is_help=True)

BASE_KEYS = {"sd15": "sd-1.5", "sdxl": "sdxl"}


@app.command("stand-in")
def stand_in(
    arch: Annotated[Literal["sd15", "sdxl"], typer.Option(help="the architecture to build")],
    out: Annotated[Path, typer.Option(help="the pipeline folder to write")],
    size: Annotated[
        Literal["real", "tiny"], typer.Option(help="real: the published sizes; tiny: the same classes, for tests")
    ] = "real",
    seed: Annotated[int, typer.Option(help="seed of the random weights")] = 0,
) -> None:
    """Write a diffusers pipeline folder with the exact SD 1.5 or SDXL architecture, random weights (fp16 on disk)
    and the real CLIP tokenizer: a base to load, quantize and serve real checkpoint formats on, and to measure
    memory and speed at real size, where the real weights cannot be downloaded."""
    from personalq.standin.bases import write_stand_in
    from personalq.standin.clip_vocab import VocabularyMissing

    if out.exists() and any(out.iterdir()):
        fail(f"{out} is not empty")
    try:
        write_stand_in(arch, out, size, seed)
    except VocabularyMissing as error:
        fail(str(error))
    typer.echo(f"wrote {out} ({arch}, {size}, random weights)")
    typer.echo(f'serve checkpoints for it with: PERSONALQ_BASE_MODELS=\'{{"{BASE_KEYS[arch]}": "{out.resolve()}"}}\'')
