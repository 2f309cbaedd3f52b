"""``personalq bench``: benchmarks that print the figures the README quotes."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

app = typer.Typer(help="Benchmarks.", no_args_is_help=True)


@app.command("import")
def import_(jsonl: Annotated[Path, typer.Argument(help="Civitai dump, one model per line (shared/data/civitai-models-2023-07.jsonl)")]) -> None:
    """Import every model version of a Civitai dump as card files; print the rate and the index rebuild time."""
    from personalq.eval.import_bench import run

    result = run(jsonl)
    typer.echo(result.table())
