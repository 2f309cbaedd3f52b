"""``personalq space build``: assemble a folder that is a ready Hugging Face Space.

The Space gets the package, the bundled demo zoo, ``pyproject.toml``, the Space's own ``app.py`` (public mode,
home on persistent storage) and its ``README.md`` whose front matter configures the Space, and
``requirements.txt`` that installs the CPU build of torch and then the package. Nothing else of the checkout
(tests, benchmarks, databases, virtual environments) goes in.
"""

from __future__ import annotations

import logging
import shutil
from dataclasses import dataclass
from pathlib import Path

log = logging.getLogger(__name__)

SPACE_FILES = {"app.py": "spaces/app.py", "README.md": "spaces/README.md", "requirements.txt": "spaces/requirements.txt",
               "pyproject.toml": "pyproject.toml"}
SPACE_TREES = ("personalq", "assets")
_IGNORED = shutil.ignore_patterns("__pycache__", "*.pyc", ".*", "*.egg-info")


class SpaceBuildError(Exception):
    """The checkout lacks something the Space needs, or the output folder is not empty."""


@dataclass(frozen=True)
class SpaceFolder:
    path: Path
    files: int
    bytes: int


def build_space(out: Path, checkout: Path) -> SpaceFolder:
    """Copy what the Space needs from ``checkout`` (a source checkout of PersonalQ) into the new folder ``out``."""
    missing = [source for source in [*SPACE_FILES.values(), *SPACE_TREES] if not (checkout / source).exists()]
    if missing:
        raise SpaceBuildError(f"{checkout} is not a PersonalQ checkout: missing {', '.join(missing)}")
    if out.exists() and any(out.iterdir()):
        raise SpaceBuildError(f"{out} is not empty; give a new folder")
    out.mkdir(parents=True, exist_ok=True)
    for target, source in SPACE_FILES.items():
        shutil.copyfile(checkout / source, out / target)
    for tree in SPACE_TREES:
        shutil.copytree(checkout / tree, out / tree, ignore=_IGNORED, symlinks=False)
    files = [p for p in out.rglob("*") if p.is_file()]
    folder = SpaceFolder(out, len(files), sum(p.stat().st_size for p in files))
    log.info("Space folder %s: %d files, %.0f MB", out, folder.files, folder.bytes / 2**20)
    return folder


__all__ = ["SpaceBuildError", "SpaceFolder", "build_space"]
