"""The Gradio Blocks app: one tab per concern, each built by its own module from the runtime's services."""

from __future__ import annotations

import gradio as gr

from personalq.runtime import Runtime
from personalq.ui.repository_tab import build_repository_tab


def build_app(runtime: Runtime) -> gr.Blocks:
    with gr.Blocks(title="PersonalQ") as app:
        gr.Markdown("# PersonalQ\nYour personalized diffusion checkpoints: find the one you mean, serve it quantized.")
        with gr.Tab("Repository", id="repository"):
            browse, inputs, outputs = build_repository_tab(runtime.repository)
        app.load(browse, list(inputs), list(outputs))
    return app
