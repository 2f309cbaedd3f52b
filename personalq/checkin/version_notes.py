"""What a model's description says of each of its versions, for a request that picks a version by it.

Model pages keep a changelog in their description ("v1 is easier to blend with other things in the prompt, v2 ...",
"Version 2 : 94 samples from official only", "v3.2.5版本最稳定"), and people pick a version by what it says: "the
version the card says blends more easily", "la versión entrenada solo con arte oficial", "作者说最稳定的那一版". A
version's *note* is the description's text from where it names that version to where it names another; a request
word found in one version's note alone is evidence for that version.
"""

from __future__ import annotations

import os
import re

from rapidfuzz import fuzz

from personalq.checkin.tokens import is_english, words
from personalq.repository.card import StoredCheckpoint
from personalq.repository.versions import parse_version

NOTE_CHARS = 200  # a version named last in a description: its note runs this far at most
SAME_WORD_RATIO = 85  # "oficial" is "official" (rapidfuzz ratio)
SHARED_PREFIX = 0.6  # of the shorter word: "blends" is "blend", "easily" is "easier"
MIN_PREFIX = 4
EVERYDAY_ENGLISH_ZIPF = 6.0  # words every English text uses ("the", "with", "more"): no note's own
_NUMBER = re.compile(r"(?i)v?(\d+(?:\.\d+)*)")
# words of the request that talk about versions and cards, never what one version's note says
_TALK = frozenset("version versions versión versão card page says said author lora model one build upload".split())


def _mentions(label: str) -> list[str]:
    """How a description may name the version labelled ``label``: the label, and its number as "v2", "version 2",
    "2版"."""
    forms = [label.strip()] if len(label.strip()) >= 2 else []
    parts = parse_version(label).parts
    number = ".".join(map(str, parts)) if parts else ((m := _NUMBER.search(label)) and m.group(1)) or ""
    short = re.sub(r"(?:\.0)+$", "", number)  # "v2.0" is said "Version 2" too
    for n in dict.fromkeys(x for x in (number, short) if x):
        forms += [f"v{n}", f"version {n}", f"ver {n}", f"{n}版"]
    return forms


def notes(description: str, cards: list[StoredCheckpoint]) -> dict[str, str]:
    """Each card's note in ``description`` (the cards are versions of one model), for those it names."""
    found: list[tuple[int, int, str]] = []  # start, end of a mention, and whose
    for card in cards:
        for form in _mentions(str(card.version or "")):
            pattern = rf"(?i)(?<![\w.]){re.escape(form)}(?![\w]|\.\d)"
            found += [(m.start(), m.end(), card.id) for m in re.finditer(pattern, description)]
    found.sort()
    said: dict[str, list[str]] = {}
    for (start, end, card_id), following in zip(found, [*found[1:], None]):
        stop = following[0] if following else min(len(description), end + NOTE_CHARS)
        if stop > end:
            said.setdefault(card_id, []).append(description[end:stop])
    return {card_id: " ".join(texts) for card_id, texts in said.items()}


def _same(a: str, b: str) -> bool:
    """Are ``a`` and ``b`` one word in two forms ("blends", "blend"; "easily", "easier") or two spellings of it
    ("oficial", "official")?"""
    if a == b:
        return True
    if min(len(a), len(b)) < MIN_PREFIX:
        return False
    shared = len(os.path.commonprefix([a, b]))
    return shared >= max(MIN_PREFIX, SHARED_PREFIX * min(len(a), len(b))) or fuzz.ratio(a, b) >= SAME_WORD_RATIO


def by_notes(
    request: str, cards: list[StoredCheckpoint], description: str, name: str, talked: bool = False
) -> list[StoredCheckpoint]:
    """The versions among ``cards`` whose note says most of the request's words that no other version's note says
    (none of the model's ``name``, no talk of versions), when some note says any and the request ``talked`` of
    versions ("la versión entrenada solo con arte oficial"); else all of them. Unasked, the picture's words are no
    version's ("a shy girl with a paper bag on her head" of "v1: trained on mostly girls with bags on their head")."""
    said = notes(description, cards)
    if not talked or not said:
        return cards
    named = set(words(name))
    asked = {
        w
        for w in words(request)
        if w not in _TALK and w not in named and not (w.isascii() and is_english(w, EVERYDAY_ENGLISH_ZIPF))
    }
    noted = {card_id: set(words(text)) for card_id, text in said.items()}
    found = {card_id: {w for w in asked if any(_same(w, n) for n in note)} for card_id, note in noted.items()}
    own = {
        card_id: hits - set().union(*(h for other, h in found.items() if other != card_id))
        for card_id, hits in found.items()
    }
    best = max((len(h) for h in own.values()), default=0)
    if best == 0:
        return cards
    winners = {card_id for card_id, hits in own.items() if len(hits) == best}
    return [c for c in cards if c.id in winners]


__all__ = ["by_notes", "notes"]
