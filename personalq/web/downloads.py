"""One-time downloads: a private file (the votes export) is written outside every served folder and handed to the
session that asked for it under a random address that works once. Gradio's own file serving would keep it at a
stable address inside a served folder, where anyone who learns the path can fetch it."""

from __future__ import annotations

import logging
import secrets
import threading
import time
from pathlib import Path

from starlette.requests import Request
from starlette.responses import PlainTextResponse, Response
from starlette.routing import Route

log = logging.getLogger(__name__)
PREFIX = "/personalq/download"
EXPIRES_S = 600.0  # an offer nobody fetched is deleted after this long


class OneTimeDownloads:
    def __init__(self, folder: Path, expires_s: float = EXPIRES_S):
        self.folder = folder
        self.expires_s = expires_s
        self._offers: dict[str, tuple[Path, str, float]] = {}
        self._lock = threading.Lock()

    def offer(self, content: str | bytes, filename: str) -> str:
        """Keep ``content`` outside the served folders; return the address (relative to the app) that serves it
        once."""
        self._expire()
        token = secrets.token_urlsafe(24)
        self.folder.mkdir(parents=True, exist_ok=True)
        path = self.folder / token
        path.write_bytes(content.encode() if isinstance(content, str) else content)
        path.chmod(0o600)
        with self._lock:
            self._offers[token] = (path, filename, time.monotonic())
        return f"{PREFIX}/{token}"

    def take(self, token: str) -> tuple[bytes, str] | None:
        """The file's bytes and name, once; None for an unknown, taken or expired token."""
        with self._lock:
            offer = self._offers.pop(token, None)
        if offer is None or time.monotonic() - offer[2] > self.expires_s:
            return None
        path, filename, _ = offer
        try:
            return path.read_bytes(), filename
        finally:
            path.unlink(missing_ok=True)

    def _expire(self) -> None:
        now = time.monotonic()
        with self._lock:
            stale = [token for token, (_, _, at) in self._offers.items() if now - at > self.expires_s]
            paths = [self._offers.pop(token)[0] for token in stale]
        for path in paths:
            path.unlink(missing_ok=True)

    def route(self) -> Route:
        async def download(request: Request) -> Response:
            taken = self.take(request.path_params["token"])
            if taken is None:
                return PlainTextResponse("This download has been used or has expired.", status_code=404)
            content, filename = taken
            return Response(
                content,
                media_type="text/csv" if filename.endswith(".csv") else "application/octet-stream",
                headers={"content-disposition": f'attachment; filename="{filename}"', "cache-control": "no-store"},
            )

        return Route(PREFIX + "/{token}", download, methods=["GET"])


__all__ = ["OneTimeDownloads"]
