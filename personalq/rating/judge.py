"""The paper's intent rubric (:mod:`personalq.rating.rubric`), applied locally to a rating item.

It reads the request through Check-in's own intent parser and compares with the chosen card, so it needs
no model and no key; it is the judge the simulated raters follow and the intent score reported beside
the human win rates.
"""

from __future__ import annotations

import datetime as dt

from personalq.checkin.intent import parse_intent
from personalq.checkin.lexicon import canonical_subject
from personalq.rating import rubric
from personalq.rating.items import RatingItem
from personalq.repository.card import StoredCheckpoint

REFERENCE_DATE = dt.datetime(2026, 11, 22)


def rubric_score(item: RatingItem, card: StoredCheckpoint | None, target: StoredCheckpoint | None = None) -> float:
    if card is None:
        return rubric.MISS
    intent = parse_intent(item.request, REFERENCE_DATE)
    subjects = {canonical_subject(s) for s in card.subjects}
    parts = []
    if intent.subjects:
        parts.append(rubric.subject(any(canonical_subject(s) in subjects for s in intent.subjects)))
    if intent.styles:
        parts.append(rubric.style(bool(set(intent.styles) & set(card.styles))))
    if intent.created:
        parts.append(rubric.graded(any(w.contains(card.created_at) for w in intent.created)))
    if target is not None:
        parts.append(rubric.context(card, target))
    return rubric.average(parts)
