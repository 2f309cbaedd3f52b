"""The vocabulary of the demo world: categories, their emoji glyphs, scenes, lighting, styles and tints.

Every generated image, caption, personalized checkpoint and evaluator label is drawn from these tables, so
the classifier that scores generations and the data the models learn from can never disagree on a label.
"""

from __future__ import annotations

from dataclasses import dataclass

# The paper's 20 concept categories, each drawn from one or more single-codepoint Noto color emoji.
# ZWJ sequences are avoided: PIL's basic layout engine would render them as two glyphs.
CATEGORY_GLYPHS: dict[str, tuple[str, ...]] = {
    "dog": ("\U0001F415", "\U0001F436", "\U0001F429"),
    "cat": ("\U0001F408", "\U0001F431", "\U0001F63A"),
    "person": ("\U0001F9D1", "\U0001F469", "\U0001F468"),
    "bear": ("\U0001F43B", "\U0001F43C"),
    "horse": ("\U0001F40E", "\U0001F434", "\U0001F984"),
    "car": ("\U0001F697", "\U0001F699", "\U0001F695"),
    "toy": ("\U0001F9F8", "\U0001FA80", "\U0001FA81"),
    "watch": ("\u231A", "\u23F0"),
    "bag": ("\U0001F45C", "\U0001F392", "\U0001F45B"),
    "chair": ("\U0001FA91", "\U0001F4BA"),
    "house": ("\U0001F3E0", "\U0001F3E1"),
    "building": ("\U0001F3E2", "\U0001F3EC", "\U0001F3F0"),
    "bridge": ("\U0001F309",),
    "flower": ("\U0001F338", "\U0001F33B", "\U0001F339", "\U0001F337"),
    "tree": ("\U0001F333", "\U0001F332", "\U0001F334"),
    "mountain": ("\U0001F3D4", "\U0001F5FB", "\U0001F30B"),
    "painting": ("\U0001F5BC", "\U0001F3A8"),
    "drawing": ("\u270F", "\U0001F58D", "\U0001F4DD"),
    "logo": ("\u269C", "\U0001F530", "\u267B"),
    "shoe": ("\U0001F45F", "\U0001F45E", "\U0001F460", "\U0001F97E"),
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
