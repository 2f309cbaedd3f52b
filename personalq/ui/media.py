"""Files the web app shows, kept inside the home so it serves from there and nowhere else.

A card's preview may live anywhere the person keeps their models; the app shows a copy under the home's
``previews`` folder, named by the source's content, so a changed preview gets a new copy and two cards with the
same picture share one. Uploads are copied out of Gradio's temporary folder into one folder per upload, so a card
and the weights uploaded with it land next to each other, and the repository's paths stay valid after Gradio
cleans its temporary files.
"""

from __future__ import annotations

import functools
import hashlib
import shutil
import uuid
from pathlib import Path

PREVIEW_SUFFIXES = (".png", ".jpg", ".jpeg", ".webp", ".gif")


def published_preview(source: str | Path | None, previews_dir: Path) -> str | None:
    """The path of ``source``'s copy inside ``previews_dir`` (made on first use), or None if it is not a picture."""
    if not source:
        return None
    path = Path(source)
    if path.suffix.lower() not in PREVIEW_SUFFIXES or not path.is_file():
        return None
    stat = path.stat()
    digest = _digest(str(path), stat.st_mtime_ns, stat.st_size)
    copy = previews_dir / f"{digest}{path.suffix.lower()}"
    if not copy.exists():
        previews_dir.mkdir(parents=True, exist_ok=True)
        partial = copy.with_suffix(copy.suffix + ".part")
        shutil.copyfile(path, partial)
        partial.replace(copy)  # atomic: a concurrent reader never sees half a picture
    return str(copy)


@functools.lru_cache(maxsize=65536)
def _digest(path: str, mtime_ns: int, size: int) -> str:
    """The content hash, read once per version of the file (browsing shows every preview on each search)."""
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()[:32]


def store_uploads(files: list[str], uploads_dir: Path) -> Path:
    """Copy uploaded files (Gradio temporary paths) into a new folder of ``uploads_dir``, under their own names."""
    folder = uploads_dir / uuid.uuid4().hex[:16]
    folder.mkdir(parents=True)
    for file in files:
        name = Path(file).name
        if name.startswith("."):
            name = "_" + name  # no hidden files: the importers skip them and so would the person
        shutil.copyfile(file, folder / name)
    return folder.resolve()


__all__ = ["published_preview", "store_uploads"]
