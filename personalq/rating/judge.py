"""The paper's intent rubric, applied locally: subject, style, temporal, context, each 1-5, averaged.

It reads the request through Check-in's own intent parser and compares with the chosen card, so it needs
no model and no key; it is the judge the simulated raters follow and the intent score reported beside
the human win rates.
"""

from __future__ import annotations

import datetime as dt

import numpy as np

from personalq.checkin.intent import parse_intent
from personalq.checkin.lexicon import canonical_subject
from personalq.rating.items import RatingItem
from personalq.repository.card import StoredCheckpoint

REFERENCE_DATE = dt.datetime(2026, 11, 22)


def rubric_score(item: RatingItem, card: StoredCheckpoint | None, target: StoredCheckpoint | None = None) -> float:
    if card is None:
        return 1.0
    intent = parse_intent(item.request, REFERENCE_DATE)
    subjects = {canonical_subject(s) for s in card.subjects}
    parts = []
    if intent.subjects:
        parts.append(5.0 if any(canonical_subject(s) in subjects for s in intent.subjects) else 1.0)
    if intent.styles:
        parts.append(5.0 if set(intent.styles) & set(card.styles) else 2.0)
    if intent.created:
        parts.append(5.0 if any(w.contains(card.created_at) for w in intent.created) else 1.0)
    if target is not None:
        parts.append(5.0 if card.id == target.id else 3.0 if card.family and card.family == target.family else 1.0)
    return float(np.mean(parts)) if parts else 3.0
