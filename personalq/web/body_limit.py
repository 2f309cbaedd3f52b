"""A maximum request body: Gradio parses a whole JSON body before anything can look at it, so a visitor sending
50 MB of chat history costs the server 50 MB of parsing. Uploads are left to Gradio's own ``max_file_size``."""

from __future__ import annotations

import json

UNLIMITED_PATHS = ("/gradio_api/upload",)  # multipart, streamed to disk and bounded per file by Gradio


class BodyLimit:
    """ASGI middleware: a request whose body is over ``max_bytes`` is answered 413 before the app reads it (by its
    Content-Length when given; a body without one is read here first, never past the limit)."""

    def __init__(self, app, max_bytes: int):
        self.app = app
        self.max_bytes = max_bytes

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http" or scope.get("path", "").endswith(UNLIMITED_PATHS):
            return await self.app(scope, receive, send)
        length = dict(scope.get("headers") or []).get(b"content-length")
        if length is not None and length.isdigit() and int(length) > self.max_bytes:
            return await self._refuse(send)
        if length is not None:
            return await self.app(scope, receive, send)
        # no length given (chunked): read it here, stopping at the first chunk past the limit, and hand it on whole
        chunks, seen, more = [], 0, True
        while more:
            message = await receive()
            if message["type"] != "http.request":
                return await self.app(scope, _replay([message], receive), send)
            chunks.append(message.get("body", b""))
            seen += len(chunks[-1])
            more = message.get("more_body", False)
            if seen > self.max_bytes:
                return await self._refuse(send)
        whole = {"type": "http.request", "body": b"".join(chunks), "more_body": False}
        await self.app(scope, _replay([whole], receive), send)

    async def _refuse(self, send) -> None:
        body = json.dumps({"detail": f"Request too large: at most {self.max_bytes // 1024} KB."}).encode()
        await send(
            {
                "type": "http.response.start",
                "status": 413,
                "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())],
            }
        )
        await send({"type": "http.response.body", "body": body})


def _replay(messages: list, receive):
    async def replayed():
        return messages.pop(0) if messages else await receive()

    return replayed


__all__ = ["BodyLimit"]
