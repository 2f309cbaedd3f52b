"""Blind pairs: Check-in against one baseline per item, same seed, sides drawn at random for every showing.

Each method's pick for an item is computed once; images are generated once per (item, method) through the
serving engine and kept on disk, so every rater of an item sees the same two images. Nothing a rater can see
tells the sides apart: stored image names are keyed by the server's secret and every showing reaches the page as
a copy with a name and bytes of its own, the side order is a fresh random draw that only the server keeps (under
the pair's ticket), and an item is not asked at all when its two methods chose the same checkpoint (its two
images would be the same picture) or when one side found none.
"""

from __future__ import annotations

import hashlib
import hmac
import logging
import random
import secrets
import threading
from dataclasses import dataclass, field
from pathlib import Path

from PIL import Image
from PIL.PngImagePlugin import PngInfo

from personalq.checkin.agent import CheckIn
from personalq.checkin.rewrite import rewrite_prompt
from personalq.rating.items import RatingItem
from personalq.rating.judge import REFERENCE_DATE
from personalq.rating.secret import home_secret
from personalq.rating.selection_methods import MethodUnavailable, make_method
from personalq.repository.service import Repository
from personalq.serving.generation import GenerationParams

log = logging.getLogger(__name__)
BASELINES = ("random", "dense", "reranker")
SHOWN = "shown"  # the folder of per-showing image names, inside the image folder
_SIDES = random.SystemRandom()  # unpredictable: a seeded order (rater, item) could be replayed by the rater


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
    ticket: str = field(default_factory=lambda: secrets.token_urlsafe(16))  # names this draw of sides on the server


def _seed(text: str) -> int:
    return int(hashlib.sha1(text.encode()).hexdigest()[:8], 16)


class PairMaker:
    def __init__(
        self,
        repository: Repository,
        checkin: CheckIn,
        engine=None,
        image_dir: Path | None = None,
        baselines: tuple[str, ...] = BASELINES,
        secret: bytes | None = None,
    ):
        """``secret`` keys the image names; by default the one stored in the repository's home."""
        self.repository = repository
        self.secret = secret or home_secret(repository.settings.home)
        self.engine = engine
        self.image_dir = Path(image_dir) if image_dir else None
        self._methods = {"checkin": make_method("checkin", repository, checkin)}
        self._checkin, self._wanted = checkin, baselines
        self._baselines: list[str] | None = None  # built on first use (see :attr:`methods`)
        self._building = threading.Lock()
        self._picks: dict[tuple[str, str], Pick] = {}
        self._lock = threading.Lock()  # one pick at a time: raters' requests arrive on several threads

    @property
    def methods(self) -> dict:
        """Check-in and every baseline available (built on first use: :meth:`_build_baselines`)."""
        self._build_baselines()
        return self._methods

    @property
    def baselines(self) -> list[str]:
        self._build_baselines()
        return self._baselines

    def _build_baselines(self) -> None:
        """The baselines are built on first use, not with the app: one may read every card (the dense one embeds
        them all, minutes at 100,000 cards), and a home nobody rates in should not pay for it at start-up."""
        with self._building:
            if self._baselines is not None:
                return
            for name in self._wanted:
                try:
                    self._methods[name] = make_method(name, self.repository, self._checkin)
                except MethodUnavailable as reason:
                    log.info("baseline %s left out: %s", name, reason)
            self._baselines = [name for name in self._wanted if name in self._methods]

    def baseline_for(self, item: RatingItem) -> str:
        return self.baselines[_seed(item.id) % len(self.baselines)]

    def pick(self, item: RatingItem, method: str) -> Pick:
        """The method's checkpoint; when Check-in asks, its leading option stands (what a person clicking first
        gets)."""
        key = (item.id, method)
        with self._lock:
            if key not in self._picks:
                self._picks[key] = self._predict(item, method)
            return self._picks[key]

    def _predict(self, item: RatingItem, method: str) -> Pick:
        prediction = self.methods[method].predict({"query": item.request, "now": REFERENCE_DATE.isoformat()})
        checkpoint_id = prediction.get("checkpoint_id")
        if prediction["status"] == "clarify" and prediction["options"]:
            checkpoint_id = prediction["options"][0]["checkpoint_ids"][0]
        prompt = prediction.get("prompt")
        if checkpoint_id and not prompt:
            prompt = rewrite_prompt(item.request, self.repository.get(checkpoint_id))
        return Pick(method, checkpoint_id, prompt)

    def picks(self, item: RatingItem) -> tuple[Pick, Pick]:
        """Check-in's pick and its baseline's, in that order (the order a rater sees is drawn in :meth:`pair`)."""
        return self.pick(item, "checkin"), self.pick(item, self.baseline_for(item))

    def identical(self, item: RatingItem) -> bool:
        """Both methods chose the same checkpoint (or none): the two images would be one picture, so a vote says
        nothing."""
        checkin, baseline = self.picks(item)
        return checkin.checkpoint_id == baseline.checkpoint_id

    def answers(self, item: RatingItem) -> bool:
        """Both methods found a checkpoint. A side that says "no checkpoint found" is always the same method's (the
        baselines always find one), so showing it would tell the rater which side is which."""
        return all(pick.checkpoint_id is not None for pick in self.picks(item))

    def askable(self, items: list[RatingItem]) -> list[RatingItem]:
        return [item for item in items if not self.identical(item) and self.answers(item)]

    def image_name(self, item: RatingItem, method: str) -> str:
        """Keyed by the server secret: the name reaches the page as the image's URL, and an unkeyed hash of
        (item, method) can be recomputed by a rater for every method name to unmask the sides."""
        return hmac.new(self.secret, f"{item.id}/{method}".encode(), hashlib.sha256).hexdigest()[:32] + ".png"

    def image(self, item: RatingItem, pick: Pick) -> str | None:
        if self.engine is None or self.image_dir is None or pick.checkpoint_id is None:
            return None
        path = self.image_dir / self.image_name(item, pick.method)
        if not path.exists():
            card = self.repository.get(pick.checkpoint_id)
            frames = list(
                self.engine.generate(card, pick.prompt, params=GenerationParams(seed=_seed(item.id) % 2**31))
            )
            path.parent.mkdir(parents=True, exist_ok=True)
            frames[-1].image.resize((256, 256)).save(path)
        return str(path)

    def _side(self, item: RatingItem, pick: Pick) -> Side:
        name = self.repository.get(pick.checkpoint_id).name if pick.checkpoint_id else "no checkpoint"
        return Side(pick, self._showing(self.image(item, pick)), f"{pick.method} · {name}")

    def _showing(self, image: str | None) -> str | None:
        """A copy of the image for this showing alone: the reveal after a vote tells a rater which method drew the
        picture at that address, so an address shared by every showing would unblind the next rater. Gradio serves
        an output from a folder named by the hash of its bytes, so the copy carries a random note of its own (a PNG
        text chunk; the pixels are the same)."""
        if image is None or self.image_dir is None:
            return image
        token = secrets.token_urlsafe(16)
        shown = self.image_dir / SHOWN / f"{token}.png"
        shown.parent.mkdir(parents=True, exist_ok=True)
        note = PngInfo()
        note.add_text("showing", token)
        with Image.open(image) as picture:
            picture.save(shown, pnginfo=note)
        return str(shown)

    def forget(self, pair: Pair) -> None:
        """The pair was voted on or forgotten: its showing's image names go."""
        for side in (pair.left, pair.right):
            if side.image_path and self.image_dir is not None and Path(side.image_path).parent.name == SHOWN:
                Path(side.image_path).unlink(missing_ok=True)

    def pair(self, item: RatingItem, rng: random.Random | None = None) -> Pair:
        """A fresh draw of sides for one showing, with its own ticket; ``rng`` only for reproducible simulations."""
        sides = list(self.picks(item))
        (rng or _SIDES).shuffle(sides)
        return Pair(item, self._side(item, sides[0]), self._side(item, sides[1]))
