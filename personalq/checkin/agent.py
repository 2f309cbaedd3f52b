"""Check-in: request -> intent -> candidates -> decision -> question or rewritten prompt.

This is the Python API the UI and the CLI call. The reasoning engine is pluggable: the local deterministic
engine by default, or an LLM backend that falls back to it on any failure.
"""

from __future__ import annotations

import datetime as dt
import logging
import time
from typing import Literal, Protocol

from pydantic import BaseModel, Field
from rapidfuzz import fuzz, process

from personalq.checkin.clarify import Option, ask
from personalq.checkin.intent import Intent, parse_intent, prompt_text
from personalq.checkin.reasoning import Decision, decide, rank
from personalq.checkin.retrieval import CardCache, retrieve
from personalq.checkin.rewrite import rewrite_prompt
from personalq.checkin.sessions import SessionState, SessionStore
from personalq.repository.service import Repository, StoredCheckpoint
from personalq.repository.versions import parse_version

log = logging.getLogger(__name__)
MAX_QUERY_CHARS = 2000


class Alternative(BaseModel):
    checkpoint_id: str
    name: str
    created_at: dt.datetime


class CheckinResult(BaseModel):
    status: Literal["selected", "clarify", "no_match"]
    checkpoint_id: str | None = None
    prompt: str | None = None
    question: str | None = None
    options: list[Option] = Field(default_factory=list)
    session: str | None = None
    reason: str = ""
    alternatives: list[Alternative] = Field(default_factory=list)
    engine: str = "local"
    intent: str = ""
    latency_ms: float = 0.0

    def contract(self) -> dict:
        """The JSON object of ``personalq checkin --json`` (DESIGN.md)."""
        return {
            "status": self.status,
            "checkpoint_id": self.checkpoint_id,
            "prompt": self.prompt,
            "question": self.question,
            "options": [o.model_dump() for o in self.options],
            "session": self.session,
            "reason": self.reason,
            "alternatives": [a.model_dump(mode="json") for a in self.alternatives],
        }


class Reasoner(Protocol):
    name: str

    def decide(self, intent: Intent, candidates: list[StoredCheckpoint], scores: dict[str, float]) -> Decision: ...


class LocalReasoner:
    name = "local"

    def decide(self, intent: Intent, candidates: list[StoredCheckpoint], scores: dict[str, float]) -> Decision:
        return decide(intent, candidates, scores)


class InvalidRequest(ValueError):
    """A request Check-in cannot work with (empty, absurdly long); the message is for the person."""


def _clean(text: str) -> str:
    text = " ".join((text or "").split())
    if not text:
        raise InvalidRequest("Tell me what you would like to make, for example 'my April dog model on a beach'.")
    if len(text) > MAX_QUERY_CHARS:
        raise InvalidRequest(f"That request is {len(text):,} characters long; please keep it under {MAX_QUERY_CHARS:,}.")
    return text


class CheckIn:
    def __init__(self, repository: Repository, reasoner: Reasoner | None = None):
        self.repository = repository
        self.reasoner = reasoner or LocalReasoner()
        self.cache = CardCache(repository)
        self.store = SessionStore(repository)
        self._qualifiers: tuple[int, frozenset[str]] | None = None

    def _known_qualifiers(self, cards: int) -> frozenset[str]:
        """Version qualifiers of this repository, recomputed when the card revision ``cards`` moves."""
        if self._qualifiers is None or self._qualifiers[0] != cards:
            from sqlalchemy import select

            from personalq.repository.orm import Checkpoint

            from bm25s.stopwords import STOPWORDS_EN

            with self.repository.sessions() as session:
                rows = session.execute(select(Checkpoint.version, Checkpoint.family_id).where(Checkpoint.version.is_not(None))).all()
            # a qualifier is a word of version labels that never names a family ("pruned", "offset", "hileg"),
            # so "arcade" in "Arcade V8" or "style" in "Gothic style 2" stays a content word
            family_words = {w for _, family in rows for w in family.split("-")}
            words = {q for version, _ in rows for q in parse_version(version).qualifiers
                     if len(q) > 2 and not q.isdigit() and q not in STOPWORDS_EN and q not in family_words}
            self._qualifiers = (cards, frozenset(words))
        return self._qualifiers[1]

    def ask(self, query: str, now: dt.datetime | None = None) -> CheckinResult:
        started = time.perf_counter()
        query = _clean(query)
        now = now or dt.datetime.now()
        revision = self.cache.refresh()
        intent = parse_intent(query, now, self._known_qualifiers(revision.cards))
        prompt = prompt_text(intent)
        search_text = " ".join([prompt, *intent.styles, *intent.version_qualifiers]).strip() or query
        found = retrieve(self.repository, self.cache, revision, intent, search_text)
        scores = {c.id: found.fused.get(c.id, 0.0) + 0.01 * found.dense.get(c.id, 0.0) for c in found.checkpoints}
        decision = self._decide(intent, found.checkpoints, scores)
        result = self._finish(query, now, intent, prompt, decision, scores, session_id=None)
        result.latency_ms = (time.perf_counter() - started) * 1000
        return result

    def answer(self, session_id: str, text: str) -> CheckinResult:
        """Continue a clarification: an option's label (exactly or nearly) or free text narrows the candidates."""
        started = time.perf_counter()
        text = _clean(text)
        row, state = self.store.load(session_id)
        revision = self.cache.refresh()
        remaining = self.cache.get_many(state.candidate_ids)
        chosen_ids = self._match_option(text, state.options)
        intent = parse_intent(text, row.now, self._known_qualifiers(revision.cards))
        if chosen_ids is not None:
            narrowed = [c for c in remaining if c.id in chosen_ids]
            decision = Decision("selected" if len(narrowed) == 1 else "clarify", rank(narrowed, state.scores))
        else:
            decision = decide(intent, remaining, state.scores)
            if decision.status == "no_match":  # the answer fits none of the options: ask again, keep the session
                options = ", ".join(o.label for o in state.options)
                result = CheckinResult(status="clarify", question=f"Sorry, I could not match that. Please choose one of: {options}.",
                                       options=state.options, session=session_id, reason=decision.reason)
                result.latency_ms = (time.perf_counter() - started) * 1000
                return result
        result = self._finish(row.query, row.now, intent, state.prompt, decision, state.scores, session_id=session_id)
        result.latency_ms = (time.perf_counter() - started) * 1000
        return result

    # -- internals -------------------------------------------------------------------------------------

    def _decide(self, intent: Intent, candidates: list[StoredCheckpoint], scores: dict[str, float]) -> Decision:
        try:
            return self.reasoner.decide(intent, candidates, scores)
        except Exception as exc:  # an LLM backend failing must never cost the person an answer
            log.warning("%s reasoning failed (%s); using the local engine", self.reasoner.name, exc)
            return decide(intent, candidates, scores)

    @staticmethod
    def _match_option(text: str, options: list[Option]) -> list[str] | None:
        if not options:
            return None
        labels = [o.label for o in options]
        for option in options:
            if option.label.lower() == text.lower().strip():
                return option.checkpoint_ids
        best = process.extractOne(text, labels, scorer=fuzz.WRatio, score_cutoff=86)
        if best is not None and len(text) >= 3:
            return options[best[2]].checkpoint_ids
        return None

    def _finish(self, query: str, now: dt.datetime, intent: Intent, prompt: str, decision: Decision,
                scores: dict[str, float], session_id: str | None) -> CheckinResult:
        engine = self.reasoner.name
        if decision.status == "selected":
            card = decision.chosen
            result = CheckinResult(status="selected", checkpoint_id=card.id, prompt=rewrite_prompt(prompt, card), session=session_id,
                                   engine=engine, intent=intent.describe())
            if session_id:
                self.store.update(session_id, "selected", SessionState(prompt=prompt, candidate_ids=[card.id], options=[]))
            return result
        if decision.status == "no_match":
            return CheckinResult(status="no_match", reason=decision.reason, session=session_id, engine=engine, intent=intent.describe(),
                                 alternatives=[Alternative(checkpoint_id=c.id, name=c.name, created_at=c.created_at) for c in decision.alternatives])
        if decision.phrasing:
            text, options = decision.phrasing
        else:
            question = ask(decision.remaining)
            text, options = question.text, question.options
        state = SessionState(prompt=prompt, candidate_ids=[c.id for c in decision.remaining], options=options,
                             scores={c.id: scores.get(c.id, 0.0) for c in decision.remaining})
        if session_id:
            self.store.update(session_id, "clarify", state)
        else:
            session_id = self.store.create(query, now, "clarify", state)
        return CheckinResult(status="clarify", question=text, options=options, session=session_id, reason=decision.reason,
                             engine=engine, intent=intent.describe())
