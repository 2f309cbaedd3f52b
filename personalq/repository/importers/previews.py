"""Finding a checkpoint's preview picture by the conventions the tools people use lay them out in.

In order of preference, for weights ``<name>.safetensors``:

1. a card's ``preview`` field (read by the card importer);
2. a picture beside the weights: ``<name>.preview.png`` (the WebUI and Civitai Helper), then ``<name>.png``,
   ``.jpg``, ``.jpeg``, ``.webp`` (and ``<name>.preview`` with those suffixes: ComfyUI-Lora-Manager);
3. the first image of ``<name>.civitai.info`` (Civitai Helper's JSON, ``images[0].url``), only when that picture
   is on disk: a relative path or ``file:`` URL beside the info file, or a downloaded copy named as the URL's last
   segment. A URL is never fetched: an import reads nothing but the folder it was given.

Every candidate must resolve inside the imported folder; a link out of it (or any path trick) is passed over with a
warning, and the checkpoint still imports, with the next candidate or a placeholder drawn by the app.
"""

from __future__ import annotations

import logging
from pathlib import Path
from urllib.parse import unquote, urlparse

from personalq.repository.importers.base import ImportProblem, ensure_inside, present

log = logging.getLogger(__name__)

PICTURE_SUFFIXES = (".png", ".jpg", ".jpeg", ".webp")
SIDECAR_SUFFIXES = tuple(f".preview{s}" for s in PICTURE_SUFFIXES) + PICTURE_SUFFIXES


def _stem(weights: Path) -> str:
    """The name previews are named after: a file's name less its suffix, a weights folder's whole name."""
    return weights.name if weights.is_dir() else weights.stem


def _usable(candidate: Path, root: Path) -> Path | None:
    """The candidate resolved, when it is a picture file inside ``root``; None (logged) when it is not."""
    if not present(candidate):
        return None
    try:
        resolved = ensure_inside(root, candidate, "preview")
    except ImportProblem as exc:
        log.warning("%s", exc)
        return None
    if resolved.suffix.lower() not in PICTURE_SUFFIXES or not resolved.is_file():
        return None
    return resolved


def sidecar_preview(weights: Path, root: Path) -> Path | None:
    """A picture beside the weights (a file or a folder) named after them (convention 2 above)."""
    stem = _stem(weights)
    for suffix in SIDECAR_SUFFIXES:
        found = _usable(weights.with_name(stem + suffix), root)
        if found is not None:
            return found
    return None


def civitai_image(info: dict, info_path: Path, root: Path) -> Path | None:
    """The first image of a ``.civitai.info`` when a copy of it is on disk beside the info file (convention 3)."""
    images = info.get("images")
    first = images[0] if isinstance(images, list) and images else None
    url = first.get("url") if isinstance(first, dict) else None
    if not isinstance(url, str) or not url.strip() or len(url) > 4096:
        return None
    parsed = urlparse(url.strip())
    if parsed.scheme in ("http", "https"):
        name = Path(unquote(parsed.path)).name  # a downloaded copy keeps the URL's file name
        candidates = [info_path.with_name(name)] if name else []
    elif parsed.scheme in ("", "file"):
        reference = unquote(parsed.path)
        if not reference or Path(reference).is_absolute():
            return None  # only paths relative to the info file: an absolute one names something outside
        candidates = [info_path.parent / reference]
    else:
        return None
    return next((found for found in (_usable(c, root) for c in candidates) if found is not None), None)
