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
    ordered = list(groups.items())
    if attribute in ("version", "date", "day"):
        first = {c.id: c for c in candidates}
        ordered.sort(key=lambda kv: max(first[i].created_at for i in kv[1]), reverse=True)
    options = [Option(label=label, checkpoint_ids=ids) for label, ids in ordered[:MAX_OPTIONS]]
    return Question(template.format(options=_join([o.label for o in options]), family=family), options, attribute)
