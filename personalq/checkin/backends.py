"""Choosing the reasoning engine from settings: local, or an LLM backend that falls back to local."""

from __future__ import annotations

from personalq.checkin.agent import CheckIn, LocalReasoner, Reasoner
from personalq.config import Settings
from personalq.repository.service import Repository


def make_reasoner(settings: Settings) -> Reasoner:
    if settings.llm_backend == "local":
        return LocalReasoner()
    from personalq.checkin.llm import LLMReasoner, make_client

    return LLMReasoner(make_client(settings))


def make_checkin(settings: Settings, repository: Repository | None = None) -> CheckIn:
    return CheckIn(repository or Repository(settings), make_reasoner(settings))
