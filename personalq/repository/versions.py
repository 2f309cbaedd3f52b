"""Version numbers and family stems parsed out of the free text people put in model names.

Real names look like "v2.0_offset", "[v1.0_PRUNED]", "Epoch 4", "v3.0 (morden_pixel)", "bear_v2-000004".
The number orders versions inside a family; the qualifiers ("offset", "pruned", "dim16") are what people
refer to when they say "the pruned one".
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

_VERSION = re.compile(
    r"""(?ix)
    (?:^|(?<=[\s\[\(_\-.]))            # start, or after a separator
    (?:v(?:er(?:sion)?)?\.?\s*|epoch\s*|ep\s*|e(?=\d))  # v2, ver 2, version 2, epoch 4, ep4, e4
    (?P<number>\d+(?:\.\d+)*)
    """
)
_BARE_NUMBER = re.compile(r"^\s*(?P<number>\d+(?:\.\d+)*)\s*$")
_TRAILING_NUMBER = re.compile(r"(?<=[a-z)\]])\s+(?P<number>\d+(?:\.\d+)*)\s*$", re.I)  # "Gothic style 2"
_KOHYA_EPOCH = re.compile(r"-(?P<epoch>\d{6})$")
_QUALIFIER_SPLIT = re.compile(r"[\s\[\]\(\)_\-,/]+")
_STOP_QUALIFIERS = {"v", "ver", "version", "epoch", "ep", "", "lora", "model"}


@dataclass(frozen=True)
class VersionInfo:
    label: str
    number: float | None = None
    parts: tuple[int, ...] = ()
    qualifiers: tuple[str, ...] = field(default=())
    is_epoch: bool = False

    @property
    def short(self) -> str:
        """``"v2.0"`` / ``"epoch 4"``: the number alone, for version fields made up from file names."""
        if not self.parts:
            return self.label
        number = ".".join(str(p) for p in self.parts)
        return f"epoch {number}" if self.is_epoch else f"v{number}"

    @property
    def sort_key(self) -> tuple:
        return (self.parts or (10**9,), self.label.lower())


def _to_parts(text: str) -> tuple[int, ...]:
    return tuple(int(p) for p in text.split(".") if p)


def parse_version(text: str | int | float | None) -> VersionInfo:
    """Parse a version reference; never raises, returns ``number=None`` when there is no number."""
    if text is None:
        return VersionInfo(label="")
    label = str(text).strip()
    kohya = _KOHYA_EPOCH.search(label)
    if kohya:
        epoch = int(kohya.group("epoch"))
        return VersionInfo(label, float(epoch), (epoch,), (), True)
    match = _BARE_NUMBER.match(label) or _VERSION.search(label) or _TRAILING_NUMBER.search(label)
    if not match:
        words = tuple(w.lower() for w in _QUALIFIER_SPLIT.split(label) if w.lower() not in _STOP_QUALIFIERS)
        return VersionInfo(label, qualifiers=words)
    parts = _to_parts(match.group("number"))
    number = float(f"{parts[0]}.{''.join(str(p) for p in parts[1:]) or 0}")
    rest = label[: match.start()] + " " + label[match.end() :]
    qualifiers = tuple(
        w.lower() for w in _QUALIFIER_SPLIT.split(rest) if w.lower() not in _STOP_QUALIFIERS and not w.isdigit()
    )
    is_epoch = bool(re.match(r"(?i)\s*ep", label[match.start() : match.end()]))
    return VersionInfo(label, number, parts, qualifiers, is_epoch)


STEM_SUFFIX = re.compile(r"(?ix)([\s_\-.]*(?:v(?:er(?:sion)?)?\.?\s*\d+(?:\.\d+)*|-\d{6}|[\s_\-]\d+|epoch\s*\d+))+$")


def slugify(text: str) -> str:
    slug = re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")
    return slug or "unnamed"


def family_stem(name: str) -> str:
    """``"bear_v2-000004"`` -> ``"bear"``; ``"Teddy bear v4"`` -> ``"teddy-bear"``."""
    stem = STEM_SUFFIX.sub("", name.strip()) or name
    return slugify(stem)
