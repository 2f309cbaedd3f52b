"""Options every command shares."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, NoReturn, Optional

import typer

from personalq.config import Settings, load_settings

HomeOption = Annotated[
    Optional[Path],
    typer.Option("--home", help="PersonalQ home (database, index, caches); default $PERSONALQ_HOME or ./db", show_default=False),
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
    zoo = zoo or settings.assets_dir / "zoo"
    if not (zoo / "base" / "model_index.json").is_file():
        fail(f"{zoo} holds no zoo (base/model_index.json): run `personalq zoo build` first or pass {option}")
    return zoo
