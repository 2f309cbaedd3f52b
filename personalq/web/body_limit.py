"""Bounds on what a request may carry: Gradio parses a whole JSON body before anything can look at it, so a visitor
sending 50 MB of chat history costs the server 50 MB of parsing, and every entry of an invalid 20,000-entry history
becomes a line of Gradio's printed error. Uploads are left to Gradio's own ``max_file_size``."""

from __future__ import annotations

import json

UNLIMITED_PATHS = ("/gradio_api/upload",)  # multipart, streamed to disk and bounded per file by Gradio
EVENT_PATHS = ("/queue/join", "/call/")  # where a visitor's inputs arrive (the chat's history among them)


class BodyLimit:
    """ASGI middleware: a request whose body is over ``max_bytes`` is answered 413 before the app reads it (by its
    Content-Length when given; a body without one is read here first, never past the limit), and so is an event
    whose inputs hold a list of more than ``max_items`` entries."""

    def __init__(self, app, max_bytes: int, max_items: int):
        self.app = app
        self.max_bytes = max_bytes
        self.max_items = max_items

    async def __call__(self, scope, receive, send):
        path = scope.get("path", "")
        if scope["type"] != "http" or path.endswith(UNLIMITED_PATHS):
            return await self.app(scope, receive, send)
        length = dict(scope.get("headers") or []).get(b"content-length")
        if length is not None and length.isdigit() and int(length) > self.max_bytes:
            return await _refuse(send, f"Request too large: at most {self.max_bytes // 1024} KB.")
        event = scope.get("method") == "POST" and any(part in path for part in EVENT_PATHS)
        if length is not None and not event:
            return await self.app(scope, receive, send)
        # read it here (stopping at the first chunk past the limit), look at it, and hand it on whole
        chunks, seen, more = [], 0, True
        while more:
            message = await receive()
            if message["type"] != "http.request":
                return await self.app(scope, _replay([message], receive), send)
            chunks.append(message.get("body", b""))
            seen += len(chunks[-1])
            more = message.get("more_body", False)
            if seen > self.max_bytes:
                return await _refuse(send, f"Request too large: at most {self.max_bytes // 1024} KB.")
        body = b"".join(chunks)
        if event and self._longest_list(body) > self.max_items:
            return await _refuse(send, f"Too many entries: at most {self.max_items} in one input.")
        await self.app(scope, _replay([{"type": "http.request", "body": body, "more_body": False}], receive), send)

    @staticmethod
    def _longest_list(body: bytes) -> int:
        try:
            data = json.loads(body).get("data")
        except (ValueError, AttributeError):
            return 0  # not JSON, or not an event's: the app answers it
        return (
            max((len(value) for value in data if isinstance(value, list)), default=0) if isinstance(data, list) else 0
        )


async def _refuse(send, detail: str) -> None:
    body = json.dumps({"detail": detail}).encode()
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
