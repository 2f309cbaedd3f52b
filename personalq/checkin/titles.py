"""Titles inside card names, and their initials: "OoT" is "Ocarina of Time", "mha" is "My Hero Academia".

Fans name a series either way, and cards do too: a Saria LoRA says "(LoZ OoT)" where the request says "from ocarina
of time"; a Tsuyu LoRA is tagged "my hero academia" where the request says "from mha". Word evidence cannot meet the
two, so the index keeps both sides:

- *acronyms* a card writes in capitals ("OoT", "FGO", "BotW"), met by the initials of three or more request words
  in a row;
- *initials* of each title a card writes (a whole segment of its name, subjects or tags, "My Hero Academia"), met by
  one request word that no card is plainly called by often.

Only whole segments give initials, and only three letters or more count: two-letter initials, and the initials of
any run inside a longer name, are mostly chance. A number in a title stays whole, in digits or Roman numerals, and a
number word may be its digit: "Final Fantasy XIV" is "ffxiv", "Persona 5" "p5" and "Seven Deadly Sins" "7ds".
"""

from __future__ import annotations

import functools
import itertools
import re
from collections.abc import Iterable

MIN_LETTERS = 3
MAX_LETTERS = 5
# an acronym written in capitals: "OoT", "LoZ", "FGO", "BotW" (two capitals or more, letters only)
_WRITTEN = re.compile(r"(?<![A-Za-z])(?=(?:[a-z]*[A-Z]){2})[A-Z][A-Za-z]{2,4}(?![A-Za-z])")
# what separates titles inside a card's name: brackets, bars, commas, a spaced dash ("Momo - My Hero Academia"), a
# slash between names ("Bikesuit / Biker Suit", "LoCon/LoRA"; not "1/2"), and
# a name in a script written without spaces beside the Latin one ("Yunyun ゆんゆん / KONOSUBA")
_SEGMENT = re.compile(
    r"[\[\](){}|,;:【】（）「」]|\s[-–—~/]\s|(?<=[^\W\d_])/(?=[^\W\d_])|[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uff00-\uffef]+"
)
_WORD = re.compile(r"[^\W\d_]+")
_TITLE_WORD = re.compile(r"[^\W\d_]+|\d+")  # a title's words and numbers ("Persona 5")
_ROMAN = ("i", "ii", "iii", "iv", "v", "vi", "vii", "viii", "ix", "x", "xi", "xii", "xiii", "xiv", "xv", "xvi")
_NUMBER_WORDS = ("one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten")
MAX_SPELLED = 7  # the longest initials with a number kept whole ("ffxiii")
# written in capitals, but words rather than titles
_NOT_TITLES = frozenset("lora loha locon lycoris nsfw sfw".split())
_ARTICLES = frozenset({"the", "a", "an"})


def segments(text: str) -> list[str]:
    """The titles a card's name holds between its brackets, bars and dashes: "[LoCon/LoRA] Offset noise" ->
    ["LoCon/LoRA", "Offset noise"]."""
    return [segment.strip() for segment in _SEGMENT.split(text or "") if segment.strip()]


def written(texts: Iterable[str]) -> set[str]:
    """The acronyms ``texts`` write in capitals, folded: "Saria (LoZ OoT)" -> {"loz", "oot"}."""
    found = {m.group().casefold() for text in texts for m in _WRITTEN.finditer(text or "")}
    return found - _NOT_TITLES


def initials(texts: Iterable[str]) -> set[str]:
    """The initials of each whole title ``texts`` write, with and without a leading article: "Momo Yaoyorozu - My
    Hero Academia" -> {"my", "mha"}, of which only those of three to five letters are kept ({"mha"}); "The Legend of
    Zelda" -> {"tloz", "loz"}; "Final Fantasy XIV" -> {"ffxiv", "ff14", "ffx"}."""
    found = set()
    for text in texts:
        for segment in segments(text):
            words = _TITLE_WORD.findall(segment)
            # a title's leading article is often left out of its initials: "The King of Fighters" is "kof"
            for title in (words, words[1:] if words and words[0].casefold() in _ARTICLES else []):
                if MIN_LETTERS <= len(title) <= MAX_LETTERS:
                    found.update("".join(spelled) for spelled in itertools.product(*map(_initial_forms, title)))
    return {said for said in found if len(said) <= MAX_SPELLED and not said.isdigit()}


def _initial_forms(word: str) -> tuple[str, ...]:
    """How a word of a title may stand in its initials: its first letter; a number whole, in digits or Roman numerals
    ("XIV": "xiv", "14", "x"; "5": "5", "v"); a number word as its digit ("seven": "7", "s")."""
    word = word.casefold()
    if word.isdigit():
        n = int(word)
        return (word, _ROMAN[n - 1]) if 0 < n <= len(_ROMAN) else (word,)
    if word in _ROMAN and word not in {"i", "v", "x"}:  # a lone letter is a letter more often than a number
        return (word, str(_ROMAN.index(word) + 1), word[0])
    if word in _NUMBER_WORDS:
        return (word[0], str(_NUMBER_WORDS.index(word) + 1))
    return (word[0],)


CLIPPED_LETTERS = 5  # the fewest letters of a clipped title ("priconne"), and of a long word's start it shares


def clips(word: str, title: str) -> bool:
    """Is ``word`` a fan's clipping of ``title``: the starts of two or more of its words in a row run together
    ("priconne" of "Princess Connect", "konosuba" of "Kono Subarashii Sekai"), or most of one long word's start
    ("nijigaku" of "Nijigasaki")? Fans name series so; word evidence cannot meet the two."""
    word = word.casefold()
    if len(word) < CLIPPED_LETTERS or not word.isalpha():
        return False
    said = [w.casefold() for w in _WORD.findall(title or "")]

    @functools.cache  # a title of repeated words ("aa aa aa ...") would otherwise branch at every word
    def runs_from(at: int, rest: str, used: int) -> bool:
        if not rest:
            return used >= 2
        if at >= len(said):
            return False
        return any(
            rest.startswith(said[at][:n]) and runs_from(at + 1, rest[n:], used + 1)
            for n in range(min(len(said[at]), len(rest)), 1, -1)
        )

    shared = max((len(_common_start(word, w)) for w in said), default=0)
    return any(runs_from(at, word, 0) for at in range(len(said))) or (
        shared >= CLIPPED_LETTERS and 3 * shared >= 2 * len(word)
    )


def _common_start(a: str, b: str) -> str:
    n = 0
    while n < min(len(a), len(b)) and a[n] == b[n]:
        n += 1
    return a[:n]


def of_words(words: list[str]) -> str:
    """The initials of a run of request words, when they could be an acronym: "ocarina of time" -> "oot"."""
    if not MIN_LETTERS <= len(words) <= MAX_LETTERS or not all(w[:1].isascii() and w[:1].isalpha() for w in words):
        return ""
    return "".join(w[0] for w in words)


def may_be(word: str) -> bool:
    """Could a request word be a title's initials ("mha", "botw", "ffxiv", "7ds")?"""
    if not (MIN_LETTERS <= len(word) and word.isascii() and word.isalnum()):
        return False
    if word.isalpha():
        return len(word) <= MAX_LETTERS
    return len(word) <= MAX_SPELLED and not word.isdigit()


__all__ = ["clips", "initials", "may_be", "of_words", "segments", "written"]
