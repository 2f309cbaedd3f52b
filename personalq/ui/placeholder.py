"""A drawn preview for a checkpoint that has none: its initials, base and kind on a colour of its own.

Every row of the Repository tab shows a picture, so a missing preview reads as "no picture" rather than as a
shifted gallery. The picture depends only on what it shows, so it is drawn once per (initials, base, kind,
colour) and kept in the previews folder the app already serves.
"""

from __future__ import annotations

import hashlib
import re
from pathlib import Path

from PIL import Image, ImageDraw, ImageFont

SIDE = 192
_WORD = re.compile(r"[^\W_]+")


def initials(name: str) -> str:
    """Up to two letters: the first of each of the first two words ("Mochi corgi" -> "MC"), or of the one word."""
    words = _WORD.findall(name) or ["?"]
    letters = "".join(w[0] for w in words[:2]) if len(words) > 1 else words[0][:2]
    return letters.upper()


def _colour(seed: str) -> tuple[int, int, int]:
    digest = hashlib.sha256(seed.encode()).digest()
    return tuple(60 + b % 120 for b in digest[:3])  # mid tones: white text stays readable


def placeholder_preview(name: str, base: str, kind: str, previews_dir: Path) -> str:
    """The path of the placeholder picture for a checkpoint (drawn on first use)."""
    letters = initials(name)
    key = hashlib.sha256(f"{letters}|{base}|{kind}|{name}".encode()).hexdigest()[:24]
    path = previews_dir / f"placeholder-{key}.png"
    if path.exists():
        return str(path)
    image = Image.new("RGB", (SIDE, SIDE), _colour(name))
    draw = ImageDraw.Draw(image)
    big, small = ImageFont.load_default(size=72), ImageFont.load_default(size=18)
    draw.text((SIDE / 2, SIDE * 0.42), letters, fill="white", font=big, anchor="mm")
    draw.text((SIDE / 2, SIDE * 0.78), base, fill="white", font=small, anchor="mm")
    draw.text((SIDE / 2, SIDE * 0.9), kind.replace("_", " "), fill="white", font=small, anchor="mm")
    previews_dir.mkdir(parents=True, exist_ok=True)
    partial = path.with_suffix(".part")
    image.save(partial, format="PNG")
    partial.replace(path)  # atomic: a concurrent reader never sees half a picture
    return str(path)
