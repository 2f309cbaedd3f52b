"""One short clarification question about the attribute that best tells the remaining candidates apart."""

from __future__ import annotations

import re
from dataclasses import dataclass

from pydantic import BaseModel

from personalq.checkin.reasoning import features
from personalq.repository.card import StoredCheckpoint

MAX_OPTIONS = 5


class Option(BaseModel):
    label: str
    checkpoint_ids: list[str]


@dataclass
class Question:
    text: str
    options: list[Option]
    attribute: str


def _family_label(card: StoredCheckpoint) -> str:
    name = card.name
    if card.version and name.lower().endswith(str(card.version).lower()):
        name = name[: -len(str(card.version))].rstrip(" -_v")
    return name.strip() or (card.family or card.id).replace("-", " ")


def _version_label(card: StoredCheckpoint) -> str:
    version = str(card.version or "").strip()
    if not version:
        return "unversioned"
    return version if not version[0].isdigit() else f"v{version}"


def _month_label(card: StoredCheckpoint) -> str:
    return f"{card.created_at:%B %Y}"


def _day_label(card: StoredCheckpoint) -> str:
    return f"{card.created_at:%B %-d, %Y}"


def _style_label(card: StoredCheckpoint) -> str:
    return ", ".join(sorted(features(card).styles)) or "no particular style"


ATTRIBUTES = (
    ("family", _family_label, "Several models fit. Which one do you mean: {options}?"),
    ("version", _version_label, "Which version of {family}: {options}?"),
    ("date", _month_label, "Which {family} do you mean: the {options} one?"),
    ("style", _style_label, "Which style of {family}: {options}?"),
    ("day", _day_label, "Which {family} do you mean: the one from {options}?"),
)


def _join(labels: list[str]) -> str:
    return labels[0] if len(labels) == 1 else ", ".join(labels[:-1]) + " or " + labels[-1]


def ask(candidates: list[StoredCheckpoint]) -> Question:
    """Group ``candidates`` (best first) by each attribute; ask about the one with the most groups (2..5).

    Ties go to the attribute listed first, because people think of "which concept" before "which version".
    """
    best = None
    for attribute, label_of, template in ATTRIBUTES:
        groups: dict[str, list[str]] = {}
        for card in candidates:
            groups.setdefault(label_of(card), []).append(card.id)
        if len(groups) < 2:
            continue
        score = min(len(groups), MAX_OPTIONS)
        if best is None or score > best[0]:
            best = (score, attribute, groups, template)
        if len(groups) >= len(candidates):
            break
    if best is None:  # indistinguishable by metadata: fall back to names
        groups = {f"{c.name} ({_day_label(c)})": [c.id] for c in candidates}
        best = (len(groups), "name", groups, "Several checkpoints fit. Which one do you mean: {options}?")
    _, attribute, groups, template = best
    families = {_family_label(c) for c in candidates}
    family = next(iter(families)) if len(families) == 1 else "these models"
    if len(families) > 1 and attribute != "family" and len(candidates) <= MAX_OPTIONS:
        # several models: each option says which model and which version
        groups = {}
        for card in candidates:
            label = card.name if card.name not in groups else f"{card.name} ({_day_label(card)})"
            groups[label] = [card.id]
        attribute, template = "name", ATTRIBUTES[0][2]
    elif len(families) > 1 and attribute != "family":
        # too many versions of several models to name each: which model first, its version after
        groups = {}
        for card in candidates:
            groups.setdefault(_family_label(card), []).append(card.id)
        attribute, template = "family", ATTRIBUTES[0][2]
    ordered = list(groups.items())
    if attribute in ("version", "date", "day"):
        first = {c.id: c for c in candidates}
        ordered.sort(key=lambda kv: max(first[i].created_at for i in kv[1]), reverse=True)
    options = [Option(label=label, checkpoint_ids=ids) for label, ids in ordered[:MAX_OPTIONS]]
    return Question(template.format(options=_join([o.label for o in options]), family=family), options, attribute)


_NEGATORS = {"no", "non", "not", "without"}
_FILLER = {"a", "an", "the", "one", "with", "version", "please", "i", "want", "of", "that", "this", "use", "me"}


_NUMBERS = {
    name: str(value)
    for value, name in enumerate("zero one two three four five six seven eight nine ten eleven twelve".split())
}
_NUMBER = "|".join(_NUMBERS)
_SPELLED_VERSION = re.compile(rf"\b(?:version|v)\s+({_NUMBER})(?:\s+point\s+({_NUMBER}))?\b")


def _spelled_out(match: re.Match) -> str:
    whole, fraction = match.group(1), match.group(2)
    return f"v{_NUMBERS[whole]}" + (f".{_NUMBERS[fraction]}" if fraction else "")


def _words(text: str) -> list[str]:
    """Lower-case words of an answer or a label, letters and digits apart ("v1.0black": "1", "black"). A version is
    kept by its digits without trailing zeros or dots ("v1.5", "1.5" and "v15" all give "15", "v2.0" and "version two"
    give "2"), since people and model pages write a version every way; every negation is "no" ("not", "without",
    "don't"), every clause break is "," (punctuation, a spaced dash, "but": "no. the fixed one" negates nothing)."""
    words = []
    text = _SPELLED_VERSION.sub(_spelled_out, text.lower())
    text = re.sub(r"n't\b", " not", text)  # "don't", "isn't": a negation
    for word in re.findall(r"v?\d+(?:\.\d+)*|[^\W\d]+|[,;.!?:()\u2013\u2014]|\s-\s", text):
        if word[-1].isdigit():
            words.append(re.sub(r"(\.0+)+$", "", word.lstrip("v")).replace(".", ""))
        elif not word[0].isalpha() or word == "but":
            words.append(",")
        else:
            words.append("no" if word in _NEGATORS else word)
    return words


def _said(words: list[str]) -> tuple[set[str], set[str]]:
    """The words an answer or label affirms, and those it negates (after a negation, to the end of its clause)."""
    affirmed, negated, negating = set(), set(), False
    for word in words:
        if word == ",":
            negating = False
        elif word == "no":
            negating = True
        elif word not in _FILLER:
            (negated if negating else affirmed).add(word)
    return affirmed, negated


def pick_by_words(text: str, options: list[Option]) -> list[str] | None:
    """The option an answer names by the words that set its label apart from the others ("the 1.5 one" for
    ``v1.5 - 1.0`` among ``v2.1 - 1.1`` / ``v2.1 - 1.0``), or None when no single option stands out.

    Negation counts both ways: "the actual v1, not the training data" names ``v1`` over ``Training Data``, and of
    "kodama_GS no card frame" and "kodama_GS card frame", "without the frame" names the first and "with the card
    frame" the second.
    """
    affirmed, negated = _said(_words(text))
    labels = [_said(_words(option.label)) for option in options]
    if len(labels) < 2 or not affirmed | negated:
        return None
    shared = set.intersection(*(plain | without for plain, without in labels))
    scores = []
    for plain, without in labels:
        own = plain - shared
        score = len(own & affirmed) - len(own & negated)
        # a label that negates something ("no card frame") matches an answer that negates it too, and loses to its
        # plain twin when the answer names it without negating it
        score += len(without & negated) - len(without & affirmed - negated)
        scores.append(score)
    best = max(scores)
    return options[scores.index(best)].checkpoint_ids if scores.count(best) == 1 else _by_letter(text, options)


# a word and a letter standing alone after it ("Style A", "type-b"), and a letter answered alone ("B")
_LETTERED = re.compile(r"([^\W\d_]+)[\s_-]+([^\W\d_])(?![^\W_])")
_LETTER = re.compile(r"^\s*(?:the\s+)?([^\W\d_])(?:\s+one)?\s*[.!]?\s*$")


def _by_letter(text: str, options: list[Option]) -> list[str] | None:
    """The option whose label has the lettered variant an answer names ("style a" for "Tron Legacy Style A,
    version 1" against its "Style B" twin); ``_words`` drops single letters, which are mostly articles."""
    said = {(word.lower(), letter.lower()) for word, letter in _LETTERED.findall(text)}
    alone = _LETTER.match(text)
    hits = [
        option
        for option in options
        if (lettered := {(word.lower(), letter.lower()) for word, letter in _LETTERED.findall(option.label)})
        and (said & lettered or (alone and alone.group(1).lower() in {letter for _, letter in lettered}))
    ]
    return hits[0].checkpoint_ids if len(hits) == 1 else None
