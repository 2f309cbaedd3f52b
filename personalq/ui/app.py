"""The Gradio Blocks app: one tab per concern, each built by its own module from the runtime's services."""

from __future__ import annotations

import logging
import os
import threading
from dataclasses import dataclass

import gradio as gr
from starlette.middleware import Middleware

from personalq.access import WriteAccess, is_loopback, secret_value
from personalq.checkin.backends import make_checkin
from personalq.config import Settings
from personalq.conversation import Conversation
from personalq.rating.pairs import PairMaker
from personalq.rating.service import RatingService
from personalq.rating.votes import VoteStore
from personalq.retention import prune_periodically
from personalq.runtime import Runtime
from personalq.serving.engine import Engine
from personalq.serving.warmup import Warmup, start_warmup
from personalq.ui.chat_tab import GENERATION, build_chat_tab
from personalq.ui.rater_tab import build_rater_tab
from personalq.ui.repository_tab import build_repository_tab
from personalq.web.body_limit import BodyLimit
from personalq.web.downloads import OneTimeDownloads
from personalq.web.fair_queue import FairShare, Listeners, ListenerTracker
from personalq.web.upload_gate import UploadGate, UploadPasses


def backend_label(runtime: Runtime) -> str:
    settings = runtime.settings
    if settings.llm_backend == "local":
        return "local (deterministic, no key needed)"
    key = "key set" if settings.llm_api_key else "no key: falls back to local"
    return f"{settings.llm_backend} {settings.llm_model} ({key})"


log = logging.getLogger(__name__)
CONCURRENCY = 4  # callbacks running at once; generation itself runs one at a time
HISTORY_SLACK = 50  # a client's history is the app's last answer (history kept + one turn's messages) and no more


def write_access(settings: Settings, public: bool) -> WriteAccess:
    return WriteAccess(settings.admin_token, bool(settings.auth), public)


@dataclass
class Guards:
    """What the server adds around the Blocks, shared by the callbacks that feed it: upload passes for sessions
    that may write, one-time downloads of private files."""

    passes: UploadPasses
    downloads: OneTimeDownloads

    @classmethod
    def for_settings(cls, settings: Settings) -> "Guards":
        return cls(UploadPasses(), OneTimeDownloads(settings.exports_dir))


def build_app(
    runtime: Runtime,
    engine: Engine | None = None,
    public: bool = False,
    warmup: Warmup | None = None,
    guards: Guards | None = None,
) -> gr.Blocks:
    """The app's Blocks; ``public``: it will listen beyond loopback (see :mod:`personalq.access`); ``warmup``: the
    start-up preparation whose progress the chat's readout shows; ``guards``: the server's (see :func:`launch`)."""
    engine = engine or Engine(runtime.settings)
    settings = runtime.settings
    guards = guards or Guards.for_settings(settings)
    access = write_access(settings, public)
    checkin = make_checkin(settings, runtime.repository)  # one, with one card index, for the chat and the rater
    threading.Thread(target=checkin.cache.prepare, name="checkin-index", daemon=True).start()
    conversation = Conversation(checkin, runtime.repository)
    rating = RatingService(
        settings,
        PairMaker(runtime.repository, checkin, engine, settings.rating_dir / "images"),
        VoteStore(runtime.repository),
    )
    with gr.Blocks(title="PersonalQ") as app:
        gr.Markdown("# PersonalQ\nYour personalized diffusion checkpoints: find the one you mean, serve it quantized.")
        admin = gr.State(False)  # this session signed in with the admin token
        with gr.Tab("Chat", id="chat"):
            memory_readout, readout_inputs, memory, chat_on_load = build_chat_tab(
                conversation,
                engine,
                settings.outputs_dir,
                settings.previews_dir,
                backend_label(runtime),
                access,
                admin,
                warmup,
            )
        with gr.Tab("Repository", id="repository"):
            browse, inputs, outputs = build_repository_tab(runtime.repository, settings, access, admin, guards.passes)
        with gr.Tab("Rate", id="rate"):
            build_rater_tab(rating, guards.downloads)
        app.load(browse, list(inputs), list(outputs))
        app.load(memory_readout, readout_inputs, memory)
        chat_on_load(app)
    return app


def served_paths(settings: Settings) -> tuple[list[str], list[str]]:
    """(allowed, blocked) for Gradio: the home's outputs, previews and rating folders, and nothing else of it."""
    allowed = [settings.outputs_dir, settings.previews_dir, settings.rating_dir]
    for folder in allowed:
        folder.mkdir(parents=True, exist_ok=True)
    blocked = [p for p in settings.home.iterdir() if p not in allowed] if settings.home.is_dir() else []
    blocked += [p for p in (settings.exports_dir, settings.uploads_dir) if p not in blocked]  # made later, if ever
    return [str(p.resolve()) for p in allowed], [str(p.resolve()) for p in blocked]


def trust_proxies(addresses: list[str]) -> None:
    """Which peers' ``X-Forwarded-For`` uvicorn believes: only ``addresses`` (none by default). Uvicorn trusts
    loopback unless told otherwise, and Gradio starts uvicorn without a way to pass its ``forwarded_allow_ips``, so
    this sets the environment variable uvicorn reads when Gradio builds its config."""
    os.environ["FORWARDED_ALLOW_IPS"] = ",".join(addresses)


def launch(
    runtime: Runtime, host: str = "127.0.0.1", port: int = 7860, engine: Engine | None = None, **options
) -> gr.Blocks:
    """Build and start the app the way every entry point does (``app.py``, ``personalq serve``, the Space, tests,
    the serving bench): the write policy for ``host``, Gradio sign-in, the queue's concurrency and bound, each
    visitor's fair share of the generator, the request, upload and download guards (:mod:`personalq.web`), the
    proxies it trusts, the folders it serves, the start-up warm-up (:mod:`personalq.serving.warmup`). ``engine``: one
    the caller made (the bench's)."""
    settings = runtime.settings
    engine = engine or Engine(settings)
    warmup = start_warmup(engine, runtime.repository)
    public = not is_loopback(host)
    guards = Guards.for_settings(settings)
    app = build_app(runtime, engine, public=public, warmup=warmup, guards=guards)
    allowed, blocked = served_paths(settings)
    auth = [(user, secret_value(password)) for user, password in settings.auth.items()] or None
    prune_periodically(settings, runtime.repository)
    app.queue(default_concurrency_limit=CONCURRENCY, max_size=settings.queue_size)
    listeners = Listeners()
    share = FairShare(GENERATION, settings.max_pending_per_visitor, listeners, bool(settings.trusted_proxies))
    share.install(app)
    trust_proxies(settings.trusted_proxies)
    uploads_open = write_access(settings, public).open or bool(auth)  # Gradio checks its own sign-in on uploads
    app.launch(
        server_name=host,
        server_port=port,
        auth=auth,
        allowed_paths=allowed,
        blocked_paths=blocked,
        max_file_size=f"{settings.max_upload_mb}mb",
        app_kwargs={
            "routes": [guards.downloads.route()],
            "middleware": [
                Middleware(
                    BodyLimit,
                    max_bytes=settings.max_request_kb * 1024,
                    max_items=settings.max_history_messages + HISTORY_SLACK,
                ),
                Middleware(UploadGate, passes=guards.passes, open_=uploads_open),
                Middleware(ListenerTracker, listeners=listeners),
            ],
        },
        **options,
    )
    return app
