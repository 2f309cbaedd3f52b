"""Words of card fields and requests, in one normal form so that loose references meet real names.

Real names mix scripts and separators ("[Falconerd] Big Pixel Style", "TeaClolorMix", "hanfu 汉服",
"KangKengChangV3", "mrblng02-4000"); people write them in lower case, spaced differently, in another order.
Latin, Cyrillic and Greek text splits into words (and CamelCase into its parts); scripts written without spaces
(Chinese, Japanese, Korean, Thai) split into overlapping character pairs, so "用兵马俑的lora" still meets
"兵马俑"; other scripts also answer to their ASCII transliteration (anyascii: "Билибин" to "bilibin").
Each field also contributes its *squashed* form (letters and digits only), so "big pixel",
"bigpixel" and "BigPixel" are one token, and a typo-tolerant match can compare whole names.
"""

from __future__ import annotations

import functools
import importlib.resources
import re
import unicodedata
from collections.abc import Sequence

from anyascii import anyascii
from wordfreq import zipf_frequency

ENGLISH_ZIPF = 3.0  # wordfreq Zipf frequency from which a word is an English word rather than a name
COMMON_ZIPF = 4.0  # from which it is a common one: a few times in every hundred thousand words
# scripts written without spaces between words
_UNSPACED = "\u0e00-\u0e7f\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uac00-\ud7af"
_RUN = re.compile(
    rf"[{_UNSPACED}]+|[^\W_{_UNSPACED}]*\d\.\d[\d.]*[^\W_{_UNSPACED}]*|[^\W_{_UNSPACED}]+(?:['’][^\W_{_UNSPACED}]+)*"
)
_CAMEL = re.compile(r"(?<=[a-z])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])|(?<=[A-Za-z])(?=\d)(?!\d*(?:\b|[a-z]))")
# a kind of adapter written in its own capitals inside a file's name ("pynoiseLoHa", "LyCORIS1024CV1024..."): a word
_KIND_INSIDE = re.compile(
    r"(?<![A-Z])(LoRA|LoRa|LoHa|LoCon|LoKr|LyCORIS|LORA|LOHA|LOCON|LYCORIS|Lora|Loha|Locon|Lycoris)(?![a-z])"
)
_PIECE = re.compile(r"\d+|[^\W\d_]+")
_UNSPACED_RUN = re.compile(rf"^[{_UNSPACED}]+$")
_POSSESSIVE = re.compile(r"['’]s$")
# an article or preposition elided onto the next word in French and Italian ("l'embedding", "dell'acqua")
_ELIDED = re.compile(r"^(?:l|d|dell|dall|nell|sull|all|un|qu)['’](?=[^\W\d_]{2})", re.I)
# "decay768", "320meina", and a name run into its version ("meinav8", "realisticvisionv20")
_LABEL_WORD = re.compile(r"^v?\d+(?:\.\d+)+([^\W\d_]{2,})$")  # a version label with a word run on
_WORD_NUMBER = re.compile(r"^([^\W\d_]{3,}?)(v\d+)$|^([^\W\d_]{3,})(\d{2,})$|^(\d{2,})([^\W\d_]{3,})$")


def _han_forms() -> dict[int, str]:
    """Each traditional and Japanese (shinjitai) form of a Han character mapped to its simplified one, from OpenCC's
    character tables: "布洛妮婭" and "布洛妮娅", "崩壊" and "崩坏" are one name. One character for one, so a text's
    spans stay its own."""
    tables = importlib.resources.files("opencc") / "dictionary"

    def pairs(name: str) -> list[tuple[str, str]]:
        rows = (line.split("\t") for line in (tables / name).read_text(encoding="utf-8").splitlines())
        return [(row[0], row[1].split()[0]) for row in rows if len(row) == 2 and row[1].strip()]

    simplified = {t: s for t, s in pairs("TSCharacters.txt") if len(t) == len(s) == 1}
    for traditional, japanese in pairs("JPVariants.txt"):
        if len(traditional) == len(japanese) == 1 and japanese != traditional:
            simplified.setdefault(japanese, simplified.get(traditional, traditional))
    return str.maketrans(simplified)


_SIMPLIFIED = _han_forms()


def fold(text: str) -> str:
    """NFKC, case folding and one form of each Han character: full-width letters, ligatures, case and whether
    Chinese is written in simplified or traditional characters, or Japanese in its own, stop mattering."""
    return unicodedata.normalize("NFKC", text or "").casefold().translate(_SIMPLIFIED)


def is_unspaced(token: str) -> bool:
    return bool(_UNSPACED_RUN.match(token))


def _pairs(run: str) -> list[str]:
    return [run] if len(run) < 2 else [run[i : i + 2] for i in range(len(run) - 1)]


# the phonetic stretches of an unspaced run: katakana (how Japanese writes names from sound) and hangul
_SOUNDED = re.compile(r"[\u30a1-\u30fa\u30fc]{2,}|[\uac00-\ud7a3]{2,}")


def sounded(run: str) -> list[tuple[int, int, str]]:
    """The katakana and hangul stretches of an unspaced ``run``, each with its span and its romanization (anyascii:
    "ワカモ" -> "wakamo", "히메사카" -> "himesaka"): a name written by its sound, which cards often write in Latin
    letters ("Kosaka Wakamo"). Kanji has no one reading, and hiragana is mostly grammar, so neither is sounded."""
    return [
        (m.start(), m.end(), sound)
        for m in _SOUNDED.finditer(run)
        if len(sound := "".join(ch for ch in anyascii(m.group()).casefold() if ch.isalpha())) >= 3
    ]


def pair_sounds(run: str) -> list[tuple[str, ...]]:
    """The words an unspaced ``run`` stands for, pair by pair: each character pair as written, its simplified form
    when that differs ("崩壊" -> "崩坏"), and, for a pair inside a sounded stretch, the stretch's romanization too, so
    that all of "ワカモ" answers to "wakamo"."""
    sounds = sounded(run)
    return [
        (
            pair,
            *([simplified] if (simplified := pair.translate(_SIMPLIFIED)) != pair else []),
            *(sound for start, end, sound in sounds if start <= i and i + len(pair) <= end),
        )
        for i, pair in enumerate(_pairs(run))
    ]


def _uncut(start: int, end: int, cut: Sequence[tuple[int, int]]) -> list[tuple[int, int]]:
    """The parts of ``[start, end)`` outside the ``cut`` spans."""
    parts = [(start, end)]
    for c_start, c_end in cut:
        kept: list[tuple[int, int]] = []
        for s, e in parts:
            if c_end <= s or e <= c_start:
                kept.append((s, e))
                continue
            if s < c_start:
                kept.append((s, c_start))
            if c_end < e:
                kept.append((c_end, e))
        parts = kept
    return parts


def spans(text: str, cut: Sequence[tuple[int, int]] = ()) -> list[tuple[int, int, list[str]]]:
    """Each run of letters and digits in ``text`` (NFKC-normalized) with its character span and the words it
    stands for: CamelCase parts as well as the whole, character pairs for unspaced scripts, possessives
    reduced to the owner ("hahafofo's" -> "hahafofo"). A run in a script without spaces is split around the
    ``cut`` spans ("弥海砂第二版" less its version "第二版" is the name "弥海砂")."""
    out: list[tuple[int, int, list[str]]] = []
    normalized = unicodedata.normalize("NFKC", text or "").translate(_SIMPLIFIED)
    for match in _RUN.finditer(normalized):
        run = match.group(0)
        if is_unspaced(run):
            for start, end in _uncut(match.start(), match.end(), cut):
                out.append((start, end, _pairs(normalized[start:end])))
            continue
        run = _ELIDED.sub("", _POSSESSIVE.sub("", run)).replace("'", "").replace("’", "")
        parts = [
            p
            for piece in _KIND_INSIDE.split(run)
            # a short word in mixed case is an acronym ("LoL", "GoT"), not two words
            for p in ([piece] if _KIND_INSIDE.fullmatch(piece) or len(piece) <= 4 else _CAMEL.split(piece))
            if p
        ]
        whole = run.casefold()
        found = [whole]
        if len(parts) > 1:
            found.extend(p.casefold() for p in parts if p.casefold() != whole)
        named = found[:]  # the whole and its CamelCase parts
        for part in named:
            if m := _WORD_NUMBER.match(part):  # "decay768" -> "decay", "768"; "v2" stays whole
                found.extend(g for g in m.groups() if g and g not in found)
            if (m := _LABEL_WORD.match(part)) and m.group(1) not in found:  # "v3.0DV" -> "dv", "v1.0nsfw" -> "nsfw"
                found.append(m.group(1))
            if part != whole or len(named) == 1:  # a file's pieces, from its parts when it has any
                found.extend(p for p in _file_pieces(part) if p not in found)
        if not whole.isascii():  # "NiΘ" answers to "nith", "Билибин" to "bilibin"
            ascii_ = anyascii(whole).casefold()
            found.append(ascii_)
            long_vowels = whole.translate(_LONG_VOWELS)  # "sōichirō" is also written "souichirou"
            if long_vowels != whole and long_vowels.isascii():
                found.append(long_vowels)
            # a name spelt in Cyrillic from English sound ("Джинкс"): "dzh" was a "j", "ks" an "x"
            english = ascii_.replace("dzh", "j").replace("ks", "x")
            if english != ascii_:
                found.append(english)
        out.append((match.start(), match.end(), found))
    return out


# a Japanese long vowel as the romanizations without macrons write it ("Sōichirō", "Souichirou")
_LONG_VOWELS = str.maketrans({"ō": "ou", "ô": "ou", "ū": "uu", "û": "uu"})


@functools.lru_cache(maxsize=65536)
def short_vowels(word: str) -> str:
    """A Japanese name's long vowels as the romanizations that drop them write it ("kouzuki" -> "kozuki", "yuuki" ->
    "yuki"); "" for a word that has none, or for an English word ("house")."""
    if not word.isascii() or not word.isalpha() or ("ou" not in word and "uu" not in word):
        return ""
    return "" if is_english(word) else word.replace("ou", "o").replace("uu", "u")


def _file_pieces(word: str) -> list[str]:
    """The numbers and words a file's name runs together ("14dm320deliberate" -> "14", "320", "deliberate"): its
    dims and sizes are how people tell its files apart. A word with one change between letters and digits
    ("sd15", "kof97") or a single digit among letters ("mech4nim4l") is left whole."""
    pieces = _PIECE.findall(word)
    if len(pieces) < 3 or any(p.isdigit() and len(p) < 2 for p in pieces):  # "cu73cre4ture" is a name in leet
        return []
    return [p for p in pieces if len(p) >= 3 or (p.isdigit() and len(p) >= 2)]


def words(text: str) -> list[str]:
    """The words of ``text`` in reading order (see :func:`spans`)."""
    return [w for _, _, found in spans(text) for w in found]


def squash(text: str) -> str:
    """Letters and digits only, folded: ``"[Falconerd] Big Pixel Style"`` -> ``"falconerdbigpixelstyle"``."""
    return "".join(ch for ch in fold(text) if ch.isalnum())


def field_tokens(text: str) -> set[str]:
    """Every token a card field answers to: its words, the romanization of its katakana and hangul, its squashed
    whole, and the squashed form of each space-separated chunk ("Big_Pixel-Style v2" answers to "bigpixelstyle")."""
    tokens = set(words(text))
    tokens.update(sound for _, _, sound in sounded(fold(text)))  # "ワカモ" answers to "wakamo"
    whole = squash(text)
    if whole and not is_unspaced(whole):
        tokens.add(whole)
    for chunk in re.split(r"[\s\[\]()|,;:/]+", text or ""):
        squashed = squash(chunk)
        if len(squashed) > 2 and not is_unspaced(squashed):
            tokens.add(squashed)
    return tokens


def is_english(word: str, zipf: float = ENGLISH_ZIPF) -> bool:
    """Is ``word`` an English word ("fisherman", "sticker") rather than a name ("ganondorf", "kotori")? wordfreq's Zipf
    scale: 3 is a word a few times per million words; ``COMMON_ZIPF`` one everyone uses ("station", not "goku")."""
    return zipf_frequency(word.lower(), "en") >= zipf


def is_english_pair(word: str) -> bool:
    """Is ``word`` two English words written as one ("lighthues" of a trigger "light hues", "shipgirl")?"""
    return any(is_english(word[:i]) and is_english(word[i:]) for i in range(3, len(word) - 2))


# languages requests come in, besides English; a word common in one of them is that language's, not a name
REQUEST_LANGUAGES = ("de", "fr", "es", "it", "pt", "nl", "pl", "id")


def is_word(word: str, zipf: float = ENGLISH_ZIPF) -> bool:
    """Is ``word`` a word of English or of a language requests come in ("marktplatz", "vigiando"), rather than a
    name, which every language's text uses about as rarely ("misato", "bayonetta")? ``zipf`` as in
    :func:`is_english`."""
    return is_english(word, zipf) or any(zipf_frequency(word.lower(), lang) >= zipf for lang in REQUEST_LANGUAGES)


EVERYDAY_ZIPF = 5.8  # a word this frequent in its language is one of its everyday words ("es", "gibt", "tu", "ada")


def everyday_in(word: str, language: str) -> bool:
    """Is ``word`` an everyday word of ``language`` and no common English one ("tem", "gibt"; not "in", "me"): in a
    request written in that language it names nothing?"""
    return word.isalpha() and zipf_frequency(word, language) >= EVERYDAY_ZIPF and not is_english(word, COMMON_ZIPF)


def is_coined(word: str) -> bool:
    """Is ``word`` in no language's word list at all: a name made up for a model ("arachnophobiaai", "xenophorm"),
    not a word nor a name people write elsewhere ("qipao", "hibiki")?"""
    return all(zipf_frequency(word.lower(), lang) == 0 for lang in ("en", *REQUEST_LANGUAGES))


__all__ = [
    "everyday_in",
    "field_tokens",
    "fold",
    "is_coined",
    "is_english",
    "is_english_pair",
    "is_unspaced",
    "is_word",
    "short_vowels",
    "spans",
    "squash",
    "words",
]
