"""A local HTTP server speaking the Gemini REST API's ``generateContent``, for the real google-genai client.

``responder(request_json) -> str`` produces the model's text; a behaviour switch makes it malformed, slow or
failing, so the fallback paths are exercised over a real socket.
"""

from __future__ import annotations

import json
import re
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Callable


class FakeGemini:
    def __init__(self, responder: Callable[[dict], str]):
        self.responder = responder
        self.behaviour = "ok"  # ok | malformed | slow | error
        self.delay_s = 3.0
        self.requests: list[dict] = []
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def do_POST(self):
                match = re.match(r"^/v1(?:beta)?/models/([^/:?]+):generateContent(?:\?.*)?$", self.path)
                body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))) or b"{}")
                fake.requests.append({"path": self.path, "key": self.headers.get("x-goog-api-key"), "body": body})
                if not match:
                    return self._send(404, {"error": {"code": 404, "message": "not found", "status": "NOT_FOUND"}})
                if fake.behaviour == "error":
                    return self._send(500, {"error": {"code": 500, "message": "internal", "status": "INTERNAL"}})
                if fake.behaviour == "slow":
                    time.sleep(fake.delay_s)
                text = "{not json at all" if fake.behaviour == "malformed" else fake.responder(body)
                self._send(
                    200,
                    {
                        "candidates": [
                            {
                                "content": {"role": "model", "parts": [{"text": text}]},
                                "finishReason": "STOP",
                                "index": 0,
                            }
                        ],
                        "usageMetadata": {"promptTokenCount": 10, "candidatesTokenCount": 10, "totalTokenCount": 20},
                        "modelVersion": match.group(1),
                    },
                )

            def _send(self, status: int, payload: dict):
                data = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                try:
                    self.wfile.write(data)
                except BrokenPipeError:
                    pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def __enter__(self) -> "FakeGemini":
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.server.shutdown()
        self.server.server_close()


def user_payload(body: dict) -> dict:
    """The JSON document Check-in sent as the user turn."""
    return json.loads(body["contents"][0]["parts"][0]["text"])
