"""LLM backends for Check-in: they may rerank the candidates the local engine kept and phrase the question.

Whatever the model says is validated against the candidates (ids must be candidates, options must map to
candidates, a proposed prompt must carry the chosen card's own trigger); anything invalid, slow or
failing falls back to the local engine's decision, and the person still gets an answer.
"""

from personalq.checkin.llm.clients import GeminiClient, LLMClient, LLMError, OpenAICompatibleClient, make_client
from personalq.checkin.llm.reasoner import LLMReasoner

__all__ = ["GeminiClient", "LLMClient", "LLMError", "LLMReasoner", "OpenAICompatibleClient", "make_client"]
