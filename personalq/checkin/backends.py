"""Choosing the reasoning engine from settings: local, or an LLM backend that falls back to local."""

from __future__ import annotations

import logging

from personalq.checkin.agent import CheckIn, LocalReasoner, Reasoner
from personalq.config import Settings
from personalq.repository.service import Repository

log = logging.getLogger(__name__)


def make_reasoner(settings: Settings) -> Reasoner:
    """The configured backend; one that cannot start (no key, no endpoint) falls back to the local engine, so
    a missing secret on a deployment costs the LLM, not the app."""
    if settings.llm_backend == "local":
        return LocalReasoner()
    from personalq.checkin.llm import LLMError, LLMReasoner, make_client

    try:
        return LLMReasoner(make_client(settings))
    except LLMError as exc:
        log.warning("%s backend unavailable (%s); Check-in uses the local engine", settings.llm_backend, exc)
        return LocalReasoner()


def make_checkin(settings: Settings, repository: Repository | None = None) -> CheckIn:
    return CheckIn(repository or Repository(settings), make_reasoner(settings))
