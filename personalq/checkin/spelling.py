"""Everyday words typed with one slip ("healnig", "fberuary", "everyhting", "pinchin") read as the word meant.

A word no language's list has and no card says is otherwise read as a name the repository lacks, so a misspelt scene
word ("mercy from overwatch healnig a soldier") turns a request into a search for a model called "healnig". A word
mends only to a common English word one slip away (two letters swapped, one dropped, one doubled or stray), or to a
rarer one some card says ("kinrded" of League of Legends' Kindred); a name near a rare word stays ("mudrock" is no
"murdock"). Substitutions stay as typed, since a changed letter is as often a name ("froppy", not "floppy"). A name
the repository lacks that is one slip from a common word reads as that word ("nearl" as "near"), which costs that
request its honest "no match" only when the word then finds a model. The image prompt keeps the word as typed: the
person's words are theirs to correct.
"""

from __future__ import annotations

import re
import string
from collections.abc import Callable
from functools import lru_cache

from wordfreq import zipf_frequency

from personalq.checkin.tokens import is_word

MIN_LENGTH = 5  # shorter words have too many neighbours one slip away ("lira", "lorra")
TYPED_ZIPF = 1.5  # a word typed rarer than this in every request language is no word people write
MEANT_ZIPF = 3.5  # the word meant is a common English word ("teasing"), not a name that happens to be near ("murdock")
NAMED_ZIPF = 3.0  # ... or an English word at all that some card says ("kindred", "lolita")
MEANT_GAP = 1.5  # ... and some thirty times as common as the typo: common typos are in wordfreq's lists too

# a word on its own: not inside a handle, a file's name, a link or an address ("@healnig", "?q=healnig", "a@b.com")
_WORD = re.compile(r"(?<![\w'’@#:/._=&?-])[A-Za-z]{%d,}(?![\w'’:/_@-]|\.\w)" % MIN_LENGTH)


def _slips(word: str) -> set[str]:
    """The words ``word`` would be with its one slip undone: letters swapped back, a dropped letter put back, a
    stray one taken out."""
    swapped = {word[:i] + word[i + 1] + word[i] + word[i + 2 :] for i in range(len(word) - 1)}
    stray = {word[:i] + word[i + 1 :] for i in range(len(word))}
    dropped = {word[:i] + c + word[i:] for i in range(len(word) + 1) for c in string.ascii_lowercase}
    return (swapped | stray | dropped) - {word}


@lru_cache(maxsize=4096)
def _near_words(word: str) -> tuple[tuple[float, str], ...]:
    """The English words one slip from ``word`` (lower case) that are far commoner than it, commonest first; none
    when ``word`` is itself a word of some request language."""
    if len(word) < MIN_LENGTH or is_word(word, TYPED_ZIPF):
        return ()
    floor = zipf_frequency(word, "en") + MEANT_GAP
    near = [(zipf_frequency(c, "en"), c) for c in _slips(word)]
    return tuple(sorted(((z, c) for z, c in near if z >= max(NAMED_ZIPF, floor)), reverse=True))


def meant(word: str, says: Callable[[str], bool] = lambda _: False) -> str | None:
    """The word ``word`` (lower case) is a one-slip typo of: a common English word, or a rarer one (a name like
    "kindred", "lolita") that some card ``says``; ``None`` when it is a word itself or none is near."""
    for zipf, candidate in _near_words(word):
        if zipf >= MEANT_ZIPF or says(candidate):
            return candidate
    return None


Fix = tuple[str, str, int]  # (the word meant, as typed, how many times the meant word follows it in the text)


def _whole(word: str) -> re.Pattern:
    return re.compile(rf"(?<![\w'’]){re.escape(word)}(?![\w'’])", re.IGNORECASE)


def mend(text: str, says: Callable[[str], bool]) -> tuple[str, list[Fix]]:
    """``text`` with each typo of a common English word written right, unless some card ``says`` the word as typed
    (a model's name, trigger or creator: "nanosiut" may be one), and what was mended, in order."""
    pieces: list[str] = []
    mended: list[tuple[str, str, int]] = []  # (meant, typed, where it ends in the mended text)
    last, length = 0, 0
    for m in _WORD.finditer(text):
        typed = m.group(0)
        if says(typed.lower()) or (word := meant(typed.lower(), says)) is None:
            continue
        word = word.capitalize() if typed[0].isupper() else word
        before = text[last : m.start()]
        pieces += [before, word]
        length += len(before) + len(word)
        mended.append((word, typed, length))
        last = m.end()
    out = "".join(pieces) + text[last:]
    # where a mended word stands, counted from the end: the prompt writer puts triggers before the scene, not after
    return out, [(word, typed, len(_whole(word).findall(out, end))) for word, typed, end in mended]


def as_typed(prompt: str, fixes: list[Fix]) -> str:
    """``prompt`` with the words :func:`mend` mended back as the person typed them, each where it stands counted
    from the prompt's end (a trigger before the scene may say the same word): reading the request needs the word
    meant, the picture keeps what the person wrote."""
    for k, (word, typed, after) in reversed(list(enumerate(fixes))):
        restored_after = sum(1 for w, _, _ in fixes[k + 1 :] if w.lower() == word.lower())
        found = list(_whole(word).finditer(prompt))
        at = len(found) - 1 - (after - restored_after)
        if 0 <= at < len(found):
            m = found[at]
            prompt = prompt[: m.start()] + typed + prompt[m.end() :]
    return prompt


__all__ = ["Fix", "as_typed", "meant", "mend"]
