"""Check-in: request -> intent -> candidates -> decision -> question or rewritten prompt.

This is the Python API the UI and the CLI call. The reasoning engine is pluggable: the local deterministic
engine by default, or an LLM backend that falls back to it on any failure.
"""

from __future__ import annotations

import datetime as dt
import logging
import re
import time
import unicodedata
from typing import Literal, Protocol

from pydantic import BaseModel, Field
from rapidfuzz import fuzz, process

from personalq.checkin.clarify import Option, ask, pick_by_words
from personalq.checkin.intent import SLOT, Intent, option_position, overlaps, parse_intent, prompt_text
from personalq.checkin.reasoning import Decision, decide, narrow, rank
from personalq.checkin.reference import (
    Reference,
    name_position,
    naming_spans,
    read_reference,
    reference_spans,
)
from personalq.checkin.retrieval import CardCache, Ranking, among, named_by, retrieve
from personalq.checkin.rewrite import rewrite_prompt
from personalq.checkin.sessions import SessionState, SessionStore
from personalq.checkin.tokens import words
from personalq.repository.service import Repository, StoredCheckpoint
from personalq.repository.weighted import WeightedId

log = logging.getLogger(__name__)
MAX_QUERY_CHARS = 2000
# a run of the request between spaces and punctuation, hyphens, underscores and dots kept ("Style-TronLegacy-8v-B")
_CHUNK = re.compile(r"[^\W_](?:[\w.-]*[^\W_])?")
# a run that reads as a file's own name rather than a word: joined parts, digits or inner capitals ("wcat8-v1-2000",
# "oot64", "DaveSpaceFour")
_IDENTIFIER = re.compile(r"[^\W_][-_.][^\W_]|\d|[a-z][A-Z]")


class Alternative(BaseModel):
    checkpoint_id: str
    name: str
    created_at: dt.datetime


class CheckinResult(BaseModel):
    status: Literal["selected", "clarify", "no_match"]
    checkpoint_id: str | None = None  # the first of ``checkpoints``: the model the request is about
    checkpoints: list[WeightedId] = Field(default_factory=list)  # every checkpoint of the image, at its weight
    prompt: str | None = None
    negative_prompt: str = ""
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
            "checkpoints": [c.model_dump() for c in self.checkpoints],
            "prompt": self.prompt,
            "negative_prompt": self.negative_prompt,
            "question": self.question,
            "options": [o.model_dump() for o in self.options],
            "session": self.session,
            "reason": self.reason,
            "alternatives": [a.model_dump(mode="json") for a in self.alternatives],
        }


class Reasoner(Protocol):
    name: str

    def decide(self, intent: Intent, ranking: Ranking) -> Decision: ...


class LocalReasoner:
    name = "local"

    def decide(self, intent: Intent, ranking: Ranking) -> Decision:
        return decide(intent, ranking)


class InvalidRequest(ValueError):
    """A request Check-in cannot work with (empty, absurdly long); the message is for the person."""


# a WebUI network tag in a request: "<lora:mochiCorgi_v2:0.8> mochicorgi sitting in a park"
_WEBUI_NETWORK = re.compile(r"<(?:lora|lyco|locon):(?P<name>[^:<>]+)(?::[^<>]*)?>", re.I)


def _clean(text: str) -> str:
    # the prompt writer marks where a name stood with SLOT, so no request may carry one of its own
    text = " ".join(unicodedata.normalize("NFKC", text or "").replace(SLOT, " ").split())
    # a network tag names its model as "NAME lora" does: selection reads the name, the prompt drops it with its
    # kind word, and nothing half-cut ("< :name:0.8>") reaches the picture
    text = _WEBUI_NETWORK.sub(lambda m: f", {m.group('name').replace('_', ' ').strip()} lora, ", text)
    text = re.sub(r"\s*,(?:\s*,)+", ",", " ".join(text.split())).strip(" ,")
    if not text:
        raise InvalidRequest("Tell me what you would like to make, for example 'my April dog model on a beach'.")
    if len(text) > MAX_QUERY_CHARS:
        raise InvalidRequest(
            f"That request is {len(text):,} characters long; please keep it under {MAX_QUERY_CHARS:,}."
        )
    return text


class CheckIn:
    def __init__(self, repository: Repository, reasoner: Reasoner | None = None):
        self.repository = repository
        self.reasoner = reasoner or LocalReasoner()
        self.cache = CardCache(repository)
        self.store = SessionStore(repository)

    def _understand(self, text: str, now: dt.datetime) -> tuple[Intent, Reference]:
        """The intent record (constraints) and the reference words (evidence) of one message."""
        index = self.cache.index()
        files = [
            m.span() for m in _CHUNK.finditer(text) if _IDENTIFIER.search(m.group()) and index.spells_file(m.group())
        ]
        intent = parse_intent(text, now, files=files)
        excluded = {w for phrase in intent.excluded for w in words(phrase)}
        return intent, read_reference(
            text,
            intent.selection_spans,
            excluded,
            intent.style_spans,
            intent.version_span,
            names=index.names,
            creators=index.is_creator,
            only_creators=index.only_creator,
            files=files,
        )

    def ask(self, query: str, now: dt.datetime | None = None) -> CheckinResult:
        started = time.perf_counter()
        query = _clean(query)
        now = now or dt.datetime.now()
        self.cache.refresh()
        intent, reference = self._understand(query, now)
        ranking = retrieve(self.cache, intent, reference)
        decision = self._decide(intent, ranking)
        scores = {r.card.id: r.total for r in ranking.candidates}
        result = self._finish(
            query, now, intent, decision, scores, session_id=None, reading=(intent, ranking.reference)
        )
        result.latency_ms = (time.perf_counter() - started) * 1000
        return result

    def answer(self, session_id: str, text: str) -> CheckinResult:
        """Continue a clarification: an option's label or position, or free text that narrows the candidates
        ("the heavy one", "v2", "the newest", "the one by konyconi")."""
        started = time.perf_counter()
        text = _clean(text)
        row, state = self.store.load(session_id)
        self.cache.refresh()
        remaining = self.cache.get_many(state.candidate_ids)
        chosen_ids = self._match_option(text, state.options)
        intent, reference = self._understand(text, row.now)
        if chosen_ids is not None:
            narrowed = [c for c in remaining if c.id in chosen_ids]
            decision = Decision("selected" if len(narrowed) == 1 else "clarify", rank(narrowed, state.scores))
        else:
            decision = narrow(intent, among(self.cache, remaining, reference))
            if decision.status == "no_match" or len(decision.remaining) == len(remaining):
                options = ", ".join(o.label for o in state.options)
                result = CheckinResult(
                    status="clarify",
                    question=f"Sorry, I could not tell which one from that. Please choose one of: {options}.",
                    options=state.options,
                    session=session_id,
                    reason=decision.reason,
                )
                result.latency_ms = (time.perf_counter() - started) * 1000
                return result
        result = self._finish(row.query, row.now, intent, decision, state.scores, session_id=session_id)
        result.latency_ms = (time.perf_counter() - started) * 1000
        return result

    # -- internals -------------------------------------------------------------------------------------

    def _decide(self, intent: Intent, ranking: Ranking) -> Decision:
        try:
            return self.reasoner.decide(intent, ranking)
        except Exception as exc:  # an LLM backend failing must never cost the person an answer
            log.warning("%s reasoning failed (%s); using the local engine", self.reasoner.name, exc)
            return decide(intent, ranking)

    @staticmethod
    def _match_option(text: str, options: list[Option]) -> list[str] | None:
        if not options:
            return None
        if (position := option_position(text)) is not None and position < len(options):
            return options[position].checkpoint_ids
        labels = [o.label for o in options]
        for option in options:
            if option.label.lower() == text.lower().strip():
                return option.checkpoint_ids
        # the words that tell the options apart before a fuzzy match, which scores "gushu, not the gushuman one"
        # highest for "gushuman"; the fuzzy match then forgives typos
        if (named := pick_by_words(text, options)) is not None:
            return named
        best = process.extractOne(text, labels, scorer=fuzz.WRatio, score_cutoff=86)
        if best is not None and len(text) >= 3:
            return options[best[2]].checkpoint_ids
        return None

    def _prompt(
        self,
        query: str,
        now: dt.datetime,
        card: StoredCheckpoint | None,
        reading: tuple[Intent, Reference] | None = None,
    ) -> str:
        """What the first message asks to draw: without its selection phrases and the words that named
        ``card``, with the card's trigger put in. ``reading`` is the intent and the reference selection read in
        ``query``, when they were just read (an answer to a question reads the first message again)."""
        if reading is not None:
            intent, reference = reading
        else:
            intent, reference = self._understand(query, now)
            if reference.words:
                reference, _ = named_by(self.cache.index(), reference)
        if card is None:
            return prompt_text(intent, reference_spans(reference))
        # a style named with the model ("my watercolor corgi") is how to draw it: it stays in the picture
        cut = [span for span in naming_spans(reference, card) if not overlaps(span, intent.style_spans)]
        text = prompt_text(intent, cut, name_position(reference, cut))
        return rewrite_prompt(text, card, request=query)

    def _finish(
        self,
        query: str,
        now: dt.datetime,
        intent: Intent,
        decision: Decision,
        scores: dict[str, float],
        session_id: str | None,
        reading: tuple[Intent, Reference] | None = None,
    ) -> CheckinResult:
        engine = self.reasoner.name
        if decision.status == "selected":
            card = decision.chosen
            prompt = self._prompt(query, now, card, reading)
            result = CheckinResult(
                status="selected",
                checkpoint_id=card.id,
                checkpoints=[WeightedId(checkpoint_id=card.id)],
                prompt=prompt,
                session=session_id,
                engine=engine,
                intent=intent.describe(),
            )
            if session_id:
                self.store.update(
                    session_id, "selected", SessionState(prompt=prompt, candidate_ids=[card.id], options=[])
                )
            return result
        if decision.status == "no_match":
            return CheckinResult(
                status="no_match",
                reason=decision.reason,
                session=session_id,
                engine=engine,
                intent=intent.describe(),
                alternatives=[
                    Alternative(checkpoint_id=c.id, name=c.name, created_at=c.created_at)
                    for c in decision.alternatives
                ],
            )
        if decision.phrasing:
            text, options = decision.phrasing
        else:
            question = ask(decision.remaining)
            text, options = question.text, question.options
        state = SessionState(
            prompt=self._prompt(query, now, None, reading),
            candidate_ids=[c.id for c in decision.remaining],
            options=options,
            scores={c.id: scores.get(c.id, 0.0) for c in decision.remaining},
        )
        if session_id:
            self.store.update(session_id, "clarify", state)
        else:
            session_id = self.store.create(query, now, "clarify", state)
        return CheckinResult(
            status="clarify",
            question=text,
            options=options,
            session=session_id,
            reason=decision.reason,
            engine=engine,
            intent=intent.describe(),
        )
