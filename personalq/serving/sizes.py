"""The image sizes offered for a base: its native square and the usual aspect ratios around it.

A base draws well near the size it was trained at (512 for SD 1.5, 1024 for SDXL, 64 for the demo base) and falls
apart well below it, so every preset keeps its short side at the native size: portrait and landscape lengthen one
side instead. Sides are multiples of 8, which the VAE needs.
"""

from __future__ import annotations

import re

from personalq.serving.allowance import Refused

# width : height, the aspects front ends offer; the short side stays at the base's native size
ASPECTS = ((1, 1), (2, 3), (3, 2), (3, 4), (4, 3), (9, 16), (16, 9))
_SIZE = re.compile(r"^\s*(\d{1,4})(?:\s*[x×]\s*(\d{1,4}))?\s*(?:\(|$)")


def _multiple_of_8(side: float) -> int:
    return max(8, int(round(side / 8)) * 8)


def size_presets(native: int) -> list[tuple[str, str]]:
    """(label, value) choices for a dropdown: ``"512 x 768 (2:3)"`` -> ``"512 x 768"``, the native square first."""
    choices = []
    for across, up in ASPECTS:
        short = min(across, up)
        width, height = _multiple_of_8(native * across / short), _multiple_of_8(native * up / short)
        choices.append((f"{width} x {height} ({across}:{up})", size_value(width, height)))
    return choices


def size_value(width: int, height: int) -> str:
    return f"{width} x {height}"


def parse_size(text: str) -> tuple[int, int]:
    """``"512 x 768"`` (what the dropdown and the API send) -> (512, 768), ``"512"`` -> the square; :class:`Refused`
    for anything else. The range is checked where the settings are
    (:class:`~personalq.serving.generation.GenerationParams`)."""
    match = _SIZE.match(str(text or ""))
    if not match:
        raise Refused("the size must read WIDTH x HEIGHT, e.g. 512 x 768")
    width = int(match.group(1))
    return width, int(match.group(2) or width)


__all__ = ["parse_size", "size_presets", "size_value"]
