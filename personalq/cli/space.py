"""``personalq space build OUT``: a ready Hugging Face Space folder (see :mod:`personalq.space`)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from personalq.cli.common import fail
from personalq.config import PROJECT_ROOT
from personalq.space import SpaceBuildError, build_space

app = typer.Typer(help="Deploy as a Hugging Face Space.", no_args_is_help=True)


@app.command("build")
def build(out: Annotated[Path, typer.Argument(help="new folder to create the Space in")]) -> None:
    """Assemble a Space folder: push it to a Space repository, set the PERSONALQ_ADMIN_TOKEN secret, done."""
    try:
        folder = build_space(out, PROJECT_ROOT)
    except SpaceBuildError as exc:
        fail(str(exc))
    typer.echo(f"Space folder ready: {folder.path} ({folder.files} files, {folder.bytes / 2**20:.0f} MB)")
    typer.echo(
        "Next: git push it to a Space; set the secret PERSONALQ_ADMIN_TOKEN to enable imports and removals; "
        "attach persistent storage so the repository survives restarts."
    )
