"""The person's corrections to a checkpoint's card, and how they are laid over what the files say.

Files are often wrong about what matters most to finding a model: a trigger kohya guessed from the most frequent
caption tag, a file-name title, a style filed as a subject, a base read from a missing field. A correction is
stored per checkpoint as a field -> value mapping (:class:`~personalq.repository.orm.CheckpointOverride`) and laid
over every import of the same file, so re-scanning a folder never undoes it. Lists are replaced whole (the order
of triggers matters: the first is the one a prompt gets); adding and removing triggers are resolved against the
card as it stands when the edit is made.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from pydantic import ValidationError

from personalq.repository.card import Card

EDITABLE = ("name", "triggers", "styles", "subjects", "tags", "base_model")


class InvalidEdit(ValueError):
    """An edit that would make an invalid card; the message names the field, for a person."""


@dataclass
class CardEdit:
    """One edit as the CLI or the Repository tab gives it; ``None`` leaves a field as it is."""

    name: str | None = None
    triggers: list[str] | None = None  # the whole list, in order
    add_triggers: list[str] = field(default_factory=list)  # appended, after ``triggers`` is applied
    remove_triggers: list[str] = field(default_factory=list)
    styles: list[str] | None = None
    subjects: list[str] | None = None
    tags: list[str] | None = None
    base_model: str | None = None
    reset: bool = False  # drop every override first: back to what the files say

    def changes(self, current: Card) -> dict:
        """The fields this edit sets, resolved against ``current`` (the card with earlier overrides applied)."""
        changed: dict = {}
        if self.name is not None:
            changed["name"] = self.name
        triggers = list(self.triggers) if self.triggers is not None else None
        if self.add_triggers or self.remove_triggers:
            triggers = list(current.triggers) if triggers is None else triggers
            removed = {t.strip().lower() for t in self.remove_triggers}
            triggers = [t for t in triggers if t.strip().lower() not in removed]
            triggers += [t for t in self.add_triggers if t not in triggers]
        if triggers is not None:
            changed["triggers"] = triggers
        for key in ("styles", "subjects", "tags", "base_model"):
            value = getattr(self, key)
            if value is not None:
                changed[key] = value
        return changed


def apply_overrides(card: Card, overrides: dict) -> Card:
    """``card`` with ``overrides`` laid over it, validated as a card (so a base is normalised to its key)."""
    if not overrides:
        return card
    try:
        return Card.model_validate({**card.model_dump(), **{k: v for k, v in overrides.items() if k in EDITABLE}})
    except ValidationError as exc:
        problems = "; ".join(f"{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in exc.errors())
        raise InvalidEdit(f"cannot apply the edit: {problems}") from exc


def normalised(overrides: dict, imported: Card) -> dict:
    """The overrides with the values validation gave them (base keys, stripped words), and without those that
    only repeat what the files say: such a field is not "edited"."""
    effective = apply_overrides(imported, overrides)
    kept = {}
    for key in EDITABLE:
        if key in overrides and getattr(effective, key) != getattr(imported, key):
            kept[key] = getattr(effective, key)
    return kept
