"""Who is behind a Gradio request: the address that attempt limits count, the name Gradio's sign-in gave; and
what an anonymous visitor may be told of a server error."""

from __future__ import annotations

import re

import gradio as gr

_PATH = re.compile(r"(?:[A-Za-z]:)?[\\/](?:[^\s'\"\\/]+[\\/])+([^\s'\"\\/]*)")


def client_of(request: gr.Request | None) -> str:
    return getattr(getattr(request, "client", None), "host", None) or "unknown"


def username_of(request: gr.Request | None) -> str | None:
    return getattr(request, "username", None)


def without_paths(error: object) -> str:
    """An error message with every server path cut to its last part: a visitor learns what failed, not where the
    server keeps its files."""
    return _PATH.sub(lambda m: m.group(1) or "(a server folder)", str(error))
