"""Procedural renders of a :class:`Subject`: an emoji glyph composited on a drawn scene, graded and styled.

Everything is drawn at twice the output size and downsampled, so edges stay smooth at 64x64. The same
renderer makes training data, evaluator data and the "real" reference set for the domain FID.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from pathlib import Path

import numpy as np
from PIL import Image, ImageDraw, ImageEnhance, ImageFilter, ImageFont, ImageOps

from personalq.zoo.catalog import LIGHTINGS, SCENES, TINTS, Scene, Subject

EMOJI_FONT_CANDIDATES = (
    Path("/usr/share/fonts/truetype/noto/NotoColorEmoji.ttf"),
    Path("/usr/share/fonts/noto/NotoColorEmoji.ttf"),
)
_EMOJI_PIXEL_SIZE = 109  # the only size the CBDT bitmap strike of Noto Color Emoji offers


class EmojiFontMissing(RuntimeError):
    """Raised when Debian's fonts-noto-color-emoji is not installed."""


def emoji_font_path() -> Path:
    for path in EMOJI_FONT_CANDIDATES:
        if path.exists():
            return path
    raise EmojiFontMissing(
        "Noto Color Emoji not found; install Debian's fonts-noto-color-emoji (apt-get install fonts-noto-color-emoji)"
    )


@functools.lru_cache(maxsize=None)
def glyph_image(glyph: str) -> Image.Image:
    """The glyph as a tightly cropped RGBA image at the font's native bitmap size."""
    font = ImageFont.truetype(str(emoji_font_path()), _EMOJI_PIXEL_SIZE)
    canvas = Image.new("RGBA", (160, 160), (0, 0, 0, 0))
    ImageDraw.Draw(canvas).text((8, 8), glyph, font=font, embedded_color=True)
    bbox = canvas.getchannel("A").getbbox()
    if bbox is None:
        raise ValueError(f"the emoji font has no bitmap for {glyph!r}")
    return canvas.crop(bbox)


def _tinted(glyph: Image.Image, colour: tuple[int, int, int] | None) -> Image.Image:
    if colour is None:
        return glyph
    rgba = np.asarray(glyph, dtype=np.float32)
    luminance = rgba[..., :3] @ np.array([0.299, 0.587, 0.114], dtype=np.float32)
    shade = np.clip(luminance / 255.0 * 1.35, 0.0, 1.25)[..., None]
    rgb = np.clip(shade * np.array(colour, dtype=np.float32), 0, 255)
    return Image.fromarray(np.concatenate([rgb, rgba[..., 3:]], axis=-1).astype(np.uint8), "RGBA")


def _scene(scene: Scene, size: int, rng: np.random.Generator) -> Image.Image:
    top, bottom = (np.array(c, dtype=np.float32) for c in scene.sky)
    rows = np.linspace(0.0, 1.0, size, dtype=np.float32)[:, None]
    sky = top + (bottom - top) * rows
    pixels = np.repeat(sky[:, None, :], size, axis=1)
    horizon = int(size * scene.horizon)
    pixels[horizon:] = np.array(scene.ground, dtype=np.float32)
    image = Image.fromarray(pixels.astype(np.uint8), "RGB")
    draw = ImageDraw.Draw(image)
    s = size
    if scene.decoration == "sun":
        x = rng.uniform(0.65, 0.85) * s
        draw.ellipse((x, 0.08 * s, x + 0.14 * s, 0.22 * s), fill=(255, 230, 90))
        draw.rectangle((0, horizon - 0.06 * s, s, horizon), fill=(60, 140, 220))
    elif scene.decoration == "bushes":
        for _ in range(4):
            x = rng.uniform(0, s)
            draw.ellipse((x - 0.1 * s, horizon - 0.08 * s, x + 0.1 * s, horizon + 0.05 * s), fill=(50, 130, 50))
    elif scene.decoration == "peaks":
        for _ in range(3):
            x = rng.uniform(0, s)
            draw.polygon(
                [(x - 0.3 * s, horizon), (x, horizon - 0.35 * s), (x + 0.3 * s, horizon)], fill=(120, 130, 150)
            )
            draw.polygon(
                [(x - 0.08 * s, horizon - 0.25 * s), (x, horizon - 0.35 * s), (x + 0.08 * s, horizon - 0.25 * s)],
                fill=(250, 250, 255),
            )
    elif scene.decoration == "windows":
        for _ in range(3):
            x = rng.uniform(0, 0.8 * s)
            w, h = 0.2 * s, rng.uniform(0.35, 0.6) * s
            draw.rectangle((x, horizon - h, x + w, horizon), fill=(30, 30, 45))
            for wy in np.arange(horizon - h + 0.05 * s, horizon - 0.05 * s, 0.09 * s):
                for wx in np.arange(x + 0.03 * s, x + w - 0.05 * s, 0.07 * s):
                    if rng.random() < 0.6:
                        draw.rectangle((wx, wy, wx + 0.035 * s, wy + 0.04 * s), fill=(255, 215, 90))
    elif scene.decoration == "frame":
        x = rng.uniform(0.1, 0.6) * s
        draw.rectangle((x, 0.12 * s, x + 0.25 * s, 0.32 * s), fill=(90, 60, 40))
        draw.rectangle((x + 0.02 * s, 0.14 * s, x + 0.23 * s, 0.3 * s), fill=(120, 160, 200))
    elif scene.decoration == "trees":
        for _ in range(5):
            x = rng.uniform(0, s)
            draw.polygon([(x - 0.07 * s, horizon), (x, horizon - 0.3 * s), (x + 0.07 * s, horizon)], fill=(20, 70, 35))
    elif scene.decoration == "dunes":
        for _ in range(2):
            x = rng.uniform(0, s)
            draw.ellipse((x - 0.4 * s, horizon - 0.1 * s, x + 0.4 * s, horizon + 0.2 * s), fill=(200, 140, 75))
    elif scene.decoration == "stars":
        for _ in range(25):
            x, y = rng.uniform(0, s), rng.uniform(0, s)
            r = rng.uniform(0.004, 0.012) * s
            draw.ellipse((x - r, y - r, x + r, y + r), fill=(255, 255, 230))
    return image


def _graded(image: Image.Image, lighting: str) -> Image.Image:
    gain, lift = LIGHTINGS[lighting]
    pixels = np.asarray(image, dtype=np.float32) * np.array(gain, dtype=np.float32) + lift
    return Image.fromarray(np.clip(pixels, 0, 255).astype(np.uint8), "RGB")


def _styled(image: Image.Image, style: str) -> Image.Image:
    size = image.width
    if style == "photo":
        return image.filter(ImageFilter.GaussianBlur(0.6))
    if style == "sketch":
        colour = np.asarray(image, dtype=np.float32)
        edges = np.asarray(ImageOps.grayscale(image).filter(ImageFilter.FIND_EDGES), dtype=np.float32)
        strength = np.clip(edges / 60.0, 0.0, 1.0)[..., None]
        paper = np.array([246, 242, 232], dtype=np.float32)
        out = paper - strength * (paper - colour * 0.8)
        return Image.fromarray(np.clip(out, 0, 255).astype(np.uint8), "RGB")
    if style == "anime":
        flat = ImageOps.posterize(ImageEnhance.Color(image).enhance(1.7), 3)
        edges = ImageOps.grayscale(image).filter(ImageFilter.FIND_EDGES).point(lambda v: 255 if v > 40 else 0)
        return Image.composite(Image.new("RGB", image.size, (20, 20, 30)), flat, edges)
    if style == "watercolor":
        soft = image.filter(ImageFilter.ModeFilter(3)).filter(ImageFilter.GaussianBlur(1.0))
        washed = np.asarray(soft, dtype=np.float32) * 0.75 + np.array([250, 248, 240], dtype=np.float32) * 0.25
        return Image.fromarray(washed.astype(np.uint8), "RGB")
    if style == "pixel":
        small = image.resize((size // 4, size // 4), Image.Resampling.BILINEAR)
        return ImageOps.posterize(small, 4).resize((size, size), Image.Resampling.NEAREST)
    if style == "polaroid":
        sepia = np.asarray(image, dtype=np.float32) @ np.array(
            [[0.393, 0.349, 0.272], [0.769, 0.686, 0.534], [0.189, 0.168, 0.131]], dtype=np.float32
        )
        # half sepia, half colour: old prints fade, but a red dog stays a red dog
        faded = np.clip((sepia * 0.5 + np.asarray(image, dtype=np.float32) * 0.5) * 0.8 + 35, 0, 255).astype(np.uint8)
        photo = Image.fromarray(faded, "RGB").resize((int(size * 0.84), int(size * 0.76)))
        frame = Image.new("RGB", (size, size), (245, 243, 235))
        frame.paste(photo, (int(size * 0.08), int(size * 0.06)))
        return frame
    raise ValueError(f"unknown style {style!r}")


def render(
    subject: Subject, size: int = 64, seed: int = 0, tints: Mapping[str, tuple[int, int, int] | None] = TINTS
) -> Image.Image:
    """Draw one image of ``subject``; the seed moves the subject, its scale and the scene's decorations.

    ``tints`` maps tint names to colours: the catalog's, or a candidate palette being weighed
    (``personalq zoo tints``)."""
    rng = np.random.default_rng(seed)
    work = size * 2
    scene = next(s for s in SCENES if s.name == subject.scene)
    image = _scene(scene, work, rng)
    glyph = _tinted(glyph_image(subject.glyph), tints[subject.tint])
    extent = int(work * rng.uniform(0.5, 0.68))
    scale = extent / max(glyph.size)
    glyph = glyph.resize(
        (max(1, int(glyph.width * scale)), max(1, int(glyph.height * scale))), Image.Resampling.LANCZOS
    )
    if rng.random() < 0.5:
        glyph = ImageOps.mirror(glyph)
    x = int((work - glyph.width) / 2 + rng.uniform(-0.12, 0.12) * work)
    y = int(min(work - glyph.height, max(0, work * 0.72 - glyph.height + rng.uniform(-0.08, 0.12) * work)))
    image.paste(glyph, (x, y), glyph)
    image = _graded(image, subject.lighting)
    image = image.resize((size, size), Image.Resampling.LANCZOS)
    return _styled(image, subject.style)
