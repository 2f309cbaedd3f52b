"""``personalq zoo``: build the bundled demo model zoo."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Optional

import typer

from personalq.cli.common import HomeOption, settings_for

app = typer.Typer(help="Build the bundled demo model zoo.", no_args_is_help=True)


@app.command("build")
def build(
    out: Annotated[Optional[Path], typer.Option(help="where the zoo is written; default assets/zoo")] = None,
    work: Annotated[Optional[Path], typer.Option(help="resumable working folder; default HOME/zoo-work")] = None,
    tiny: Annotated[bool, typer.Option("--tiny", help="a few steps on tiny data (for tests)")] = False,
    home: HomeOption = None,
) -> None:
    """Data -> VAE -> UNet -> personalized checkpoints -> cards and previews; resumes where it stopped."""
    from personalq.zoo.build import ZooBuildConfig, build_zoo

    settings = settings_for(home)
    config = ZooBuildConfig.tiny() if tiny else ZooBuildConfig()
    result = build_zoo(work or settings.home / "zoo-work", out or settings.assets_dir / "zoo", config, device=settings.resolved_device())
    typer.echo(f"zoo written to {result}")


@app.command("evaluate")
def evaluate(
    zoo: Annotated[Optional[Path], typer.Option(help="zoo folder; default assets/zoo")] = None,
    per_concept: Annotated[int, typer.Option(help="images per personalized checkpoint")] = 4,
    per_prompt: Annotated[int, typer.Option(help="base images per (category, scene) prompt")] = 2,
    home: HomeOption = None,
) -> None:
    """Generate with the base and every personalized checkpoint; print recognition rates, domain FID and speed."""
    from personalq.zoo.evaluate import evaluate_zoo

    settings = settings_for(home)
    typer.echo(evaluate_zoo(zoo or settings.assets_dir / "zoo", per_prompt=per_prompt, per_concept=per_concept).table())
