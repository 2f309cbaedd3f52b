"""Who is behind a Gradio request: the address that attempt limits count, the name Gradio's sign-in gave."""

from __future__ import annotations

import gradio as gr


def client_of(request: gr.Request | None) -> str:
    return getattr(getattr(request, "client", None), "host", None) or "unknown"


def username_of(request: gr.Request | None) -> str | None:
    return getattr(request, "username", None)
