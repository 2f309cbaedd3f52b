"""JSON-in, JSON-out chat clients: Gemini through ``google-genai``, or any OpenAI-compatible endpoint."""

from __future__ import annotations

import json
from typing import Protocol

import httpx

from personalq.access import secret_value
from personalq.config import Settings


class LLMError(RuntimeError):
    """The model could not be reached, timed out, or did not answer with a JSON object."""


class LLMClient(Protocol):
    name: str

    def complete_json(self, system: str, user: str) -> dict: ...


def _parse_object(text: str | None) -> dict:
    if not text:
        raise LLMError("empty reply")
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        raise LLMError(f"reply is not JSON: {exc.msg}") from exc
    if not isinstance(value, dict):
        raise LLMError("reply is not a JSON object")
    return value


class GeminiClient:
    """The real ``google-genai`` client; ``base_url`` points it at a proxy or a local server for tests."""

    name = "gemini"

    def __init__(self, api_key: str, model: str, base_url: str | None = None, timeout_s: float = 20.0):
        from google import genai
        from google.genai import types

        options = types.HttpOptions(
            timeout=int(timeout_s * 1000), base_url=base_url, retry_options=types.HttpRetryOptions(attempts=1)
        )
        self._client = genai.Client(api_key=api_key, http_options=options)
        self._types = types
        self.model = model

    def complete_json(self, system: str, user: str) -> dict:
        config = self._types.GenerateContentConfig(
            system_instruction=system, temperature=0.0, response_mime_type="application/json"
        )
        try:
            reply = self._client.models.generate_content(model=self.model, contents=user, config=config)
        except Exception as exc:  # network errors, timeouts, HTTP errors: all mean "fall back"
            raise LLMError(f"Gemini request failed: {type(exc).__name__}: {exc}") from exc
        return _parse_object(reply.text)


class OpenAICompatibleClient:
    """``POST {base_url}/chat/completions`` with a JSON response format (llama.cpp, vLLM, Ollama ...)."""

    name = "openai"

    def __init__(self, base_url: str, model: str, api_key: str | None = None, timeout_s: float = 20.0):
        self.url = base_url.rstrip("/") + "/chat/completions"
        self.model = model
        self.headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        self.timeout = timeout_s

    def complete_json(self, system: str, user: str) -> dict:
        body = {
            "model": self.model,
            "temperature": 0,
            "response_format": {"type": "json_object"},
            "messages": [{"role": "system", "content": system}, {"role": "user", "content": user}],
        }
        try:
            response = httpx.post(self.url, json=body, headers=self.headers, timeout=self.timeout)
            response.raise_for_status()
            text = response.json()["choices"][0]["message"]["content"]
        except (httpx.HTTPError, KeyError, IndexError, ValueError) as exc:
            raise LLMError(f"OpenAI-compatible request failed: {type(exc).__name__}: {exc}") from exc
        return _parse_object(text)


def make_client(settings: Settings) -> LLMClient:
    if settings.llm_backend == "gemini":
        if not settings.llm_api_key:
            raise LLMError("the Gemini backend needs PERSONALQ_LLM_API_KEY")
        return GeminiClient(
            secret_value(settings.llm_api_key), settings.llm_model, settings.llm_base_url, settings.llm_timeout_s
        )
    if settings.llm_backend == "openai":
        if not settings.llm_base_url:
            raise LLMError("the OpenAI-compatible backend needs PERSONALQ_LLM_BASE_URL")
        return OpenAICompatibleClient(
            settings.llm_base_url, settings.llm_model, secret_value(settings.llm_api_key), settings.llm_timeout_s
        )
    raise LLMError(f"no LLM client for backend {settings.llm_backend!r}")
