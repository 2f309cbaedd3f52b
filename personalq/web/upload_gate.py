"""Uploads only from a session that may write.

Gradio's ``/upload`` route takes files from anyone and keeps them in its temporary folder; only the admin's import
needs uploads. An upload request carries no Gradio session, so a session that signs in to write is given an upload
pass (a random value its page keeps as a cookie) and the gate lets through uploads that carry a live pass. Where
writes need no sign-in (loopback) or every visitor signed in through Gradio (``auth``, which Gradio checks on this
route itself), the gate stays open.
"""

from __future__ import annotations

import hmac
import json
import secrets
import threading
import time

COOKIE = "personalq-upload"
UPLOAD_PATH = "/gradio_api/upload"
PASS_TTL_S = 12 * 3600.0


class UploadPasses:
    """Passes handed to sessions that signed in to write; each lives ``ttl_s``."""

    def __init__(self, ttl_s: float = PASS_TTL_S):
        self.ttl_s = ttl_s
        self._passes: dict[str, float] = {}
        self._lock = threading.Lock()

    def issue(self) -> str:
        value = secrets.token_urlsafe(24)
        now = time.monotonic()
        with self._lock:
            self._passes = {p: at for p, at in self._passes.items() if now - at < self.ttl_s}
            self._passes[value] = now
        return value

    def valid(self, value: str | None) -> bool:
        if not value:
            return False
        now = time.monotonic()
        with self._lock:
            live = [p for p, at in self._passes.items() if now - at < self.ttl_s]
        return any(hmac.compare_digest(value, p) for p in live)


def _cookie(headers: list[tuple[bytes, bytes]], name: str) -> str | None:
    for key, value in headers:
        if key == b"cookie":
            for part in value.decode("latin1").split(";"):
                k, _, v = part.strip().partition("=")
                if k == name:
                    return v
    return None


class UploadGate:
    """ASGI middleware: ``/upload`` answers 403 unless the gate is open or the request carries a live pass."""

    def __init__(self, app, passes: UploadPasses, open_: bool):
        self.app = app
        self.passes = passes
        self.open = open_

    async def __call__(self, scope, receive, send):
        if (
            self.open
            or scope["type"] != "http"
            or not scope.get("path", "").rstrip("/").endswith(UPLOAD_PATH)
            or self.passes.valid(_cookie(scope.get("headers") or [], COOKIE))
        ):
            return await self.app(scope, receive, send)
        body = json.dumps({"detail": "Uploads are for a session signed in to change the repository."}).encode()
        await send(
            {
                "type": "http.response.start",
                "status": 403,
                "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())],
            }
        )
        await send({"type": "http.response.body", "body": body})


# run in the page after an admin sign-in: keeps the pass as a cookie that the page's uploads send
SET_COOKIE_JS = f"(value) => {{ if (value) document.cookie = '{COOKIE}=' + value + '; path=/; SameSite=Strict'; }}"

__all__ = ["COOKIE", "SET_COOKIE_JS", "UploadGate", "UploadPasses"]
