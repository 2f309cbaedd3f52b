"""Where the bundled demo zoo lies in the assets folder, written down once.

The runtime reads the zoo only as data: start-up imports its cards into an empty repository, and serving falls
back to its base for a card whose ``base_model`` the settings do not map. The code that builds the zoo
(``personalq.zoo``) and the benchmarks that run on it are not needed for either.
"""

from __future__ import annotations

from pathlib import Path

from personalq.config import Settings


def zoo_dir(settings: Settings) -> Path:
    return settings.assets_dir / "zoo"


def cards_dir(settings: Settings) -> Path:
    """The import root of the demo's cards, weights and previews."""
    return zoo_dir(settings) / "repository"


def base_dir(settings: Settings) -> Path:
    """The demo's base pipeline: the base of every card whose ``base_model`` is not in ``settings.base_models``."""
    return zoo_dir(settings) / "base"
