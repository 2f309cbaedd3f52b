"""A visitor's images: one folder of the home's outputs per browser, each image a PNG that says how it was made.

The browser keeps only its gallery id (``gr.BrowserState``), so the gallery survives a page reload in the same
browser while the files stay on the server, in the one folder the app serves from. Everything the browser sends
back is treated as hostile: an id that is not one this module could have drawn is replaced by a new one, and an
image is named only by its file name, found inside the visitor's own folder, never by a path. Each folder keeps at
most ``max_images`` images (the oldest go first), so no visitor fills the disk; retention
(:mod:`personalq.retention`) removes what is older than the deployment keeps.
"""

from __future__ import annotations

import logging
import re
import time
import uuid
from pathlib import Path

from PIL import Image

from personalq.serving.png_parameters import ImageParameters, read_parameters, save_png

log = logging.getLogger(__name__)

MAX_IMAGES = 100  # per visitor
_GALLERY_ID = re.compile(r"^[0-9a-f]{32}$")
_IMAGE_NAME = re.compile(r"^[0-9]{19}-[0-9a-f]{8}\.png$")  # the time it was made, in ns, then a random part


class ImageHistory:
    """The images of each gallery id under ``outputs_dir``, newest first."""

    def __init__(self, outputs_dir: Path, max_images: int = MAX_IMAGES):
        self.outputs_dir = outputs_dir
        self.max_images = max_images

    @staticmethod
    def new_id() -> str:
        return uuid.uuid4().hex

    def own_id(self, claimed: object) -> str:
        """``claimed`` (what the browser sent) when it is a gallery id as :meth:`new_id` draws them, else a new
        one: a visitor keeps their gallery across reloads, and nothing else a browser sends names a folder."""
        return claimed if isinstance(claimed, str) and _GALLERY_ID.match(claimed) else self.new_id()

    def folder(self, gallery_id: str) -> Path:
        if not _GALLERY_ID.match(gallery_id):
            raise ValueError("not a gallery id")
        return self.outputs_dir / gallery_id

    def save(self, gallery_id: str, image: Image.Image, parameters: ImageParameters) -> Path:
        """Write ``image`` with its ``parameters`` chunk as the gallery's newest image; the oldest beyond
        ``max_images`` are deleted."""
        folder = self.folder(gallery_id)
        folder.mkdir(parents=True, exist_ok=True)
        stamp = time.time_ns()
        newest = self.images(gallery_id, limit=1)
        if newest:  # two images in one clock tick still sort in the order they were made
            stamp = max(stamp, int(newest[0].name.split("-", 1)[0]) + 1)
        path = folder / f"{stamp:019d}-{uuid.uuid4().hex[:8]}.png"
        partial = path.with_suffix(".part")
        save_png(image, partial, parameters)
        partial.replace(path)  # a gallery listed meanwhile never shows half an image
        for old in self.images(gallery_id, limit=None)[self.max_images :]:
            old.unlink(missing_ok=True)
        return path

    def images(self, gallery_id: str, limit: int | None = MAX_IMAGES) -> list[Path]:
        """The gallery's images, newest first (their names start with the time they were made)."""
        folder = self.folder(gallery_id)
        if not folder.is_dir() or folder.is_symlink():
            return []
        names = sorted((p.name for p in folder.iterdir() if _IMAGE_NAME.match(p.name)), reverse=True)
        paths = [folder / name for name in names]
        return paths if limit is None else paths[:limit]

    def find(self, gallery_id: str, shown: object) -> Path | None:
        """The gallery's image the page shows as ``shown`` (a served URL or path: only its last part is read), or
        None when the visitor's folder holds no such image."""
        name = str(shown or "").replace("\\", "/").rsplit("/", 1)[-1].split("?", 1)[0]
        if not _IMAGE_NAME.match(name):
            return None
        path = self.folder(gallery_id) / name
        return path if path.is_file() and not path.is_symlink() else None

    def parameters(self, gallery_id: str, shown: object) -> ImageParameters | None:
        """How the gallery's image ``shown`` was made, from its PNG; None when it is not one of the visitor's."""
        path = self.find(gallery_id, shown)
        return read_parameters(path) if path else None


__all__ = ["ImageHistory", "MAX_IMAGES"]
