"""How strongly a request wants a checkpoint: "at 0.6", "at 70%", "weight 0.8", "a little of the grain lora".

People who combine LoRAs give each its strength, as the WebUI's ``<lora:name:0.8>`` does; Check-in reads it where it
is said and ties it to the model named next to it. Check-in's request cleaner rewrites a WebUI tag to "NAME lora at
0.8", so the tag's weight is read here too. A strength phrase is selection talk: the image prompt leaves it out.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from personalq.repository.weighted import MAX_WEIGHT, MIN_WEIGHT

# a number, with a decimal point or a decimal comma ("0,7", as most of Europe writes it), and its percent sign or word
_NUMBER = (
    r"(?P<n>[-−]?(?:\d+(?:[.,]\d+)?|\.\d+))"
    r"(?P<pct>\s*(?:%|per\s?cent\b|por\s?ciento\b|pour\s?cent\b|per\s?cento\b|prozent\b|procent\b|процент\w*))?"
)
# the words a strength is said with, in the languages people write requests in; CJK ones need no space before them
# ("水彩lora权重0.6")
_KEY_WRITTEN_APART = (
    r"strength|weight|power|str|intensity|scale"
    r"|gewicht|gewichtung|stärke|staerke|poids|force|intensité|peso|fuerza|força|forza|intensidad|intensidade"
    r"|intensità|sterkte|styrka|vikt|вес\w*|сил\w*|wag\w*|sił\w*|bobot|kekuatan|ağırlık\w*|agirlik\w*|güç\w*|trọng\s+số"
)
_KEY_WRITTEN_JOINED = r"強度|强度|權重|权重|強さ|ウェイト|ウエイト|重み|강도|가중치"
STRENGTH_KEY = rf"(?:{_KEY_WRITTEN_APART}|{_KEY_WRITTEN_JOINED})"
# the word that ties a strength to the name before it: "at", and its twins in other languages ("al 60%", "all'80%",
# "à 0,5", "auf 0,5", "mit Gewicht 0,9", "con peso 0.7", "на 0,6")
_AT = (
    r"(?P<at>at|@|to|al|all['’]|alla|a|à|au|auf|bei|mit|con|com|em|en|na|на|с|со|op|met|på|med|z|ze)"
    r"(?:\s+(?:un|una|uno|einem|einer|der|dem|la|le|el|o|um|uma))?"
)
# a percentage in English words: "at seventy percent", "forty-five per cent"
_TENS = {"twenty": 20, "thirty": 30, "forty": 40, "fifty": 50, "sixty": 60, "seventy": 70, "eighty": 80, "ninety": 90}
_UNITS = {w: k for k, w in enumerate("one two three four five six seven eight nine".split(), start=1)}
_TEENS = {
    w: k
    for k, w in enumerate(
        "ten eleven twelve thirteen fourteen fifteen sixteen seventeen eighteen nineteen".split(), start=10
    )
}
_WORD_PERCENT = re.compile(
    rf"(?i)(?<![\w.])(?:(?:at|to)\s+)?(?:about\s+|around\s+|roughly\s+)?"
    rf"(?P<words>(?:{'|'.join(_TENS)})(?:[-\s](?:{'|'.join(_UNITS)}))?|{'|'.join(_TEENS)}|(?:a|one)\s+hundred)"
    r"\s*(?:%|per\s?cent\b)"
)


def _number(k: int) -> str:
    """:data:`_NUMBER` with its groups named for the ``k``-th place it is said in one pattern."""
    return _NUMBER.replace("n>", f"n{k}>").replace("pct>", f"pct{k}>")


_KEY_ALONE = rf"(?:(?<![A-Za-z])(?:{_KEY_WRITTEN_APART})|{_KEY_WRITTEN_JOINED})"
_TURNED = r"(?:(?:turned|dialed|dialled|toned|brought|cranked)\s+(?:down|up)\s+)"
_ABOUT = r"(?:about\s+|around\s+|roughly\s+|~\s*)"
# said after the model's name: "<name> at 0.6", "<name> @ 70%", "<name> at about 60 percent", "<name> weight 0.8",
# "<name>, 0.5 strength", "set <name> to 0.3", "<name> turned down to .35", "<name>を0.7で", "<name>，强度0.6"
_AFTER = re.compile(
    rf"(?i)(?:(?<![\w.]){_TURNED}?{_AT}\s*{_ABOUT}?(?:a\s+)?(?:{STRENGTH_KEY}\s*(?:of|de|von)?\s*)?{_number(1)}"
    rf"(?:\s*{STRENGTH_KEY}\b)?"
    rf"|{_KEY_ALONE}\s*(?:of|=|:|：|de|von)?\s*{_number(2)}"
    rf"|(?<![A-Za-z0-9_.]){_number(3)}\s*(?:{STRENGTH_KEY}\b|(?=で))(?:で)?)"
    # a Latin word glued on is no strength ("0.5m"); CJK text goes on without a space; a sentence may end after it
    r"(?![A-Za-z0-9_]|[.,]\d)"
)
# a fraction right after a kind word is a strength, as in a WebUI tag: "the crystal skull lora 0.8", "apex legends
# style:.45" ("lora 1.5" is more often a version)
_AFTER_KIND = re.compile(
    r"(?i)\b(?:lora|lyco|locon|lycoris|embedding|ti|style|artstyle)\s*[:=]?\s*(?P<n>0?\.\d+)(?![\w.%])"
)
# a fraction or a percentage after a name in a list of models: "lihua cat lora 0.75, hairdetailer 0.4, a cat napping",
# "..., plastic clothes 0.4 - posing in a phone booth", "kishida mel style 45%, on a beach"
_IN_LIST = re.compile(
    r"(?i)(?<=[^\W\d_])\s+(?:(?P<n>0?\.\d+)|(?P<pct>\d{1,3})\s*%)(?=\s*(?:[,;+&]|[-–—]\s|$)|\s+(?:and|with|plus)\b)"
    # or a fraction below one between a name and what it does: "fairy pixie 0.7 resting on a lotus leaf"
    r"|(?<=[^\W\d_])\s+(?P<n2>0\.\d+)(?=\s+[a-z]{3,})"
)
# a strength written as an operator and a number after a name: "x0.8", "× 0.6", "→ 0.65", "-> 0.5", " : 0.6"; a
# percent sign before the number, as Turkish writes it: "%80 ağırlıkla"; a fraction standing alone as a list item
# after a name: "..., the v2.0 Faun version, 0.85; ..."
_OPERATOR = re.compile(
    r"(?i)(?:(?<=[^\W\d_]|\))\s+[x×*]|(?<=[^\W_]|\))\s*(?:→|->|=>)|(?<=[^\W_]|\))\s+:)"
    r"\s*(?P<n>[01]?\.\d+)(?![\w.%])"
    rf"|(?<![\w.])%\s*(?P<pct>\d{{1,3}})\s*{STRENGTH_KEY}"
    r"|(?<=[^\W\d_]),\s*(?P<n2>0?\.\d+)(?=\s*(?:[,;]|[-–—]\s|$))"
)
# what says a number after it is a version: "the 0.5", "version 0.5"
_VERSION_BEFORE = re.compile(r"(?i)\b(?:the|that|this|version|ver)\s+$")
# a fraction or a percentage in brackets after a name: "the pastel vector lora (0.3)", "cm-mix (80%)"
_BRACKETED = re.compile(r"\(\s*(?:(?P<n>0?\.\d+|1(?:\.0+)?)|(?P<pct>\d{1,3})\s*%)\s*\)")
# a WebUI weight after a bracket that ends a name: "madoka kaname (iroaK):0.85"
_AFTER_BRACKET = re.compile(r"(?<=\))\s*:\s*(?P<n>[01]?\.\d+|[01])(?![\w.:])")
# words for a strength: "a little of" before the name, "at half strength" after it
_LITTLE = re.compile(
    r"(?i)\b(?:just\s+)?(?:a\s+)?(?:little\s+(?:bit\s+)?|bit\s+|touch\s+|hint\s+|dash\s+|tiny\s+bit\s+)of\b"
)
_HALF = re.compile(r"(?i)\b(?:at\s+)?half\s+(?:strength|weight|power)\b")
_FULL = re.compile(r"(?i)\b(?:at\s+)?full\s+(?:strength|weight|power)\b")
LITTLE = 0.5  # "a little of": what people set a LoRA they want only a touch of to, in the WebUI's examples


@dataclass(frozen=True)
class Strength:
    """A strength said in the request: its span, its value, and whether it reads forward onto the name after it
    ("a little of the grain lora") rather than back onto the one before ("the grain lora at 0.4")."""

    span: tuple[int, int]
    weight: float
    forward: bool = False


def _value(number: str, percent: bool) -> float | None:
    value = float(number.replace("−", "-").replace(",", "."))
    if percent:
        value /= 100
    elif "." not in number and abs(value) > MAX_WEIGHT:
        return None  # "at 3" is a time or a count, not a strength
    return value if MIN_WEIGHT <= value <= MAX_WEIGHT else None


def read_strengths(text: str) -> list[Strength]:
    """Every strength said in ``text``, in order. A bare "at 1" needs a key word ("at strength 1") or a decimal
    point to count: "at 3" is not one."""
    found: list[Strength] = []
    for m in _AFTER.finditer(text):
        number = m.group("n1") or m.group("n2") or m.group("n3")
        percent = bool(m.group("pct1") or m.group("pct2") or m.group("pct3"))
        keyed = re.search(rf"(?i){STRENGTH_KEY}", m.group(0)) is not None
        if not (keyed or percent or re.search(r"[.,]", number)):
            continue
        value = _value(number, percent)
        if value is not None and not (keyed or percent) and (m.group("at") or "at").lower() not in ("at", "@", "to"):
            # a bare number after another language's "at" is a strength only below one: "auf 0,5", but "en 1.5" and
            # "auf 2.1" are the base models
            value = value if abs(value) < 1 else None
        if value is not None:
            found.append(Strength(m.span(), value))
    for m in _WORD_PERCENT.finditer(text):
        words = m.group("words").lower().replace("-", " ").split()
        number = (
            100
            if words[-1] == "hundred"
            else sum(_TENS.get(w, 0) + _UNITS.get(w, 0) + _TEENS.get(w, 0) for w in words)
        )
        found.append(Strength(m.span(), number / 100))
    for m in _BRACKETED.finditer(text):
        value = float(m.group("n")) if m.group("n") else _value(m.group("pct"), percent=True)
        if value is not None and not any(m.start() < s.span[1] and s.span[0] < m.end() for s in found):
            found.append(Strength(m.span(), value))
    for m in [
        *_AFTER_KIND.finditer(text),
        *_IN_LIST.finditer(text),
        *_AFTER_BRACKET.finditer(text),
        *_OPERATOR.finditer(text),
    ]:
        said = next(group for group in ("n", "n2", "pct") if m.re.groupindex.get(group) and m.group(group))
        if _VERSION_BEFORE.search(text, 0, m.start(said)):
            continue  # "v0.8 not the 0.5": a version said again, not a strength
        value = _value(m.group(said), percent=said == "pct")
        if value is not None and not any(m.start(said) < s.span[1] and s.span[0] < m.end() for s in found):
            # "):0.85", " x0.8" and "%80" leave with their colon, operator or percent sign
            start = m.start() if m.re in (_AFTER_BRACKET, _OPERATOR) else m.start(said)
            found.append(Strength((start, m.end()), value))
    for pattern, value, forward in ((_LITTLE, LITTLE, True), (_HALF, 0.5, False), (_FULL, 1.0, False)):
        for m in pattern.finditer(text):
            if not any(m.start() < s.span[1] and s.span[0] < m.end() for s in found):
                found.append(Strength(m.span(), value, forward))
    return sorted(found, key=lambda s: s.span)
