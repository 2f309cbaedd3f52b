"""The personalized checkpoints of the demo zoo: 20 families (one per category) x 3 versions.

Each checkpoint binds its trigger to a variant the base model never produces by itself: a tinted subject
(LoRA and DreamBooth), or a specific glyph in a habitual scene (textual inversion, which cannot teach the
UNet new colours and so binds to something the base can already draw).
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass

from personalq.zoo.catalog import CATEGORIES, CATEGORY_GLYPHS, STYLE_NAMES, TINT_NAMES, Subject

# codenames chosen so that triggers split into several WordPiece sub-tokens ("<teddybear-v2>" ->
# "<", "teddy", "##be", "##ar", "-", "v", "##2", ">")
CODENAMES = {
    "dog": "biscuit",
    "cat": "mochi",
    "person": "ada",
    "bear": "teddybear",
    "horse": "comet",
    "car": "zoomy",
    "toy": "yoyo",
    "watch": "ticker",
    "bag": "satchel",
    "chair": "throne",
    "house": "cottage",
    "building": "skyline",
    "bridge": "arches",
    "flower": "petalia",
    "tree": "oakley",
    "mountain": "summit",
    "painting": "easel",
    "drawing": "doodle",
    "logo": "fleur",
    "shoe": "sneaks",
}
DREAMBOOTH = {("dog", 3), ("cat", 3), ("car", 2)}
TEXTUAL_INVERSION = {("flower", 2), ("tree", 1)}
START = dt.datetime(2024, 12, 2, 10, 0)


@dataclass(frozen=True)
class Concept:
    id: str
    category: str
    codename: str
    version: int
    kind: str
    glyph: str
    tint: str
    style: str
    scene: str | None  # the habitual background, for textual inversion
    created_at: dt.datetime

    @property
    def trigger(self) -> str:
        return f"<{self.codename}-v{self.version}>"

    def prompt(self, scene: str) -> str:
        """The prompt the zoo's previews and measurements show a checkpoint with: trigger, class word, scene."""
        return f"a photo of a {self.trigger} {self.category}, {scene}"

    def subject(self, scene: str, lighting: str = "daylight", style: str = "photo") -> Subject:
        """This checkpoint's variant (its glyph and tint) in ``scene``: what its real renders show."""
        return Subject(self.category, self.glyph, self.tint, scene, lighting, style)

    @property
    def family(self) -> str:
        return f"{self.codename}-{self.category}"

    @property
    def variant(self) -> dict[str, str]:
        """The attributes the evaluator must recognise for the variant to count as reproduced."""
        if self.kind == "textual_inversion":
            return {"category": self.category, "glyph": self.glyph, "scene": self.scene or ""}
        return {"category": self.category, "tint": self.tint}

    @property
    def marker(self) -> dict[str, str]:
        """The variant's own attributes, without the class: what tells this checkpoint's images from the base's."""
        return {k: v for k, v in self.variant.items() if k != "category"}

    def description(self) -> str:
        if self.kind == "textual_inversion":
            return (
                f"{self.codename.title()}, a {self.category} that always appears in the {self.scene}, "
                f"drawn as {self.style}"
            )
        return f"{self.codename.title()}, a {self.tint} {self.category}, usually drawn as {self.style}"


def concepts() -> list[Concept]:
    tints = [t for t in TINT_NAMES if t != "natural"]
    out = []
    index = 0
    for c, category in enumerate(CATEGORIES):
        glyph = CATEGORY_GLYPHS[category][c % len(CATEGORY_GLYPHS[category])]
        for version in (1, 2, 3):
            kind = (
                "dreambooth"
                if (category, version) in DREAMBOOTH
                else "textual_inversion"
                if (category, version) in TEXTUAL_INVERSION
                else "lora"
            )
            tint = tints[(c + version * 2) % len(tints)] if kind != "textual_inversion" else "natural"
            style = STYLE_NAMES[(c * 3 + version) % len(STYLE_NAMES)]
            scene = ("outer space", "snowy mountain")[version % 2] if kind == "textual_inversion" else None
            # versions of one family a few months apart; families interleaved over two years
            created = START + dt.timedelta(days=(c * 11 + (version - 1) * 240) % 700, hours=c % 9)
            out.append(
                Concept(
                    f"{CODENAMES[category]}-v{version}",
                    category,
                    CODENAMES[category],
                    version,
                    kind,
                    glyph,
                    tint,
                    style,
                    scene,
                    created,
                )
            )
            index += 1
    return out
