"""One person's conversation with Check-in: requests, clarification answers, picks among the nearest checkpoints.

The chat tab keeps a :class:`ChatState` per browser session and calls :meth:`Conversation.reply` per message;
everything the assistant says (the chosen checkpoint, the question and its options, the no-match reason)
is composed here, so the UI only renders it.
"""

from __future__ import annotations

import datetime as dt
import html
import logging
import re
import uuid
from dataclasses import dataclass, field

from personalq.checkin.agent import CheckIn, CheckinResult
from personalq.checkin.rewrite import rewrite_prompt
from personalq.checkin.sessions import SessionNotFound
from personalq.repository.service import CheckpointNotFound, Repository, StoredCheckpoint
from personalq.repository.weighted import Weighted

log = logging.getLogger(__name__)

USE_PREFIX = "Use "
_MARKDOWN = re.compile(r"([\\`\[\]])")  # links and images need "[", code spans "`"; HTML is escaped separately


def plain(text: str) -> str:
    """Card or request text made inert in Markdown: no tags, links or remote images a card could plant.

    Only what opens something is escaped, once: ``<`` and ``&`` (not quotes, which Markdown shows as they are),
    brackets and backticks (an image needs its ``[``, so ``!`` stays as typed)."""
    return _MARKDOWN.sub(r"\\\1", html.escape(text, quote=False))


@dataclass
class ChatState:
    pending_session: str | None = None  # a Check-in session waiting for the answer to its question
    offered: dict[str, str] = field(default_factory=dict)  # option label -> checkpoint id (no-match alternatives)
    last_request: str = ""
    session_id: str = ""  # names this person's image folder; drawn by begin(), per browser session

    def begin(self) -> None:
        """Give this session its own id on its first message. The app's initial state is one object that Gradio
        deep-copies into every session, so an id drawn when it was made would be everyone's."""
        if not self.session_id:
            self.session_id = uuid.uuid4().hex


@dataclass
class Turn:
    status: str  # selected | clarify | no_match
    text: str  # Markdown of the assistant message
    options: list[str] = field(default_factory=list)
    checkpoint: StoredCheckpoint | None = None  # the first of ``uses``: the model the request is about
    prompt: str | None = None
    latency_ms: float = 0.0
    uses: list[Weighted] = field(default_factory=list)  # every checkpoint of the image, at its weight
    negative_prompt: str = ""


def highlight(prompt: str, triggers: list[str]) -> str:
    """The prompt as inert text with every trigger occurrence marked."""
    escaped = plain(prompt)
    for trigger in sorted(triggers, key=len, reverse=True):
        escaped = re.sub(
            re.escape(plain(trigger)), lambda m: f"<mark>{m.group(0)}</mark>", escaped, flags=re.IGNORECASE
        )
    return escaped


def describe(checkpoint: StoredCheckpoint, prompt: str) -> str:
    version = f" · version {plain(checkpoint.version)}" if checkpoint.version else ""
    return (
        f"**{plain(checkpoint.name)}**{version} · {checkpoint.created_at:%d %b %Y} · "
        f"{checkpoint.kind.replace('_', ' ')}\n\n"
        f"Prompt: {highlight(prompt, checkpoint.triggers)}"
    )


class Conversation:
    def __init__(self, checkin: CheckIn, repository: Repository):
        self.checkin = checkin
        self.repository = repository

    def reply(self, message: str, state: ChatState, now: dt.datetime | None = None) -> Turn:
        """Answer one message; ``state`` is updated in place (pending question, offered alternatives)."""
        if message in state.offered:
            return self._use(state.offered[message], state)
        result = None
        if state.pending_session:
            try:
                result = self.checkin.answer(state.pending_session, message)
            except SessionNotFound:
                state.pending_session = None
        if result is None:
            state.last_request = message
            result = self.checkin.ask(message, now)
        return self._turn(result, state)

    def _turn(self, result: CheckinResult, state: ChatState) -> Turn:
        state.pending_session = result.session if result.status == "clarify" else None
        state.offered = {}
        if result.status == "selected":
            uses = [Weighted(self.repository.get(c.checkpoint_id), c.weight) for c in result.checkpoints]
            checkpoint = uses[0].checkpoint
            return Turn(
                "selected",
                describe(checkpoint, result.prompt),
                checkpoint=checkpoint,
                prompt=result.prompt,
                latency_ms=result.latency_ms,
                uses=uses,
                negative_prompt=result.negative_prompt,
            )
        if result.status == "clarify":
            return Turn(
                "clarify",
                plain(result.question or "Which one do you mean?"),
                [o.label for o in result.options],
                latency_ms=result.latency_ms,
            )
        state.offered = {f"{USE_PREFIX}{a.name} ({a.created_at:%b %Y})": a.checkpoint_id for a in result.alternatives}
        nearest = " Nearest checkpoints are offered below." if state.offered else ""
        return Turn(
            "no_match",
            f"No match. {plain((result.reason or 'Nothing fits the request').rstrip('.'))}.{nearest}",
            list(state.offered),
            latency_ms=result.latency_ms,
        )

    def record_use(self, checkpoint: StoredCheckpoint) -> None:
        """A generation with ``checkpoint`` finished: it is now the most recently used (what start-up warm-up and
        requests such as "the one I used last" read)."""
        try:
            self.repository.touch(checkpoint.id)
        except CheckpointNotFound:  # removed while it generated: nothing to record
            log.info("%s was removed during its generation", checkpoint.id)

    def _use(self, checkpoint_id: str, state: ChatState) -> Turn:
        checkpoint = self.repository.get(checkpoint_id)
        prompt = rewrite_prompt(state.last_request, checkpoint)
        state.offered, state.pending_session = {}, None
        return Turn(
            "selected", describe(checkpoint, prompt), checkpoint=checkpoint, prompt=prompt, uses=[Weighted(checkpoint)]
        )
