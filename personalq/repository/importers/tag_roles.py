"""Sorting a model's tags (Civitai's tags, kohya's caption tags) into subjects, styles and concepts.

Tags arrive as one flat list, but a person filters by style ("my ink wash LoRAs") and asks by subject ("the corgi
one"). The rule, applied to each tag in order (lower-cased, WebUI escapes undone):

1. **Concepts** say what kind of file it is or describe every training picture, not what this one shows: Civitai's
   category tags (``style``, ``concept``, ``character``, ``clothing``, ``tool``, ``textual inversion``, ...) and
   booru tags that any picture has (``1girl``, ``solo``, ``masterpiece``, ``white background``, ...).
2. **Styles** name a look or a medium: a tag in :data:`STYLE_WORDS` (``anime``, ``watercolor``, ``3d``, ``pixel
   art``, ``cyberpunk``, ...) or whose last word is a medium (:data:`STYLE_ENDINGS`: ``... style``, ``... art``,
   ``... painting(s)``, ``... illustration``, ``... photography``, ...), so "ink wash painting" is a style.
3. **Subjects** are the rest: what the pictures show ("corgi", "hanbok", "buildings").

A style model whose tags name no style gets its own name as its style: a model is a style model when a tag says
so (``style``, ``art style``, ``artstyle``, ``style lora``) or its name ends in a medium ("Food Photography",
"Alumalim style"). The sorted lists are what the card's ``subjects`` and ``styles`` hold; every tag also stays in
``tags``, so nothing a person might search for is lost.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

STYLE_MARKERS = frozenset({"style", "styles", "art style", "artstyle", "style art", "style lora", "art styles"})
CONCEPT_TAGS = STYLE_MARKERS | frozenset(
    {
        *"concept concepts character characters clothing clothes outfit costume poses pose tool tools helper".split(),
        *"lora locon lycoris loha dora lokr embedding embeddings negative checkpoint model inpainting".split(),
        *"slider utility assets meme memes art artist beautiful detailed cute masterpiece quality".split(),
        "concept lora",
        "textual inversion",
        "negative embedding",
        "base model",
        "general purpose",
        "highly detailed",
        "high quality",
        "best quality",
    }
)
_GENERIC_BOORU = re.compile(
    r"^(?:\d+\+?(?:girls?|boys?|others?)|solo|solo focus|masterpiece|best quality|high quality|highres|absurdres|"
    r"looking at viewer|simple background|white background|upper body|full body|smile|open mouth|blush)$"
)
STYLE_WORDS = frozenset(
    {
        "anime",
        "manga",
        "cartoon",
        "chibi",
        "comic",
        "comics",
        "realistic",
        "photorealistic",
        "photorealism",
        "semi-realistic",
        "semi realistic",
        "hyperrealistic",
        "photo",
        "analog",
        "cinematic",
        "watercolor",
        "watercolour",
        "ink",
        "sketch",
        "lineart",
        "line art",
        "pixel art",
        "pixelart",
        "3d",
        "2d",
        "3d render",
        "cg",
        "cel shading",
        "cellshading",
        "cel-shading",
        "isometric",
        "low poly",
        "vector",
        "flat color",
        "retro",
        "vintage",
        "cyberpunk",
        "steampunk",
        "vaporwave",
        "synthwave",
        "gothic",
        "surrealism",
        "surreal",
        "abstract",
        "minimalist",
        "impressionism",
        "ukiyo-e",
        "ukiyoe",
        "art nouveau",
        "art deco",
        "baroque",
        "pop art",
        "neon",
        "painting",
        "paintings",
        "drawing",
        "illustration",
        "photography",
        "chinese painting",
        "sumi-e",
    }
)
STYLE_ENDINGS = (
    "style",
    "styles",
    "art",
    "artwork",
    "painting",
    "paintings",
    "drawing",
    "drawings",
    "illustration",
    "illustrations",
    "render",
    "photography",
    "aesthetic",
    "artstyle",
)
_ESCAPE = re.compile(r"\\([()\[\]{}:])")
_MODEL_WORDS = re.compile(r"(?i)\b(?:lora|locon|lycoris|loha|ti|embedding|model)\b|\[[^\]]*\]|[()]")


@dataclass
class TagRoles:
    subjects: list[str] = field(default_factory=list)
    styles: list[str] = field(default_factory=list)
    concepts: list[str] = field(default_factory=list)


def _clean(tag: str) -> str:
    return " ".join(_ESCAPE.sub(r"\1", tag).replace("_", " ").split()).strip(" ,").lower()


def is_concept(tag: str) -> bool:
    return tag in CONCEPT_TAGS or bool(_GENERIC_BOORU.match(tag))


def is_style(tag: str) -> bool:
    words = tag.split()
    return tag in STYLE_WORDS or (len(words) > 1 and words[-1] in STYLE_ENDINGS)


def style_name(name: str) -> str | None:
    """A model name that names a style ("Food Photography", "Ekune Style LoRA"), cleaned of format words."""
    cleaned = _clean(_MODEL_WORDS.sub(" ", name))
    return cleaned if cleaned and is_style(cleaned) else None


def sort_tags(tags: list[str], name: str = "") -> TagRoles:
    """Tags sorted by the rule of this module; ``name`` is the model's name, for a style model's own style."""
    roles = TagRoles()
    seen: set[str] = set()
    for raw in tags:
        tag = _clean(str(raw))
        if not tag or tag in seen:
            continue
        seen.add(tag)
        if is_concept(tag):
            roles.concepts.append(tag)
        elif is_style(tag):
            roles.styles.append(tag)
        else:
            roles.subjects.append(tag)
    own = style_name(name) if name else None
    if own and own not in roles.styles:
        roles.styles.insert(0, own)
    elif not roles.styles and STYLE_MARKERS & seen and name:
        roles.styles.append(_clean(_MODEL_WORDS.sub(" ", name)) or _clean(name))
    return roles
