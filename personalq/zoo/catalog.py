"""The vocabulary of the demo world: categories, their emoji glyphs, scenes, lighting, styles and tints.

Every generated image, caption, personalized checkpoint and evaluator label is drawn from these tables, so
the classifier that scores generations and the data the models learn from can never disagree on a label.
"""

from __future__ import annotations

from dataclasses import dataclass

# The paper's 20 concept categories, each drawn from one or more single-codepoint Noto color emoji.
# ZWJ sequences are avoided: PIL's basic layout engine would render them as two glyphs.
CATEGORY_GLYPHS: dict[str, tuple[str, ...]] = {
    "dog": ("\U0001f415", "\U0001f436", "\U0001f429"),
    "cat": ("\U0001f408", "\U0001f431", "\U0001f63a"),
    "person": ("\U0001f9d1", "\U0001f469", "\U0001f468"),
    "bear": ("\U0001f43b", "\U0001f43c"),
    "horse": ("\U0001f40e", "\U0001f434", "\U0001f984"),
    "car": ("\U0001f697", "\U0001f699", "\U0001f695"),
    "toy": ("\U0001f9f8", "\U0001fa80", "\U0001fa81"),
    "watch": ("\u231a", "\u23f0"),
    "bag": ("\U0001f45c", "\U0001f392", "\U0001f45b"),
    "chair": ("\U0001fa91", "\U0001f4ba"),
    "house": ("\U0001f3e0", "\U0001f3e1"),
    "building": ("\U0001f3e2", "\U0001f3ec", "\U0001f3f0"),
    "bridge": ("\U0001f309",),
    "flower": ("\U0001f338", "\U0001f33b", "\U0001f339", "\U0001f337"),
    "tree": ("\U0001f333", "\U0001f332", "\U0001f334"),
    "mountain": ("\U0001f3d4", "\U0001f5fb", "\U0001f30b"),
    "painting": ("\U0001f5bc", "\U0001f3a8"),
    "drawing": ("\u270f", "\U0001f58d", "\U0001f4dd"),
    "logo": ("\u269c", "\U0001f530", "\u267b"),
    "shoe": ("\U0001f45f", "\U0001f45e", "\U0001f460", "\U0001f97e"),
}
CATEGORIES: tuple[str, ...] = tuple(CATEGORY_GLYPHS)
GLYPHS: tuple[str, ...] = tuple(g for glyphs in CATEGORY_GLYPHS.values() for g in glyphs)

# Words a caption may use for a category; the first is canonical and is what prompts say by default.
CATEGORY_WORDS: dict[str, tuple[str, ...]] = {
    "dog": ("dog", "puppy"),
    "cat": ("cat", "kitten"),
    "person": ("person", "portrait"),
    "bear": ("bear",),
    "horse": ("horse", "pony"),
    "car": ("car",),
    "toy": ("toy", "plushie"),
    "watch": ("watch", "clock"),
    "bag": ("bag", "handbag"),
    "chair": ("chair", "seat"),
    "house": ("house", "home"),
    "building": ("building", "tower"),
    "bridge": ("bridge",),
    "flower": ("flower", "blossom"),
    "tree": ("tree",),
    "mountain": ("mountain", "peak"),
    "painting": ("painting", "artwork"),
    "drawing": ("drawing", "pencil"),
    "logo": ("logo", "emblem"),
    "shoe": ("shoe", "sneaker"),
}


@dataclass(frozen=True)
class Scene:
    """A background drawn procedurally: a sky gradient over a ground band, plus optional decorations."""

    name: str
    sky: tuple[tuple[int, int, int], tuple[int, int, int]]
    ground: tuple[int, int, int]
    horizon: float  # fraction of the height where the ground starts
    decoration: str = ""


SCENES: tuple[Scene, ...] = (
    Scene("sunny beach", ((90, 170, 245), (170, 215, 250)), (236, 210, 150), 0.62, "sun"),
    Scene("lush park", ((140, 200, 240), (200, 230, 250)), (80, 170, 70), 0.58, "bushes"),
    Scene("snowy mountain", ((150, 170, 200), (215, 225, 240)), (245, 248, 252), 0.66, "peaks"),
    Scene("city street at night", ((15, 20, 50), (40, 45, 80)), (55, 55, 60), 0.7, "windows"),
    Scene("living room", ((225, 205, 170), (235, 220, 190)), (130, 85, 50), 0.7, "frame"),
    Scene("forest lake", ((40, 110, 60), (70, 140, 80)), (60, 120, 190), 0.6, "trees"),
    Scene("desert dunes", ((240, 200, 140), (250, 225, 180)), (215, 160, 90), 0.6, "dunes"),
    Scene("outer space", ((5, 5, 20), (20, 10, 45)), (20, 10, 45), 1.0, "stars"),
)
SCENE_NAMES: tuple[str, ...] = tuple(s.name for s in SCENES)

# Lighting is a global colour grade: (multiplier per channel, additive lift).
LIGHTINGS: dict[str, tuple[tuple[float, float, float], float]] = {
    "daylight": ((1.0, 1.0, 1.0), 0.0),
    "dawn": ((1.08, 0.9, 0.98), 12.0),
    "golden hour": ((1.15, 0.95, 0.7), 8.0),
    "blue hour": ((0.7, 0.85, 1.2), 0.0),
    "neon night": ((0.75, 0.45, 1.05), -10.0),
    "overcast": ((0.85, 0.87, 0.9), 18.0),
}
LIGHTING_NAMES: tuple[str, ...] = tuple(LIGHTINGS)

# Styles change how the whole picture is drawn; the caption names them the way people ask for them.
STYLES: dict[str, str] = {
    "photo": "a photo of",
    "sketch": "a pencil sketch of",
    "anime": "an anime drawing of",
    "watercolor": "a watercolor painting of",
    "pixel": "pixel art of",
    "polaroid": "a vintage polaroid of",
}
STYLE_NAMES: tuple[str, ...] = tuple(STYLES)

# A tint recolours the subject only; base-model data is always "natural", so a tinted subject is a variant
# that only a personalized checkpoint produces.
# Pink replaced teal (20, 180, 190), which the VAE's encoder put next to azure, far closer than any other two
# tints are (``personalq zoo tints``; the distances: benchmarks/README.md, demo zoo), so no checkpoint could draw it.
TINTS: dict[str, tuple[int, int, int] | None] = {
    "natural": None,
    "crimson": (220, 30, 50),
    "azure": (40, 120, 240),
    "emerald": (30, 190, 90),
    "violet": (150, 60, 220),
    "golden": (240, 185, 30),
    "pink": (250, 120, 190),
}
TINT_NAMES: tuple[str, ...] = tuple(TINTS)


@dataclass(frozen=True)
class Subject:
    """What one image shows: everything the evaluator can be asked to recognise."""

    category: str
    glyph: str
    tint: str = "natural"
    scene: str = "lush park"
    lighting: str = "daylight"
    style: str = "photo"
