"""Selection methods compared under one harness: Check-in and the baselines the paper reports.

The rater tab shows Check-in's pick beside a baseline's, so the baselines are part of the app, not only of the
Check-in bench (which imports them from here). Each method answers a request with the same contract as
``CheckIn.ask`` (status, checkpoint, prompt), so the bench scores and the rater tab shows them alike.
"""

from __future__ import annotations

import datetime as dt
import random
from pathlib import Path
from typing import Protocol

import numpy as np

from personalq.checkin.agent import CheckIn
from personalq.checkin.intent import parse_intent, prompt_text
from personalq.checkin.lexicon import SUBJECT_SYNONYMS
from personalq.checkin.rewrite import rewrite_prompt
from personalq.repository.embedding import embed
from personalq.repository.service import Repository


class MethodUnavailable(RuntimeError):
    """The method needs something this machine does not have (reported, never faked)."""


class Method(Protocol):
    name: str

    def predict(self, instance: dict) -> dict: ...


def _now(instance: dict) -> dt.datetime:
    return dt.datetime.fromisoformat(instance["now"]) if instance.get("now") else dt.datetime.now()


def _selected(repository: Repository, instance: dict, checkpoint_id: str | None) -> dict:
    if checkpoint_id is None:
        return {
            "status": "no_match",
            "checkpoint_id": None,
            "prompt": None,
            "question": None,
            "options": [],
            "followup": None,
        }
    card = repository.get(checkpoint_id)
    prompt = rewrite_prompt(prompt_text(parse_intent(instance["query"], _now(instance))), card)
    return {
        "status": "selected",
        "checkpoint_id": checkpoint_id,
        "prompt": prompt,
        "question": None,
        "options": [],
        "followup": None,
    }


class CheckinMethod:
    name = "checkin"

    def __init__(self, checkin: CheckIn):
        self.checkin = checkin

    def predict(self, instance: dict) -> dict:
        result = self.checkin.ask(instance["query"], _now(instance))
        prediction = {**result.contract(), "latency_ms": result.latency_ms, "followup": None}
        if result.status == "clarify" and instance.get("followup"):
            after = self.checkin.answer(result.session, instance["followup"]["answer"])
            prediction["followup"] = {
                "status": after.status,
                "checkpoint_id": after.checkpoint_id,
                "checkpoints": [c.model_dump() for c in after.checkpoints],
                "prompt": after.prompt,
                "negative_prompt": after.negative_prompt,
            }
        return prediction


class DenseMethod:
    """Stylus-style: cosine retrieval over each checkpoint's card text, top-1, never asks.

    It embeds its own view of every card (name with version, then description, subjects, styles, tags, as far
    as the encoder's window reaches) rather than reusing Check-in's index, whose identity texts leave version
    labels out on purpose; the baseline should not inherit that choice.
    """

    name = "dense"

    def __init__(self, repository: Repository):
        self.repository = repository
        cards = repository.list()
        self.ids = [card.id for card in cards]
        self.vectors = embed([card.index_text() for card in cards])

    def predict(self, instance: dict) -> dict:
        if not self.ids:
            return _selected(self.repository, instance, None)
        scores = self.vectors @ embed([instance["query"]])[0]
        return _selected(self.repository, instance, self.ids[int(np.argmax(scores))])


def _subject_ids(repository: Repository, subjects: list[str], limit: int) -> list[str]:
    """Checkpoints whose subjects or tags name one of ``subjects`` (or a synonym), newest first: the random
    baseline's pool, so that it guesses within the request's category rather than across the whole repository."""
    words = {w for s in subjects for w in (s, *SUBJECT_SYNONYMS.get(s, ()))}
    if not words:
        return []
    return repository.ids_with_terms(words, ("subject", "tag"), limit)


class RandomMethod:
    """A random checkpoint of the request's category (all checkpoints when no category is recognised)."""

    name = "random"

    def __init__(self, repository: Repository, seed: int = 0):
        self.repository = repository
        self.rng = random.Random(seed)
        self._all = [c.id for c in repository.list()]

    def predict(self, instance: dict) -> dict:
        subjects = parse_intent(instance["query"], _now(instance)).subjects
        pool = sorted(_subject_ids(self.repository, subjects, 10_000)) if subjects else []
        return _selected(self.repository, instance, self.rng.choice(pool or self._all))


class RerankerMethod:
    """Dense top-30 reranked by a sentence-transformers CrossEncoder found on local disk (``reranker_model``)."""

    name = "reranker"

    def __init__(self, repository: Repository, model_path: str | Path | None = None):
        path = model_path or repository.settings.reranker_model
        if not path or not Path(path).exists():
            raise MethodUnavailable(
                "no cross-encoder model on local disk (set PERSONALQ_RERANKER_MODEL to a folder); not faked"
            )
        from sentence_transformers import CrossEncoder

        self.model = CrossEncoder(str(path), device="cpu")
        self.repository = repository

    def predict(self, instance: dict) -> dict:
        hits = self.repository.search_dense(instance["query"], k=30)
        cards = self.repository.get_many([i for i, _ in hits])
        if not cards:
            return _selected(self.repository, instance, None)
        scores = self.model.predict([(instance["query"], c.index_text()) for c in cards])
        return _selected(self.repository, instance, cards[int(scores.argmax())].id)


def make_method(name: str, repository: Repository, checkin: CheckIn | None = None) -> Method:
    if name == "checkin":
        return CheckinMethod(checkin or CheckIn(repository))
    if name == "dense":
        return DenseMethod(repository)
    if name == "random":
        return RandomMethod(repository)
    if name == "reranker":
        return RerankerMethod(repository)
    raise ValueError(f"unknown method {name!r} (checkin, dense, random, reranker)")
