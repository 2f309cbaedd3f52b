"""``personalq space build``: assemble a folder that is a ready Hugging Face Space.

The Space gets the package, the bundled demo zoo, ``pyproject.toml``, the Space's own ``app.py`` (public mode,
home on persistent storage) and its ``README.md`` whose front matter configures the Space, and
``requirements.txt`` that installs the CPU build of torch and then the package. Nothing else of the checkout
(tests, benchmarks, databases, virtual environments) goes in, and nothing git ignores inside those trees either:
files made on this machine (the demo base's text encoder, copied in from an installed package at first start)
are made again on the Space.
"""

from __future__ import annotations

import logging
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

log = logging.getLogger(__name__)

SPACE_FILES = {
    "app.py": "spaces/app.py",
    "README.md": "spaces/README.md",
    "requirements.txt": "spaces/requirements.txt",
    "pyproject.toml": "pyproject.toml",
}
SPACE_TREES = ("personalq", "assets")
_IGNORED = shutil.ignore_patterns("__pycache__", "*.pyc", ".*", "*.egg-info")


class SpaceBuildError(Exception):
    """The checkout lacks something the Space needs, or the output folder is not empty."""


@dataclass(frozen=True)
class SpaceFolder:
    path: Path
    files: int
    bytes: int


def _files_git_keeps(checkout: Path) -> set[Path] | None:
    """Every file of the checkout that git does not ignore (tracked or new); None outside a git checkout."""
    if not (checkout / ".git").exists():
        return None
    listed = subprocess.run(
        ["git", "-C", str(checkout), "ls-files", "--cached", "--others", "--exclude-standard", "-z"],
        capture_output=True,
        check=True,
    ).stdout.decode()
    return {(checkout / name).resolve() for name in listed.split("\0") if name}


def _ignoring(kept: set[Path] | None):
    """A ``copytree`` ignore: caches and hidden files always; in a git checkout, also whatever git ignores (a
    file git does not keep, a folder holding none)."""
    kept_folders = {folder for path in kept or () for folder in path.parents}

    def ignore(folder: str, names: list[str]) -> set[str]:
        skipped = set(_IGNORED(folder, names))
        if kept is not None:
            for name in names:
                path = (Path(folder) / name).resolve()
                if path not in (kept if path.is_file() else kept_folders):
                    skipped.add(name)
        return skipped

    return ignore


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
    tracked = _files_git_keeps(checkout)
    for tree in SPACE_TREES:
        shutil.copytree(checkout / tree, out / tree, ignore=_ignoring(tracked), symlinks=False)
    files = [p for p in out.rglob("*") if p.is_file()]
    folder = SpaceFolder(out, len(files), sum(p.stat().st_size for p in files))
    log.info("Space folder %s: %d files, %.0f MB", out, folder.files, folder.bytes / 2**20)
    return folder


__all__ = ["SpaceBuildError", "SpaceFolder", "build_space"]
