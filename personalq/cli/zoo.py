"""``personalq zoo``: build the bundled demo model zoo."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Optional

import typer

from personalq.bundled import zoo_dir
from personalq.cli.common import HomeOption, comma_list, fail, settings_for, zoo_folder

app = typer.Typer(help="Build the bundled demo model zoo.", no_args_is_help=True)


@app.command("build")
def build(
    out: Annotated[Optional[Path], typer.Option(help="where the zoo is written; default assets/zoo")] = None,
    work: Annotated[Optional[Path], typer.Option(help="resumable working folder; default HOME/zoo-work")] = None,
    tiny: Annotated[bool, typer.Option("--tiny", help="a few steps on tiny data (for tests)")] = False,
    recipe: Annotated[
        str,
        typer.Option(
            help="personalization recipe: shipped (the bundled checkpoints' first recipe) or gpu "
            "(about a minute per checkpoint on a GPU, five on 2 CPU cores)"
        ),
    ] = "shipped",
    workers: Annotated[
        int,
        typer.Option(
            min=1,
            max=64,
            help="checkpoints trained at once, one process each (on a GPU, 14 built 42 checkpoints in 6 minutes)",
        ),
    ] = 1,
    home: HomeOption = None,
) -> None:
    """Data -> VAE -> UNet -> personalized checkpoints -> cards and previews; resumes where it stopped."""
    from personalq.zoo.build import ZooBuildConfig, build_zoo
    from personalq.zoo.personalize import PersonalizeConfig

    settings = settings_for(home)
    try:
        personalize = PersonalizeConfig.named(recipe)
    except ValueError as error:
        fail(str(error))
    config = ZooBuildConfig.tiny() if tiny else ZooBuildConfig(personalize=personalize)
    result = build_zoo(
        work or settings.home / "zoo-work",
        out or zoo_dir(settings),
        config,
        device=settings.resolved_device(),
        workers=workers,
    )
    typer.echo(f"zoo written to {result}")


@app.command("previews")
def previews(
    out: Annotated[Optional[Path], typer.Option(help="zoo folder; default assets/zoo")] = None,
    home: HomeOption = None,
) -> None:
    """Draw every checkpoint's preview again with the zoo's current base (after its VAE or UNet changed)."""
    from personalq.zoo.build import refresh_previews

    settings = settings_for(home)
    zoo = zoo_folder(out, settings, "--out")
    typer.echo(
        f"{len(refresh_previews(zoo, settings.resolved_device()))} previews drawn in {zoo / 'repository' / 'previews'}"
    )


@app.command("evaluator")
def evaluator(
    out: Annotated[Optional[Path], typer.Option(help="zoo folder; default assets/zoo")] = None,
    work: Annotated[Optional[Path], typer.Option(help="resumable working folder; default HOME/zoo-work")] = None,
    images: Annotated[int, typer.Option(min=16, help="held-out renders it learns from")] = 20000,
    steps: Annotated[int, typer.Option(min=1, help="training steps at batch 128")] = 2400,
    warm_start: Annotated[
        bool, typer.Option("--warm-start", help="begin from the zoo's current evaluator instead of random weights")
    ] = False,
    home: HomeOption = None,
) -> None:
    """Train the domain evaluator again against the zoo's current VAE: after its decoder or the catalog's tints \
changed."""
    from personalq.serving.checkpoints import load_base
    from personalq.zoo.evaluator import train_evaluator

    settings = settings_for(home)
    zoo = zoo_folder(out, settings, "--out")
    current = zoo / "evaluator.safetensors"
    if warm_start and not current.is_file():
        fail(f"--warm-start: {zoo} has no evaluator to start from")
    device = settings.resolved_device()
    train_evaluator(
        load_base(zoo / "base", device).vae,
        work or settings.home / "zoo-work",
        current,
        images,
        steps,
        device=device,
        init=current if warm_start else None,
    )
    typer.echo(f"evaluator written to {current}")


@app.command("evaluate")
def evaluate(
    zoo: Annotated[Optional[Path], typer.Option(help="zoo folder; default assets/zoo")] = None,
    per_concept: Annotated[int, typer.Option(help="images per personalized checkpoint")] = 4,
    per_prompt: Annotated[int, typer.Option(help="base images per (category, scene) prompt")] = 2,
    unet: Annotated[
        Optional[Path],
        typer.Option(help="evaluate the base with this UNet folder instead (e.g. another training step)"),
    ] = None,
    personalized: Annotated[bool, typer.Option(help="also evaluate the personalized checkpoints")] = True,
    categories: Annotated[
        Optional[str], typer.Option(help="comma-separated subset of the 20 categories; default all")
    ] = None,
    guidance: Annotated[
        Optional[float], typer.Option(min=0.0, max=30.0, help="classifier-free guidance scale; default the zoo's")
    ] = None,
    home: HomeOption = None,
) -> None:
    """Generate with the base and every personalized checkpoint; print recognition rates, domain FID and speed."""
    from personalq.zoo.catalog import CATEGORIES
    from personalq.zoo.evaluate import GUIDANCE, evaluate_zoo

    settings = settings_for(home)
    if unet is not None and not (unet / "config.json").is_file():
        fail(f"--unet {unet} is not a UNet folder (no config.json)")
    chosen = tuple(comma_list(categories)) if categories is not None else CATEGORIES
    if unknown := sorted(set(chosen) - set(CATEGORIES)):
        fail(f"unknown categories {', '.join(unknown)}; the zoo has {', '.join(CATEGORIES)}")
    if not chosen:
        fail("--categories names no category")
    report = evaluate_zoo(
        zoo or zoo_dir(settings),
        per_prompt=per_prompt,
        per_concept=per_concept,
        unet=unet,
        personalized=personalized,
        categories=chosen,
        guidance=GUIDANCE if guidance is None else guidance,
    )
    typer.echo(report.table())
    if report.per_checkpoint:
        typer.echo("\nper checkpoint, with the trigger:\n\n" + report.checkpoint_table())


def parse_colour(text: str) -> tuple[str, tuple[int, int, int]]:
    """``silver=190,190,200`` -> ("silver", (190, 190, 200))."""
    name, _, rgb = text.partition("=")
    try:
        colour = tuple(int(v) for v in rgb.split(","))
    except ValueError:
        colour = ()
    if not name.strip() or len(colour) != 3 or not all(0 <= v <= 255 for v in colour):
        raise ValueError(f"--candidate takes NAME=R,G,B with three values from 0 to 255, not {text!r}")
    return name.strip(), colour  # type: ignore[return-value]


@app.command("tints")
def tints(
    candidate: Annotated[
        Optional[list[str]], typer.Option(help="a colour to weigh beside the catalog's, NAME=R,G,B (repeatable)")
    ] = None,
    subjects: Annotated[int, typer.Option(min=2, max=60, help="subjects drawn in every tint")] = 40,
    zoo: Annotated[Optional[Path], typer.Option(help="zoo folder whose VAE is asked; default assets/zoo")] = None,
    home: HomeOption = None,
) -> None:
    """How far apart the zoo's VAE keeps each tint (and candidate colours): close latents are lost in decoding."""
    from diffusers import AutoencoderKL

    from personalq.zoo.catalog import TINTS
    from personalq.zoo.tint_separation import separation_table, tint_separation

    zoo = zoo_folder(zoo, settings_for(home))
    try:
        candidates = dict(parse_colour(text) for text in candidate or [])
    except ValueError as error:
        fail(str(error))
    if clash := set(candidates) & set(TINTS):
        fail(f"--candidate {', '.join(sorted(clash))}: already a catalog tint; give the candidate another name")
    vae = AutoencoderKL.from_pretrained(zoo / "base", subfolder="vae").eval()
    typer.echo(separation_table(tint_separation(vae, candidates, subjects)))
