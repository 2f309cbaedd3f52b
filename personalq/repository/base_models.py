"""Base-model keys: which base a checkpoint was trained on, as one short key, and the architecture behind it.

Civitai writes ``baseModel`` as display text ("SD 1.5", "SDXL 1.0", "SD 2.1 768", "Pony"), kohya-ss as
``ss_base_model_version`` ("sd_v1", "sdxl_base_v1-0"), model cards as Hub ids
("runwayml/stable-diffusion-v1-5"). Every card stores the one key they normalize to ("sd-1.5", "sdxl",
"sd-2.1", "pony"); settings map keys to base pipelines, and ``repo list --base`` filters by them.

A key's *architecture* ("sd1", "sd2", "sdxl") is what decides whether weights fit a base: Pony and Illustrious
are SDXL fine-tunes, so an SDXL base serves their LoRAs; a LoRA for SD 1.5 never fits an SDXL base.
"""

from __future__ import annotations

import re

from personalq.repository.versions import slugify

DEMO_BASE = "personalq-demo"  # the bundled demo zoo's base (a 2M-parameter UNet with a MiniLM text encoder)
DEFAULT_BASE = "sd-1.5"  # what a card that names no base was most likely trained on

ARCHITECTURES = {"sd1": "SD 1.x", "sd2": "SD 2.x", "sdxl": "SDXL", "demo": "the demo base"}
_SDXL_FINE_TUNES = ("pony", "illustrious", "noobai", "animagine")
_SD_VERSION = re.compile(r"\b(?:sd|stable[-_ ]?diffusion)[-_ ]?v?(\d)(?:[._-](\d))?(?!\d)")
_BARE_VERSION = re.compile(r"^v?(\d)[._-](\d)\b")  # "v1-5-pruned-emaonly", "2.1 768"


def normalise_base_model(name: str | None) -> str:
    """``"SD 1.5"`` -> ``"sd-1.5"``, ``"SDXL 1.0"`` -> ``"sdxl"``, ``"SD 2.1 768"`` -> ``"sd-2.1"``, ``"Pony"`` ->
    ``"pony"``, ``"runwayml/stable-diffusion-v1-5"`` -> ``"sd-1.5"``; a key maps to itself."""
    if not name or not str(name).strip():
        return DEFAULT_BASE
    text = str(name).strip().lower()
    if text == DEMO_BASE or text.startswith(DEMO_BASE):
        return DEMO_BASE
    for fine_tune in _SDXL_FINE_TUNES:
        if fine_tune in text:
            return fine_tune
    if "xl" in text:
        return "sdxl"
    match = _SD_VERSION.search(text) or _BARE_VERSION.search(text)
    if match:
        major, minor = match.group(1), match.group(2)
        return f"sd-{major}.{minor}" if minor is not None else f"sd-{major}"
    return slugify(text)[:64]


def architecture_of(key: str) -> str | None:
    """The architecture a base key stands for ("sd1", "sd2", "sdxl", "demo"), or None when it is not one this
    program can serve (SD 3, Flux, "other", ...)."""
    key = normalise_base_model(key)
    if key == DEMO_BASE:
        return "demo"
    if key == "sdxl" or key in _SDXL_FINE_TUNES:
        return "sdxl"
    if key.startswith("sd-1"):
        return "sd1"
    if key.startswith("sd-2"):
        return "sd2"
    return None


def describe(key: str) -> str:
    """A base key for a person: ``"sd-1.5"`` -> ``"sd-1.5 (SD 1.x)"``, ``"pony"`` -> ``"pony (SDXL)"``."""
    architecture = architecture_of(key)
    return f"{key} ({ARCHITECTURES[architecture]})" if architecture else f"{key} (an architecture not served here)"
