"""How an image was made, written into its PNG the way the AUTOMATIC1111 WebUI writes it.

The WebUI stores one ``tEXt`` chunk named ``parameters``::

    a corgi in ink wash, mochicorgi, inkwash style <lora:mochi_corgi_v2:0.8> <lora:ink_wash:0.6>
    Negative prompt: blurry, lowres
    Steps: 20, Sampler: Euler a, CFG scale: 7, Seed: 1234, Size: 512x512, Model: v1-5-pruned, Lora hashes: "..."

and its PNG Info tab, ComfyUI's loaders and Civitai's uploader all read that chunk, so an image made here says
how to make it again anywhere. Pillow's ``PngInfo`` writes the chunk; :func:`read_parameters` parses it back so
one click can reuse an image's settings.
"""

from __future__ import annotations

import re
from pathlib import Path

from PIL import Image
from PIL.PngImagePlugin import PngInfo
from pydantic import BaseModel, Field

CHUNK = "parameters"
_NEGATIVE = "Negative prompt: "
_NETWORK = re.compile(r"\s*<lora:(?P<name>[^:<>]+):(?P<weight>-?[\d.]+)>")
# "Key: value" pairs of the last line; a quoted value may hold commas
_FIELD = re.compile(r'\s*(?P<key>[\w ]+?):\s*(?P<value>"(?:[^"\\]|\\.)*"|[^,]*)(?:,|$)')


class NetworkUse(BaseModel):
    """One adapter as the WebUI names it in a prompt: the file's stem and its strength."""

    name: str
    weight: float
    hash: str = ""  # the first 10 hex digits of the file's SHA-256 (the WebUI's AutoV2)


class ImageParameters(BaseModel):
    """Everything needed to make an image again."""

    prompt: str
    negative_prompt: str = ""
    steps: int
    sampler: str = ""
    cfg_scale: float
    seed: int
    width: int
    height: int
    model: str = ""
    model_hash: str = ""
    networks: list[NetworkUse] = Field(default_factory=list)

    def text(self) -> str:
        """The ``parameters`` chunk's text."""
        prompt = " ".join([self.prompt.strip()] + [f"<lora:{n.name}:{n.weight:g}>" for n in self.networks]).strip()
        fields = [
            ("Steps", str(self.steps)),
            ("Sampler", self.sampler),
            ("CFG scale", f"{self.cfg_scale:g}"),
            ("Seed", str(self.seed)),
            ("Size", f"{self.width}x{self.height}"),
            ("Model hash", self.model_hash),
            ("Model", self.model),
        ]
        hashes = ", ".join(f"{n.name}: {n.hash}" for n in self.networks if n.hash)
        if hashes:
            fields.append(("Lora hashes", f'"{hashes}"'))
        lines = [prompt]
        if self.negative_prompt.strip():
            lines.append(_NEGATIVE + self.negative_prompt.strip())
        lines.append(", ".join(f"{key}: {value}" for key, value in fields if value))
        return "\n".join(lines)


def save_png(image: Image.Image, path: Path, parameters: ImageParameters) -> Path:
    """Write ``image`` to ``path`` with its ``parameters`` chunk."""
    info = PngInfo()
    info.add_text(CHUNK, parameters.text())
    image.save(path, format="PNG", pnginfo=info)
    return path


def read_parameters(path: Path) -> ImageParameters | None:
    """The parameters an image carries, or None for a PNG without the chunk (or not a PNG this can read)."""
    try:
        with Image.open(path) as image:
            text = image.info.get(CHUNK) if image.format == "PNG" else None
    except (OSError, ValueError):
        return None
    return parse_parameters(text) if text else None


def parse_parameters(text: str) -> ImageParameters | None:
    """The WebUI's ``parameters`` text back into fields; None when its settings line is missing or malformed."""
    lines = text.strip().split("\n")
    if len(lines) < 2:
        return None
    settings = {m.group("key").strip(): m.group("value").strip().strip('"') for m in _FIELD.finditer(lines[-1])}
    body = lines[:-1]
    negative_at = next((i for i, line in enumerate(body) if line.startswith(_NEGATIVE)), len(body))
    prompt = "\n".join(body[:negative_at])
    negative = "\n".join(body[negative_at:])[len(_NEGATIVE) :] if negative_at < len(body) else ""
    hashes = dict(pair.split(": ", 1) for pair in settings.get("Lora hashes", "").split(", ") if ": " in pair)
    networks = [
        NetworkUse(name=m.group("name"), weight=float(m.group("weight")), hash=hashes.get(m.group("name"), ""))
        for m in _NETWORK.finditer(prompt)
    ]
    try:
        width, height = (int(side) for side in settings["Size"].split("x"))
        return ImageParameters(
            prompt=_NETWORK.sub("", prompt).strip(),
            negative_prompt=negative.strip(),
            steps=int(settings["Steps"]),
            sampler=settings.get("Sampler", ""),
            cfg_scale=float(settings["CFG scale"]),
            seed=int(settings["Seed"]),
            width=width,
            height=height,
            model=settings.get("Model", ""),
            model_hash=settings.get("Model hash", ""),
            networks=networks,
        )
    except (KeyError, ValueError):
        return None
