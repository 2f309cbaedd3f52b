"""Blind pairs: Check-in against one baseline per item, same seed, sides randomized per rater.

Each method's pick for an item is computed once; images are generated once per (item, method) through the
serving engine and kept on disk, so every rater of an item sees the same two images.
"""

from __future__ import annotations

import hashlib
import logging
import random
from dataclasses import dataclass
from pathlib import Path

from personalq.checkin.agent import CheckIn
from personalq.checkin.rewrite import rewrite_prompt
from personalq.eval.selection_methods import MethodUnavailable, make_method
from personalq.rating.items import RatingItem
from personalq.rating.judge import REFERENCE_DATE
from personalq.repository.service import Repository
from personalq.serving.generation import GenerationParams

log = logging.getLogger(__name__)
BASELINES = ("random", "dense", "reranker")


@dataclass(frozen=True)
class Pick:
    method: str
    checkpoint_id: str | None
    prompt: str | None


@dataclass(frozen=True)
class Side:
    pick: Pick
    image_path: str | None
    label: str  # what is revealed after the vote


@dataclass(frozen=True)
class Pair:
    item: RatingItem
    left: Side
    right: Side


def _seed(text: str) -> int:
    return int(hashlib.sha1(text.encode()).hexdigest()[:8], 16)


class PairMaker:
    def __init__(self, repository: Repository, checkin: CheckIn, engine=None, image_dir: Path | None = None,
                 baselines: tuple[str, ...] = BASELINES):
        self.repository = repository
        self.engine = engine
        self.image_dir = Path(image_dir) if image_dir else None
        self.methods = {"checkin": make_method("checkin", repository, checkin)}
        for name in baselines:
            try:
                self.methods[name] = make_method(name, repository, checkin)
            except MethodUnavailable as reason:
                log.info("baseline %s left out: %s", name, reason)
        self.baselines = [name for name in baselines if name in self.methods]
        self._picks: dict[tuple[str, str], Pick] = {}

    def baseline_for(self, item: RatingItem) -> str:
        return self.baselines[_seed(item.id) % len(self.baselines)]

    def pick(self, item: RatingItem, method: str) -> Pick:
        """The method's checkpoint; when Check-in asks, its leading option stands (what a person clicking first gets)."""
        key = (item.id, method)
        if key not in self._picks:
            prediction = self.methods[method].predict({"query": item.request, "now": REFERENCE_DATE.isoformat()})
            checkpoint_id = prediction.get("checkpoint_id")
            if prediction["status"] == "clarify" and prediction["options"]:
                checkpoint_id = prediction["options"][0]["checkpoint_ids"][0]
            prompt = prediction.get("prompt")
            if checkpoint_id and not prompt:
                prompt = rewrite_prompt(item.request, self.repository.get(checkpoint_id))
            self._picks[key] = Pick(method, checkpoint_id, prompt)
        return self._picks[key]

    def image(self, item: RatingItem, pick: Pick) -> str | None:
        if self.engine is None or self.image_dir is None or pick.checkpoint_id is None:
            return None
        # the file name must not reveal the method: it reaches the page as the image's URL
        path = self.image_dir / f"{hashlib.sha1(f'{item.id}/{pick.method}'.encode()).hexdigest()[:16]}.png"
        if not path.exists():
            card = self.repository.get(pick.checkpoint_id)
            frames = list(self.engine.generate(card, pick.prompt, params=GenerationParams(seed=_seed(item.id) % 2**31)))
            path.parent.mkdir(parents=True, exist_ok=True)
            frames[-1].image.resize((256, 256)).save(path)
        return str(path)

    def _side(self, item: RatingItem, pick: Pick) -> Side:
        name = self.repository.get(pick.checkpoint_id).name if pick.checkpoint_id else "no checkpoint"
        return Side(pick, self.image(item, pick), f"{pick.method} · {name}")

    def pair(self, item: RatingItem, rater: str) -> Pair:
        sides = [self.pick(item, "checkin"), self.pick(item, self.baseline_for(item))]
        random.Random(f"{rater}/{item.id}").shuffle(sides)
        return Pair(item, self._side(item, sides[0]), self._side(item, sides[1]))
