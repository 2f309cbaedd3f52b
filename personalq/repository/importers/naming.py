"""Readable names from file names: ``mochi_corgi_v2`` is shown as "Mochi corgi", version "v2".

File stems and kohya's ``ss_output_name`` are what most LoRAs are named by, and they read badly in a question
("Which version of mochi_corgi?"). The version suffix (``_v2``, ``-000010``, ``v1.5``) goes to the version field;
underscores and hyphens become spaces, a camel-cased stem is split at its humps ("mochiCorgi" -> "mochi Corgi"),
format words (``lora``, ``locon``) are dropped, and an all-lower-case name gets a capital first letter. A name that
has its own capitals ("GhibliBackground") keeps them.
"""

from __future__ import annotations

import re

from personalq.repository.versions import STEM_SUFFIX, parse_version

_HUMP = re.compile(r"(?<=[a-z])(?=[A-Z][a-z])")
_VERSION_TOKEN = re.compile(r"(?i)[\s_\-.]*(?<![a-z0-9])v(?:er(?:sion)?)?\.?\s*\d+(?:\.\d+)*(?=$|[\s_\-])")
_FORMAT_WORDS = frozenset({"lora", "locon", "lycoris", "loha", "lokr", "safetensors"})


def readable_name(stem: str) -> tuple[str, str | None]:
    """(display name, version label or None) for a file stem or kohya output name."""
    version = parse_version(stem)
    label = version.short if version.number is not None else None
    base = stem.strip()
    if label:
        trimmed = STEM_SUFFIX.sub("", base)
        base = trimmed if trimmed != base else _VERSION_TOKEN.sub(" ", base, count=1)  # "x_v2.0_offset"
    words = [w for w in re.split(r"[\s_\-.]+", _HUMP.sub(" ", base)) if w and w.lower() not in _FORMAT_WORDS]
    if not words:
        return stem, label
    simple = all(w[1:] == w[1:].lower() for w in words)  # no capitals inside a word ("SinRC1VAE" keeps its own)
    if simple and (base[:1].islower() or all(w == w.lower() for w in words)):
        words = [w.lower() for w in words]
        words[0] = words[0][:1].upper() + words[0][1:]
    return " ".join(words), label
