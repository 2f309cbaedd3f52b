"""The paper's intent rubric: subject, style, temporal, context, each scored 1-5, then averaged.

Two judges apply it: the rater tab's local judge (:mod:`personalq.rating.judge`, reading the request through
Check-in's intent parser) and the Check-in bench's ``RubricJudge`` (reading the constraints Repo-Prompts
recorded). They differ in where they learn what a request asks; the points each
criterion gives are here once, so the intent score beside the human win rates and the one in the bench
tables mean the same thing.
"""

from __future__ import annotations

import numpy as np

from personalq.repository.card import StoredCheckpoint

EXACT, NEAR, MISS = 5.0, 3.0, 1.0
OTHER_STYLE = 2.0  # the right subject in another style is closer to the request than a wrong subject
NOTHING_TO_JUDGE = 3.0  # a request that asks for none of the criteria: the middle of the scale


def subject(matches: bool) -> float:
    return EXACT if matches else MISS


def style(matches: bool) -> float:
    return EXACT if matches else OTHER_STYLE


def graded(exact: bool, near: bool = False) -> float:
    """Temporal and context: the checkpoint meant, a near one (same family, same day), or neither."""
    return EXACT if exact else NEAR if near else MISS


def context(card: StoredCheckpoint, target: StoredCheckpoint) -> float:
    """The checkpoint meant scores full, another version of its model half way."""
    return graded(card.id == target.id, bool(card.family) and card.family == target.family)


def average(parts: list[float]) -> float:
    return float(np.mean(parts)) if parts else NOTHING_TO_JUDGE
