"""The role a checkpoint plays in a picture: the subject, or a style, background, concept or detail laid over it."""

from __future__ import annotations

import re

from personalq.repository.card import StoredCheckpoint

_ROLE_WORDS = (  # (role, words of a card's name or tags that give it that role), first match wins
    ("background", {"background", "backgrounds", "scenery", "landscape", "environment", "backdrop", "place"}),
    ("detail", {"detail", "details", "detailer", "tweaker", "slider", "enhancer", "tool", "quality", "hands"}),
    ("style", {"style", "styles", "artstyle", "aesthetic", "medium", "artist"}),
    ("concept", {"concept", "clothing", "outfit", "pose", "poses", "costume", "object", "action", "props"}),
)
STYLE_WORDS = frozenset({"style", "styles", "artstyle"})
# the nouns a request calls a kind of model by beside its name ("lighthouse background lora", "t-pose pose lora")
ROLE_KINDS = frozenset(
    "background backgrounds backdrop scenery pose poses outfit outfits costume costumes clothing concept "
    "concepts".split()
)


def _said(card: StoredCheckpoint) -> set[str]:
    return {t.lower() for t in card.tags} | set(re.findall(r"[a-z]+", card.name.lower()))


def role_of(card: StoredCheckpoint) -> str:
    """The role a checkpoint plays in a composed picture, from its name, tags and styles (subject by default)."""
    said = _said(card)
    for role, words in _ROLE_WORDS:
        if said & words:
            return role
    return "style" if card.styles and not card.subjects else "subject"


def is_style(card: StoredCheckpoint) -> bool:
    """Does the checkpoint call itself a style (whatever else its tags say: "landscapes" of a game's style LoRA)?"""
    return role_of(card) == "style" or bool(_said(card) & STYLE_WORDS)


def is_character(card: StoredCheckpoint) -> bool:
    """Is the checkpoint tagged as a character?"""
    return bool({t.lower() for t in card.tags} & {"character", "characters"})


__all__ = ["ROLE_KINDS", "STYLE_WORDS", "is_character", "is_style", "role_of"]
