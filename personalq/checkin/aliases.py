"""Other names a card's description gives what it draws: "Midnight (Nemuri Kayama) from My Hero Academia",
"OMGkawaiiAngel (KAngel) from needy girl overdose", "Aka. Hoppou, Northern Princess".

Fans ask for a character by whichever name they know, and model pages often give the other one only in their
opening lines. Only those shapes count, where one side is already the card's name or trigger, and only names:
title-case Latin words, one of them at least a word no English text uses ("Lena Oxton", not "Default Costumes" or
"Blue Archive"), so a description's ordinary asides never become identity.
"""

from __future__ import annotations

import re

from personalq.checkin.tokens import field_tokens, is_english

OPENING = 400  # characters of a description where a page introduces what it draws
MAX_WORDS = 3
_AKA = re.compile(r"(?i)\b(?:a\.?k\.?a\.?|also known as|also called|nicknamed)[\s:,]+(?P<names>[^.!?\n]+)")
_LIST_BREAK = re.compile(r",|/|;|\bor\b|\band\b")
# "Midnight (Nemuri Kayama)": up to three words, then a bracketed aside
_ASIDE = re.compile(
    r"(?P<before>[^\W\d_][\w'.-]*(?:\s+[^\W\d_][\w'.-]*){0,2})\s*[(（](?P<inside>[^()（）\n]{2,40})[)）]"
)
_NAME_WORD = re.compile(r"^[A-Z][\w'.-]*$")
_NOT_NAMES = frozenset("lora locon loha lycoris embedding ti concept style model".split())  # "(Concept LoRA)"


def _a_name(text: str) -> bool:
    """Title-case Latin words, at least one of them no English word ("Nemuri Kayama", "OMGkawaiiAngel")."""
    said = text.split()
    return (
        0 < len(said) <= MAX_WORDS
        and all(w.isascii() and _NAME_WORD.match(w) for w in said)
        and any(not is_english(w.casefold().strip("'.-")) for w in said)
        and not any(w.casefold() in _NOT_NAMES for w in said)
    )


def description_aliases(description: str, called: set[str]) -> list[str]:
    """The other names ``description``'s opening gives a subject the card is ``called`` (its name's and triggers'
    tokens): the list after "aka" / "also known as", and the other side of "X (Y)" where one side is called."""
    opening = (description or "")[:OPENING]
    found: list[str] = []
    for m in _AKA.finditer(opening):
        for part in _LIST_BREAK.split(m.group("names")):
            part = part.strip()
            if part.casefold().startswith("etc"):
                break
            if _a_name(part):
                found.append(part)
    for m in _ASIDE.finditer(opening):
        before, inside = m.group("before").split(), m.group("inside").strip()
        for tail in (" ".join(before[i:]) for i in range(len(before))):  # the words right before the bracket
            if field_tokens(tail) <= called and _a_name(inside) and not field_tokens(inside) <= called:
                found.append(inside)
                break
        if field_tokens(inside) and field_tokens(inside) <= called and _a_name(before[-1]):
            if not field_tokens(before[-1]) <= called:
                found.append(before[-1])
    return list(dict.fromkeys(found))


__all__ = ["description_aliases"]
