"""How strongly a request wants a checkpoint: "at 0.6", "at 70%", "weight 0.8", "a little of the grain lora".

People who combine LoRAs give each its strength, as the WebUI's ``<lora:name:0.8>`` does; Check-in reads it where it
is said and ties it to the model named next to it. Check-in's request cleaner rewrites a WebUI tag to "NAME lora at
0.8", so the tag's weight is read here too. A strength phrase is selection talk: the image prompt leaves it out.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from personalq.repository.weighted import MAX_WEIGHT, MIN_WEIGHT

_NUMBER = r"(?P<n>[-−]?(?:\d+(?:\.\d+)?|\.\d+))(?P<pct>\s*(?:%|per\s?cent\b))?"
STRENGTH_KEY = r"(?:strength|weight|power|str|intensity|scale)"  # the words a strength is said with
# said after the model's name: "<name> at 0.6", "<name> @ 70%", "<name> at about 60 percent", "<name> weight 0.8",
# "<name>, 0.5 strength", "set <name> to 0.3", "<name> turned down to .35"
_AFTER = re.compile(
    rf"(?i)(?:(?<![\w.])(?:(?:turned|dialed|dialled|toned|brought|cranked)\s+(?:down|up)\s+)?(?:at|@|to)\s*(?:about\s+|around\s+|roughly\s+|~\s*)?(?:a\s+)?(?:{STRENGTH_KEY}\s*(?:of\s*)?)?{_NUMBER}(?:\s*{STRENGTH_KEY}\b)?"
    rf"|\b{STRENGTH_KEY}\s*(?:of|=|:)?\s*{_NUMBER.replace('n>', 'n2>').replace('pct>', 'pct2>')}"
    rf"|(?<![\w.]){_NUMBER.replace('n>', 'n3>').replace('pct>', 'pct3>')}\s*{STRENGTH_KEY}\b)"
    r"(?![\w.])"
)
# a fraction right after a kind word is a strength, as in a WebUI tag: "the crystal skull lora 0.8" ("lora 1.5" is
# more often a version)
_AFTER_KIND = re.compile(r"(?i)\b(?:lora|lyco|locon|lycoris|embedding|ti)\s*[:=]?\s*(?P<n>0?\.\d+)(?![\w.%])")
# a fraction after a name in a list of models: "lihua cat lora 0.75, hairdetailer 0.4, a cat napping", "..., plastic
# clothes 0.4 - posing in a phone booth"
_IN_LIST = re.compile(r"(?i)(?<=[^\W\d_])\s+(?P<n>0?\.\d+)(?=\s*(?:[,;+&]|[-–—]\s|$)|\s+(?:and|with|plus)\b)")
# what says a number after it is a version: "the 0.5", "version 0.5"
_VERSION_BEFORE = re.compile(r"(?i)\b(?:the|that|this|version|ver)\s+$")
# a fraction or a percentage in brackets after a name: "the pastel vector lora (0.3)", "cm-mix (80%)"
_BRACKETED = re.compile(r"\(\s*(?:(?P<n>0?\.\d+|1(?:\.0+)?)|(?P<pct>\d{1,3})\s*%)\s*\)")
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
    value = float(number.replace("−", "-"))
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
        number = m.group("n") or m.group("n2") or m.group("n3")
        percent = bool(m.group("pct") or m.group("pct2") or m.group("pct3"))
        keyed = re.search(rf"(?i){STRENGTH_KEY}", m.group(0)) is not None
        if not (keyed or percent or "." in number):
            continue
        value = _value(number, percent)
        if value is not None:
            found.append(Strength(m.span(), value))
    for m in _BRACKETED.finditer(text):
        value = float(m.group("n")) if m.group("n") else _value(m.group("pct"), percent=True)
        if value is not None and not any(m.start() < s.span[1] and s.span[0] < m.end() for s in found):
            found.append(Strength(m.span(), value))
    for m in [*_AFTER_KIND.finditer(text), *_IN_LIST.finditer(text)]:
        if _VERSION_BEFORE.search(text, 0, m.start("n")):
            continue  # "v0.8 not the 0.5": a version said again, not a strength
        if not any(m.start("n") < s.span[1] and s.span[0] < m.end() for s in found):
            found.append(Strength(m.span("n"), float(m.group("n"))))
    for pattern, value, forward in ((_LITTLE, LITTLE, True), (_HALF, 0.5, False), (_FULL, 1.0, False)):
        for m in pattern.finditer(text):
            if not any(m.start() < s.span[1] and s.span[0] < m.end() for s in found):
                found.append(Strength(m.span(), value, forward))
    return sorted(found, key=lambda s: s.span)
