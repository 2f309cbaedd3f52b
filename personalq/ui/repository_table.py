"""The Repository tab's table: one row per checkpoint with its thumbnail, so the table and the previews are one view.

A thumbnail is the checkpoint's preview (copied into the served previews folder, see :mod:`personalq.ui.media`) or,
when it has none, a drawn placeholder (:mod:`personalq.ui.placeholder`): every row shows a picture, and a missing
one is visible as such. Cells are Markdown, so the picture is an image link to Gradio's file route for the previews
folder, which the app already serves (and nothing else of the home).
"""

from __future__ import annotations

from pathlib import Path
from urllib.parse import quote

from personalq.repository.card import StoredCheckpoint
from personalq.ui.media import published_preview
from personalq.ui.placeholder import placeholder_preview

COLUMNS = [
    "preview",
    "id",
    "name",
    "chat",
    "version",
    "kind",
    "base",
    "styles",
    "trigger",
    "created",
    "last used",
    "edited",
]
COLUMN_WIDTHS = [
    "84px",
    "130px",
    "180px",
    "130px",
    "70px",
    "90px",
    "120px",
    "120px",
    "140px",
    "100px",
    "120px",
    "110px",
]
DATATYPES = ["markdown" if column in ("preview", "chat") else "str" for column in COLUMNS]
ID_COLUMN = COLUMNS.index("id")
CHAT_COLUMN = COLUMNS.index("chat")
USE_IN_CHAT = "💬 use in chat"


def thumbnail_path(checkpoint: StoredCheckpoint, previews_dir: Path) -> str:
    """The served copy of the checkpoint's preview, or its placeholder."""
    published = published_preview(checkpoint.preview_path, previews_dir)
    if published:
        return published
    return placeholder_preview(checkpoint.name, checkpoint.base_model, checkpoint.kind, previews_dir)


def _image_cell(path: str, alt: str) -> str:
    alt = alt.replace("[", "(").replace("]", ")")
    return f"![{alt}](gradio_api/file={quote(path)})"


def rows(checkpoints: list[StoredCheckpoint], previews_dir: Path) -> list[list[str]]:
    return [
        [
            _image_cell(thumbnail_path(c, previews_dir), c.name),
            c.id,
            c.name,
            USE_IN_CHAT,
            c.version or "",
            c.kind,
            c.base_model,
            ", ".join(c.styles),
            c.canonical_trigger or "",
            f"{c.created_at:%Y-%m-%d}",
            f"{c.last_used_at:%Y-%m-%d %H:%M}" if c.last_used_at else "",
            "✎ " + ", ".join(c.edited) if c.edited else "",
        ]
        for c in checkpoints
    ]


def gallery(checkpoints: list[StoredCheckpoint], previews_dir: Path) -> list[tuple[str, str]]:
    """The same pictures larger, one per row in the table's order, captioned with the id."""
    return [(thumbnail_path(c, previews_dir), f"{c.id}: {c.canonical_trigger or 'no trigger'}") for c in checkpoints]


def chat_request(checkpoint: StoredCheckpoint) -> str:
    """What "use in chat" puts in the chat's box: the checkpoint named as Check-in finds it (its name, version and
    first trigger), for the person to finish with what the picture should show."""
    name = checkpoint.name
    if checkpoint.version and checkpoint.version.lower() not in name.lower():
        name = f"{name} {checkpoint.version}"
    trigger = f" ({checkpoint.canonical_trigger})" if checkpoint.canonical_trigger else ""
    return f"{name}{trigger}, "
