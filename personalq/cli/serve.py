"""``personalq serve``: launch the web app."""

from __future__ import annotations

from typing import Annotated

import typer

from personalq.cli.common import HomeOption, settings_for


def serve(
    host: Annotated[str, typer.Option(help="interface to listen on")] = "127.0.0.1",
    port: Annotated[int, typer.Option(help="port")] = 7860,
    home: HomeOption = None,
) -> None:
    """Start the PersonalQ web app on the repository in HOME (importing the bundled demo on first start)."""
    from personalq.runtime import start
    from personalq.ui.app import launch

    launch(start(settings_for(home)), host=host, port=port)
