"""One short clarification question about the attribute that best tells the remaining candidates apart."""

from __future__ import annotations

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
    ("family", _family_label, "Which one do you mean: {options}?"),
    ("version", _version_label, "Which version: {options}?"),
    ("date", _month_label, "Which one: the {options} model?"),
    ("style", _style_label, "Which style: {options}?"),
    ("day", _day_label, "Which one: the one from {options}?"),
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
        best = (len(groups), "name", groups, "Which one do you mean: {options}?")
    _, attribute, groups, template = best
    ordered = list(groups.items())
    if attribute in ("version", "date", "day"):
        first = {c.id: c for c in candidates}
        ordered.sort(key=lambda kv: max(first[i].created_at for i in kv[1]), reverse=True)
    options = [Option(label=label, checkpoint_ids=ids) for label, ids in ordered[:MAX_OPTIONS]]
    return Question(template.format(options=_join([o.label for o in options])), options, attribute)
