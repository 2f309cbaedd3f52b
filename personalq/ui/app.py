"""The Gradio Blocks app: one tab per concern, each built by its own module from the runtime's services."""

from __future__ import annotations

import gradio as gr

from personalq.checkin.backends import make_checkin
from personalq.conversation import Conversation
from personalq.runtime import Runtime
from personalq.serving.engine import Engine
from personalq.rating.pairs import PairMaker
from personalq.rating.service import RatingService
from personalq.rating.votes import VoteStore
from personalq.ui.chat_tab import build_chat_tab
from personalq.ui.rater_tab import build_rater_tab
from personalq.ui.repository_tab import build_repository_tab


def backend_label(runtime: Runtime) -> str:
    settings = runtime.settings
    if settings.llm_backend == "local":
        return "local (deterministic, no key needed)"
    key = "key set" if settings.llm_api_key else "no key: falls back to local"
    return f"{settings.llm_backend} {settings.llm_model} ({key})"


def build_app(runtime: Runtime, engine: Engine | None = None) -> gr.Blocks:
    engine = engine or Engine(runtime.settings)
    settings = runtime.settings
    checkin = make_checkin(settings, runtime.repository)
    conversation = Conversation(checkin, runtime.repository)
    rating = RatingService(settings, PairMaker(runtime.repository, make_checkin(settings, runtime.repository), engine,
                                               settings.home / "rating" / "images"), VoteStore(runtime.repository))
    with gr.Blocks(title="PersonalQ") as app:
        gr.Markdown("# PersonalQ\nYour personalized diffusion checkpoints: find the one you mean, serve it quantized.")
        with gr.Tab("Chat", id="chat"):
            memory_readout, readout_inputs, memory = build_chat_tab(conversation, engine, settings.home / "outputs",
                                                                    backend_label(runtime))
        with gr.Tab("Repository", id="repository"):
            browse, inputs, outputs = build_repository_tab(runtime.repository)
        with gr.Tab("Rate", id="rate"):
            build_rater_tab(rating, settings.home / "rating")
        app.load(browse, list(inputs), list(outputs))
        app.load(memory_readout, readout_inputs, memory)
    return app
