"""Options every command shares."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, NoReturn, Optional

import typer

from personalq.bundled import zoo_dir
from personalq.config import Settings, load_settings

HomeOption = Annotated[
    Optional[Path],
    typer.Option(
        "--home", help="PersonalQ home (database, index, caches); default $PERSONALQ_HOME or ./db", show_default=False
    ),
]


def settings_for(home: Path | None) -> Settings:
    return load_settings(home=home)


def fail(message: str, code: int = 1) -> NoReturn:
    typer.secho(f"error: {message}", fg=typer.colors.RED, err=True)
    raise typer.Exit(code)


def comma_list(text: str) -> list[str]:
    """The items of a comma-separated option value, stripped, empty ones dropped."""
    return [item.strip() for item in text.split(",") if item.strip()]


def zoo_folder(zoo: Path | None, settings: Settings, option: str = "--zoo") -> Path:
    """``zoo`` (default the bundled assets/zoo), refused unless a zoo has been built there."""
    zoo = zoo or zoo_dir(settings)
    if not (zoo / "base" / "model_index.json").is_file():
        fail(f"{zoo} holds no zoo (base/model_index.json): run `personalq zoo build` first or pass {option}")
    return zoo


SmoothingOption = Annotated[
    Optional[str],
    typer.Option(
        help="SmoothQuant migration strength alpha (0-1) of every layer whose input is rounded, or 'none'; "
        "default the recipe's (0.75)",
        show_default=False,
    ),
]
FirstLastOption = Annotated[
    Optional[bool],
    typer.Option(
        "--first-last-8bit/--no-first-last-8bit",
        help="keep conv_in and conv_out at 8 bits below W8A8; default the recipe's (on)",
        show_default=False,
    ),
]


def recipe_overrides(smoothing: str | None, first_last_8bit: bool | None) -> dict:
    """The quantization recipe fields a command's options change; the rest keep ``TAQConfig``'s defaults."""
    from pydantic import ValidationError

    from personalq.taq.quantize import TAQConfig

    fields: dict = {}
    if smoothing is not None:
        fields["smoothing"] = None if smoothing.strip().lower() == "none" else smoothing
        try:  # the config holds the bounds; its parsed value is what the command uses
            fields["smoothing"] = TAQConfig(smoothing=fields["smoothing"]).smoothing
        except ValidationError:
            fail(f"--smoothing takes a number from 0 to 1 or 'none', not {smoothing!r}")
    if first_last_8bit is not None:
        fields["first_last_8bit"] = first_last_8bit
    return fields
