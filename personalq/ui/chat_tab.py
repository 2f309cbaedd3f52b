"""The Chat tab: a conversation with Check-in, option buttons for its questions, the image streaming as it denoises.

Callbacks only translate between Gradio and :class:`~personalq.conversation.Conversation` /
:class:`~personalq.serving.engine.Engine`; per-session state lives in ``gr.State``.
"""

from __future__ import annotations

import logging
import time
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import gradio as gr

from personalq.access import WriteAccess
from personalq.checkin.agent import InvalidRequest
from personalq.conversation import ChatState, Conversation, Turn, plain
from personalq.repository.errors import RepositoryUnavailable
from personalq.serving.allowance import Refused, check_allowance, check_budget, params_from
from personalq.serving.cache import MB, BudgetError
from personalq.serving.checkpoints import CheckpointLoadError
from personalq.serving.engine import Engine
from personalq.serving.previews import readable
from personalq.serving.variants import PRECISIONS, precision_config
from personalq.serving.warmup import Warmup
from personalq.serving.zerogpu import on_gpu
from personalq.ui.media import published_preview
from personalq.ui.visitor import username_of, without_paths

log = logging.getLogger(__name__)
SIZES = {"64 x 64": 64, "96 x 96": 96, "128 x 128": 128}
BUDGET_MB = (64, 8192)  # the memory budget slider's range
GENERATION = "generation"  # the concurrency id of every event that generates: one at a time, shared fairly


def _assistant(text: str, options: list[str] | None = None) -> dict:
    message = {"role": "assistant", "content": text}
    if options:
        message["options"] = [{"value": o, "label": o} for o in options]
    return message


def _preparing(precision: str, name: str) -> str:
    """What a person waiting for a precision's first use is told: the wait is quantization, once."""
    return (
        f"Preparing {precision} for {plain(name)}: the first use calibrates and quantizes it (seconds on the demo, "
        "minutes for a full-size base); it is stored for next time."
    )


def _stats(turn: Turn | None, generation_s: float | None, engine: Engine, progress: str = "") -> str:
    parts = []
    if turn is not None:
        parts.append(f"selection {turn.latency_ms:.0f} ms")
    if generation_s is not None:
        parts.append(f"generation {generation_s:.2f} s ({progress})")
    parts.append(engine.memory().line())
    return " · ".join(parts)


def build_chat_tab(
    conversation: Conversation,
    engine: Engine,
    outputs_dir: Path,
    previews_dir: Path,
    backend: str,
    access: WriteAccess,
    admin: gr.State,
    warmup: Warmup | None = None,
):
    """The tab's components and events; returns the memory readout with its inputs and output, for the app's load
    event."""
    callbacks = _callbacks(conversation, engine, outputs_dir, previews_dir, access, warmup)
    tab = _layout(engine, access, backend)
    _wire(tab, callbacks, admin)
    return callbacks.memory_readout, tab.readout_inputs, tab.memory


@dataclass
class _Callbacks:
    respond: Callable
    choose: Callable
    memory_readout: Callable
    set_budget: Callable


def _callbacks(
    conversation: Conversation,
    engine: Engine,
    outputs_dir: Path,
    previews_dir: Path,
    access: WriteAccess,
    warmup: Warmup | None = None,
) -> _Callbacks:
    """The tab's event handlers. Their names and parameters are what Gradio shows and calls (``respond`` is the
    public ``/chat`` endpoint): keep them as they are."""

    def may_write(is_admin: bool, request: gr.Request | None) -> bool:
        return access.allows(is_admin, username_of(request))

    def memory_readout(precision: str, trigger_aware: bool = True, float_kv: bool = False) -> str:
        unet = engine.unet_bytes_at(precision, trigger_aware=trigger_aware, float_kv=float_kv)
        full = engine.unet_bytes_at("FP32")
        config = precision_config(precision, trigger_aware, float_kv=float_kv)
        what = f"{precision} + float K/V" if config is not None and config.keeps_float_kv else precision
        kernels = "" if config is None else f" · {engine.kernels.describe()}"
        float_type = f" · {engine.float_line()}" if engine.float_line() else ""
        starting = f" · {warmup.line()}" if warmup is not None and warmup.line() else ""
        serving = engine.serving_line()
        return (
            f"UNet weights at {what}: **{unet / MB:.1f} MB** ({unet / full:.0%} of FP32){kernels}{float_type} · "
            f"{engine.memory().line()}{starting}" + (f"\n\n{serving}" if serving else "")
        )

    def respond(
        message: str,
        history: list,
        state: ChatState,
        precision: str,
        trigger_aware: bool,
        budget_mb: float,
        seed: float,
        steps: float,
        guidance: float,
        size: str,
        float_kv: bool = False,
        is_admin: bool = False,
        request: gr.Request = None,
    ):
        message = (message or "").strip()
        if not message:
            yield history, state, gr.skip(), gr.skip(), ""
            return
        state.begin()  # this browser session's own id and outputs folder
        writer = may_write(is_admin, request)
        # the client sends the whole conversation back with every message: keep its newest part only
        history = list(history or [])[-engine.settings.max_history_messages :] + [{"role": "user", "content": message}]
        replies, turn = _check_in(conversation, message, state, previews_dir)
        history += replies
        if turn is None:
            yield history, state, gr.skip(), gr.skip(), ""
            return
        yield history, state, gr.skip(), _stats(turn, None, engine), ""
        if turn.checkpoint is None:
            return
        try:
            params = params_from(seed, steps, guidance, int(SIZES.get(size, 64)))
            if writer:  # the budget is engine-wide: only a session that may write sets it
                engine.set_budget_mb(check_budget(budget_mb, *BUDGET_MB))
            else:
                check_allowance(params, engine.native_size(turn.checkpoint), engine.settings.anonymous_max_steps)
        except Refused as error:
            history.append(_assistant(f"I cannot draw that: {error}."))
            yield history, state, gr.skip(), _stats(turn, None, engine), ""
            return
        started = time.perf_counter()
        try:
            if not engine.variant_is_stored(turn.checkpoint, precision, trigger_aware, float_kv):
                history.append(_assistant(_preparing(precision, turn.checkpoint.name)))
                yield history, state, gr.skip(), _stats(turn, None, engine), ""
            for frame in engine.generate(
                turn.checkpoint, turn.prompt, precision, trigger_aware, params, float_kv=float_kv
            ):
                if frame.final:
                    conversation.record_use(turn.checkpoint)
                    history.append(
                        {
                            "role": "assistant",
                            "content": {"path": _save(frame.image, outputs_dir, state), "alt_text": turn.prompt},
                        }
                    )
                progress = "image ready" if frame.final else f"step {frame.step}/{frame.total}"
                stats = _stats(turn, time.perf_counter() - started, engine, progress)
                if frame.final:
                    yield history, state, readable(frame.image), stats, ""
                elif frame.image is not None:
                    # the chat is unchanged while it denoises: only the preview and the readout are sent, once per
                    # preview interval (a message per step cost a demo image a fifth more time; Stop acts at the next)
                    yield gr.skip(), gr.skip(), frame.image, stats, gr.skip()
        except (BudgetError, CheckpointLoadError) as error:
            log.warning("generation with %s failed: %s", turn.checkpoint.id, error)
            history.append(_assistant(f"Could not generate: {error if writer else without_paths(error)}"))
            yield history, state, gr.skip(), _stats(turn, None, engine), ""

    respond = on_gpu(respond, engine.settings.zero_gpu)

    def choose(
        evt: gr.SelectData,
        history: list,
        state: ChatState,
        precision: str,
        trigger_aware: bool,
        budget_mb: float,
        seed: float,
        steps: float,
        guidance: float,
        size: str,
        float_kv: bool,
        is_admin: bool,
        request: gr.Request,
    ):
        yield from respond(
            str(evt.value),
            history,
            state,
            precision,
            trigger_aware,
            budget_mb,
            seed,
            steps,
            guidance,
            size,
            float_kv,
            is_admin,
            request,
        )

    def set_budget(
        mb: float, precision: str, trigger_aware: bool, float_kv: bool, is_admin: bool, request: gr.Request
    ):
        if may_write(is_admin, request):
            try:
                engine.set_budget_mb(check_budget(mb, *BUDGET_MB))
            except Refused as error:
                return f"Budget unchanged: {error}.\n\n" + memory_readout(precision, trigger_aware, float_kv)
        return memory_readout(precision, trigger_aware, float_kv)

    return _Callbacks(respond, choose, memory_readout, set_budget)


def _check_in(
    conversation: Conversation, message: str, state: ChatState, previews_dir: Path
) -> tuple[list[dict], Turn | None]:
    """Check-in's reply to ``message`` as chat messages (with the chosen checkpoint's preview), and the turn; a
    request it cannot take is one message saying why, and no turn."""
    try:
        turn = conversation.reply(message, state)
    except InvalidRequest as error:
        return [_assistant(f"I cannot use that request: {error}")], None
    except RepositoryUnavailable as error:
        return [_assistant(f"Please try again in a moment: {error}")], None
    replies = [_assistant(turn.text, turn.options)]
    preview = published_preview(turn.checkpoint.preview_path, previews_dir) if turn.checkpoint else None
    if preview:
        replies.append(
            {"role": "assistant", "content": {"path": preview, "alt_text": f"preview of {turn.checkpoint.name}"}}
        )
    return replies, turn


def _save(image, outputs_dir: Path, state: ChatState) -> str:
    """Where the finished image is kept: the session's folder of the home's outputs, under a random name."""
    path = outputs_dir / state.session_id / f"{uuid.uuid4().hex[:12]}.png"
    path.parent.mkdir(parents=True, exist_ok=True)
    image.save(path)
    return str(path)


@dataclass
class _Tab:
    state: gr.State
    chatbot: gr.Chatbot
    message: gr.Textbox
    stats: gr.Markdown
    image: gr.Image
    stop: gr.Button
    budget: gr.Slider
    memory: gr.Markdown
    controls: list  # the generation settings every reply takes, in the /chat endpoint's order
    readout_inputs: list  # what the memory readout depends on


def _layout(engine: Engine, access: WriteAccess, backend: str) -> _Tab:
    """The conversation on the left; the live image, precision, memory and generation settings on the right."""
    state = gr.State(ChatState())  # deep-copied for every session, which then draws its own id (ChatState.begin)
    with gr.Row():
        with gr.Column(scale=3):
            chatbot = gr.Chatbot(elem_id="chat", height=460, label="Conversation")
            message = gr.Textbox(
                placeholder="e.g. my latest anime sketch of the dog on a beach",
                show_label=False,
                elem_id="chat-input",
                submit_btn=True,
            )
            stats = gr.Markdown(elem_id="turn-stats")
        with gr.Column(scale=2):
            image = gr.Image(
                label="Image (streams while it denoises)",
                elem_id="live-image",
                type="pil",
                height=300,
                interactive=False,
            )
            stop = gr.Button("Stop", elem_id="stop", variant="stop")
            precision = gr.Radio(
                list(PRECISIONS), value=engine.settings.default_precision, label="Precision", elem_id="precision"
            )
            trigger_aware = gr.Checkbox(
                True,
                label="Trigger-aware (keep the trigger's cross-attention in full precision)",
                elem_id="trigger-aware",
            )
            float_kv = gr.Checkbox(
                False,
                label="Float K/V weights for the trigger rows too (exact pathway; costs a float copy "
                "of the cross-attention K/V weights)",
                elem_id="float-kv",
            )
            budget = gr.Slider(
                *BUDGET_MB,
                value=engine.settings.memory_budget_mb,
                step=64,
                elem_id="budget",
                label="Memory budget (MB)" + ("" if access.open else ", for the whole app: admins only"),
            )
            memory = gr.Markdown(elem_id="memory")
            gr.Markdown(f"Check-in engine: **{backend}**", elem_id="llm-status")
            with gr.Accordion("Generation", open=False):
                seed = gr.Number(0, label="Seed", precision=0, minimum=0)
                steps = gr.Slider(1, 50, value=20, step=1, label="Steps")
                guidance = gr.Slider(0, 15, value=5.0, step=0.5, label="Guidance")
                size = gr.Dropdown(list(SIZES), value="64 x 64", label="Size")
    controls = [
        precision,
        trigger_aware,
        budget,
        seed,
        steps,
        guidance,
        size,
        float_kv,
    ]  # new controls go last: API order
    return _Tab(
        state, chatbot, message, stats, image, stop, budget, memory, controls, [precision, trigger_aware, float_kv]
    )


def _wire(tab: _Tab, callbacks: _Callbacks, admin: gr.State) -> None:
    """Sending and option buttons reply (one generation at a time), Stop cancels them; the memory readout follows
    the precision controls, and releasing the budget slider sets the budget."""
    outputs = [tab.chatbot, tab.state, tab.image, tab.stats, tab.message]
    submitted = tab.message.submit(
        callbacks.respond,
        [tab.message, tab.chatbot, tab.state, *tab.controls, admin],
        outputs,
        concurrency_id=GENERATION,
        concurrency_limit=1,
        api_name="chat",
    )
    chosen = tab.chatbot.option_select(
        callbacks.choose,
        [tab.chatbot, tab.state, *tab.controls, admin],
        outputs,
        concurrency_id=GENERATION,
        api_visibility="private",
    )
    tab.stop.click(None, cancels=[submitted, chosen])
    for control in tab.readout_inputs:
        control.change(callbacks.memory_readout, tab.readout_inputs, tab.memory)
    tab.budget.release(
        callbacks.set_budget, [tab.budget, *tab.readout_inputs, admin], tab.memory, api_visibility="private"
    )
