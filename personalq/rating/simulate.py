"""Simulated raters: scripted votes that follow the rubric, for the paper's Table 2 without people.

Each simulated rater prefers the side whose checkpoint scores higher on the rubric, calls a tie when
both score the same and fit (>= 3), "both bad" when both score the same and do not, and with probability
``noise`` answers at random, as people sometimes do. Raters vote from their own threads into the real
vote store, so the run doubles as a concurrency check. They follow the human protocol: items whose two sides
would show the same checkpoint are not asked, and each rater draws the sides from its own seeded generator.
"""

from __future__ import annotations

import random
import threading

import numpy as np

from personalq.rating.items import RatingItem
from personalq.rating.judge import rubric_score
from personalq.rating.pairs import Pair, PairMaker, Pick
from personalq.rating.votes import CHOICES, Vote, VoteStore


def _score(maker: PairMaker, item: RatingItem, pick: Pick) -> float:
    card = maker.repository.get(pick.checkpoint_id) if pick.checkpoint_id else None
    target = maker.repository.get(item.target_id) if item.target_id else None
    return rubric_score(item, card, target)


def intent_scores(maker: PairMaker, items: list[RatingItem]) -> dict[str, float]:
    """Mean rubric score of every method's picks over ``items``."""
    return {
        method: float(np.mean([_score(maker, item, maker.pick(item, method)) for item in items]))
        for method in maker.methods
    }


def scripted_choice(maker: PairMaker, pair: Pair, rng: random.Random, noise: float) -> str:
    if rng.random() < noise:
        return rng.choice(CHOICES)
    left, right = _score(maker, pair.item, pair.left.pick), _score(maker, pair.item, pair.right.pick)
    if left == right:
        return "tie" if left >= 3 else "both_bad"
    return "left" if left > right else "right"


def simulate(
    maker: PairMaker, store: VoteStore, items: list[RatingItem], raters: int = 3, noise: float = 0.1, seed: int = 0
) -> int:
    """Every simulated rater votes on every item worth asking, all raters at once; returns the number of votes
    written."""
    items = maker.askable(items)  # every pick made here, before the raters' threads start
    errors: list[BaseException] = []

    def rater(index: int) -> None:
        name, rng = f"simulated-{index}", random.Random(seed * 1000 + index)
        try:
            for item in items:
                pair = maker.pair(item, rng)
                store.add(
                    Vote(
                        name,
                        item.id,
                        item.request,
                        pair.left.pick.method,
                        pair.right.pick.method,
                        pair.left.pick.checkpoint_id,
                        pair.right.pick.checkpoint_id,
                        scripted_choice(maker, pair, rng, noise),
                    )
                )
        except BaseException as error:
            errors.append(error)

    threads = [threading.Thread(target=rater, args=(i,)) for i in range(raters)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    if errors:
        raise errors[0]
    return raters * len(items)
