"""The Chat tab: a conversation with Check-in, option buttons for its questions, the image streaming as it denoises;
the checkpoints of the image as chips with their strengths, the generation settings, and the visitor's gallery.

Callbacks only translate between Gradio and the library: :class:`~personalq.conversation.Conversation` (what
Check-in says), :class:`~personalq.drawing.Drawing` (the set drawn and its edits),
:class:`~personalq.image_history.ImageHistory` (the gallery's files) and :class:`~personalq.serving.engine.Engine`.
Per-session state lives in ``gr.State``; the gallery's id lives in the browser (``gr.BrowserState``).
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import gradio as gr

from personalq.access import WriteAccess
from personalq.checkin.agent import InvalidRequest
from personalq.conversation import ChatState, Conversation, Turn, plain
from personalq.drawing import (
    MAX_USES,
    RANDOM_SEED,
    WEIGHT_STEP,
    Drawing,
    DrawingRefused,
    from_parameters,
    generate,
    generation_params,
    search,
)
from personalq.image_history import ImageHistory
from personalq.repository.errors import RepositoryUnavailable
from personalq.repository.service import CheckpointNotFound, StoredCheckpoint
from personalq.repository.weighted import MAX_WEIGHT, MIN_WEIGHT, Weighted
from personalq.serving.allowance import Refused, check_allowance, check_budget
from personalq.serving.bases import served_base
from personalq.serving.cache import MB, BudgetError
from personalq.serving.checkpoints import CheckpointLoadError
from personalq.serving.engine import Engine
from personalq.serving.png_parameters import read_parameters
from personalq.serving.previews import readable
from personalq.serving.sizes import size_presets, size_value
from personalq.serving.variants import PRECISIONS, precision_config
from personalq.serving.warmup import Warmup
from personalq.serving.zerogpu import on_gpu
from personalq.ui.media import published_preview
from personalq.ui.visitor import username_of, without_paths

log = logging.getLogger(__name__)
BUDGET_MB = (64, 8192)  # the memory budget slider's range
GENERATION = "generation"  # the concurrency id of every event that generates: one at a time, shared fairly
ADVANCED_LINE = (
    "How the UNet is stored and computed: a lower precision takes less memory and may change the image; "
    "trigger-aware keeps the trigger words' cross-attention exact; float K/V keeps a float copy of those weights; "
    "the budget caps the memory of cached models."
)
# the outputs of every event that draws, in this order: the /chat endpoint answers with the visible ones (the
# conversation, the image, the readout, the message box) as it always has; the rest are states, whose changes
# update the chips, the size presets, the negative prompt and the gallery (:func:`_wire`), and the Stop button
# 128 random bits as 32 hex digits, drawn in the page (crypto.getRandomValues works without HTTPS, randomUUID not)
NEW_GALLERY_ID_JS = """(kept) => kept || Array.from(crypto.getRandomValues(new Uint8Array(16)),
    (b) => b.toString(16).padStart(2, "0")).join("")"""
DRAW_OUTPUTS = (
    "history",
    "state",
    "image",
    "stats",
    "message",
    "drawing",
    "asked_negative",
    "last_seed",
    "newest_image",
    "stop",
)


def _assistant(text: str, options: list[str] | None = None) -> dict:
    message = {"role": "assistant", "content": text}
    if options:
        message["options"] = [{"value": o, "label": o} for o in options]
    return message


def _picture(path: str | Path, label: str, alt_text: str) -> dict:
    """A picture in the conversation with a visible label and alt text for screen readers (a file message's
    ``alt_text`` is not drawn by the chatbot; an image component's is)."""
    image = gr.Image(str(path), label=label, alt_text=alt_text, show_label=True, interactive=False, height=160)
    return {"role": "assistant", "content": image}


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


def _out(**changes) -> tuple:
    """One update of the drawing events' outputs (:data:`DRAW_OUTPUTS`); what is not named stays as it is."""
    unknown = set(changes) - set(DRAW_OUTPUTS)
    if unknown:
        raise TypeError(f"not an output of the drawing events: {sorted(unknown)}")
    return tuple(changes.get(name, gr.skip()) for name in DRAW_OUTPUTS)


def _chips(drawing: Drawing | None) -> list:
    """The chips' rows, names and sliders for ``drawing``: one visible chip per checkpoint, the rest hidden."""
    updates = []
    uses = drawing.uses if drawing else ()
    for slot in range(MAX_USES):
        if slot < len(uses):
            use = uses[slot]
            name = f"**{plain(use.checkpoint.name)}** · {use.checkpoint.kind.replace('_', ' ')}"
            updates += [gr.Row(visible=True), name, gr.Slider(value=use.weight, label=f"Strength of {use.id}")]
        else:
            updates += [gr.Row(visible=False), "", gr.skip()]
    return updates


def _caption(path: Path) -> str:
    parameters = read_parameters(path)
    if parameters is None:
        return path.name
    prompt = parameters.prompt if len(parameters.prompt) <= 60 else parameters.prompt[:59] + "…"
    return f"{prompt} · seed {parameters.seed}"


def _gallery(images: ImageHistory, gallery_id: str) -> list[tuple[str, str]]:
    return [(str(path), _caption(path)) for path in images.images(gallery_id)]


def _shown_file(value: object) -> str:
    """The served path or URL of a gallery item the page says was clicked (only its name is used, inside the
    visitor's own folder)."""
    if isinstance(value, dict):
        for key in ("image", "video"):
            if isinstance(value.get(key), dict):
                return _shown_file(value[key])
        return str(value.get("path") or value.get("url") or "")
    return str(value or "")


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
    """The tab's components and events; returns the memory readout with its inputs and output, and what registers
    the tab's own load events on the app (the visitor's gallery)."""
    callbacks = _callbacks(conversation, engine, outputs_dir, previews_dir, access, warmup)
    tab = _layout(engine, access, backend)
    _wire(tab, callbacks, admin)

    def on_load(app: gr.Blocks) -> None:
        """The browser draws its gallery id at once if it keeps none (in the page, before anything can be sent, so
        every image lands in the folder the gallery shows), then the server shows that gallery."""
        app.load(None, tab.gallery_id, tab.gallery_id, js=NEW_GALLERY_ID_JS).then(
            callbacks.restore, tab.gallery_id, [tab.gallery_id, tab.gallery], api_visibility="private"
        )

    return callbacks.memory_readout, tab.readout_inputs, tab.memory, on_load


@dataclass
class _Callbacks:
    respond: Callable
    choose: Callable
    memory_readout: Callable
    set_budget: Callable
    redraw: Callable
    reweigh: Callable
    remove: Callable
    add: Callable
    find: Callable
    reuse: Callable
    restore: Callable
    show_drawing: Callable
    show_gallery: Callable
    last_seed: Callable


def _callbacks(
    conversation: Conversation,
    engine: Engine,
    outputs_dir: Path,
    previews_dir: Path,
    access: WriteAccess,
    warmup: Warmup | None = None,
) -> _Callbacks:
    """The tab's event handlers. Their names and parameters are what Gradio shows and calls (``respond`` is the
    public ``/chat`` endpoint): keep them as they are; new parameters go last."""
    images = ImageHistory(outputs_dir)
    repository = conversation.repository
    native_sizes: dict[str, int] = {}  # base key -> the side its base draws at: read once per base

    def may_write(is_admin: bool, request: gr.Request | None) -> bool:
        return access.allows(is_admin, username_of(request))

    def native_size(checkpoint: StoredCheckpoint) -> int:
        """The side ``checkpoint``'s base draws at."""
        key = served_base(engine.settings, checkpoint).key
        if key not in native_sizes:
            native_sizes[key] = engine.native_size(checkpoint)
        return native_sizes[key]

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

    def draw(
        drawing: Drawing,
        history: list,
        precision: str,
        trigger_aware: bool,
        budget_mb: float,
        seed: float,
        steps: float,
        guidance: float,
        size: str,
        float_kv: bool,
        negative: str,
        gallery_id: object,
        writer: bool,
        turn: Turn | None = None,
    ):
        """Draw ``drawing`` with the page's settings: the image streams, then lands in the chat and the
        visitor's gallery as a PNG that says how it was made. Stop shows while it draws."""
        gallery_id = images.own_id(gallery_id)
        first = drawing.uses[0].checkpoint
        try:
            native = native_size(first)
            params = generation_params(seed, steps, guidance, size or size_value(native, native), negative)
            if writer:  # the budget is engine-wide: only a session that may write sets it
                engine.set_budget_mb(check_budget(budget_mb, *BUDGET_MB))
            else:
                check_allowance(params, native, engine.settings.anonymous_max_steps)
        except Refused as error:
            history.append(_assistant(f"I cannot draw that: {error}."))
            yield _out(history=history, stats=_stats(turn, None, engine))
            return
        except CheckpointLoadError as error:
            yield from failed(error, history, turn, writer)
            return
        started = time.perf_counter()
        yield _out(stop=gr.Button(visible=True))
        try:
            if not engine.variant_is_stored(list(drawing.uses), precision, trigger_aware, float_kv):
                history.append(_assistant(_preparing(precision, drawing.anchor.name)))
                yield _out(history=history, stats=_stats(turn, None, engine))
            for frame in generate(engine, drawing, precision, trigger_aware, params, float_kv=float_kv):
                progress = "image ready" if frame.final else f"step {frame.step}/{frame.total}"
                stats = _stats(turn, time.perf_counter() - started, engine, progress)
                if frame.final:
                    for use in drawing.uses:
                        conversation.record_use(use.checkpoint)
                    made = drawing.parameters(params, served_base(engine.settings, first).location)
                    path = images.save(gallery_id, frame.image, made)
                    history.append(_picture(path, f"Image, seed {params.seed}", f"image drawn from: {drawing.prompt}"))
                    yield _out(
                        history=history,
                        image=readable(frame.image),
                        stats=stats,
                        stop=gr.Button(visible=False),
                        last_seed=params.seed,
                        newest_image=path.name,
                    )
                elif frame.image is not None:
                    # the chat is unchanged while it denoises: only the preview and the readout are sent, once per
                    # preview interval (a message per step cost a demo image a fifth more time; Stop acts at the next)
                    yield _out(image=frame.image, stats=stats)
        except (BudgetError, CheckpointLoadError) as error:
            yield from failed(error, history, turn, writer)

    def failed(error: Exception, history: list, turn: Turn | None, writer: bool):
        log.warning("generation failed: %s", error)
        history.append(_assistant(f"Could not generate: {error if writer else without_paths(error)}"))
        yield _out(history=history, stats=_stats(turn, None, engine), stop=gr.Button(visible=False))

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
        negative: str = "",
        gallery_id: object = None,
        is_admin: bool = False,
        request: gr.Request = None,
    ):
        message = (message or "").strip()
        if not message:
            yield _out(history=history, state=state, message="")
            return
        state.begin()
        writer = may_write(is_admin, request)
        # the client sends the whole conversation back with every message: keep its newest part only
        history = list(history or [])[-engine.settings.max_history_messages :] + [{"role": "user", "content": message}]
        replies, turn = _check_in(conversation, message, state, previews_dir)
        history += replies
        if turn is None or turn.checkpoint is None:
            yield _out(
                history=history, state=state, message="", stats=_stats(turn, None, engine) if turn else gr.skip()
            )
            return
        drawing = Drawing(turn.prompt or "", tuple(turn.uses or [Weighted(turn.checkpoint)]))
        negative = turn.negative_prompt or negative  # a request's own "negative: ..." wins over the box's
        yield _out(
            history=history,
            state=state,
            stats=_stats(turn, None, engine),
            message="",
            drawing=drawing,
            asked_negative=turn.negative_prompt,
        )
        yield from draw(
            drawing,
            history,
            precision,
            trigger_aware,
            budget_mb,
            seed,
            steps,
            guidance,
            size,
            float_kv,
            negative,
            gallery_id,
            writer,
            turn,
        )

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
        negative: str,
        gallery_id: object,
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
            negative,
            gallery_id,
            is_admin,
            request,
        )

    def edited(change: Callable[[], Drawing], history: list, settings: tuple, is_admin, request):
        """Draw the drawing ``change`` returns, with the same prompt and no new Check-in; a change that cannot
        be made is said in the chat and nothing is drawn. ``settings``: :func:`draw`'s, from ``precision`` to
        ``gallery_id``."""
        history = list(history or [])[-engine.settings.max_history_messages :]
        try:
            drawing = change()
        except (DrawingRefused, CheckpointNotFound) as error:
            history.append(_assistant(f"I cannot change the image that way: {plain(str(error))}."))
            yield _out(history=history)
            return
        yield _out(drawing=drawing)
        yield from draw(drawing, history, *settings, may_write(is_admin, request))

    # the events that change the set and draw again share their inputs after the first: the conversation, the set,
    # then the settings in the /chat endpoint's order
    def redraw(
        history: list,
        drawing: Drawing | None,
        precision: str,
        trigger_aware: bool,
        budget_mb: float,
        seed: float,
        steps: float,
        guidance: float,
        size: str,
        float_kv: bool,
        negative: str,
        gallery_id: object,
        is_admin: bool,
        request: gr.Request,
    ):
        """Draw the current set again (new settings, a new seed, a reused image's settings)."""
        settings = (precision, trigger_aware, budget_mb, seed, steps, guidance, size, float_kv, negative, gallery_id)
        yield from edited(lambda: _current(drawing), history, settings, is_admin, request)

    def add(
        checkpoint_id: str,
        history: list,
        drawing: Drawing | None,
        precision: str,
        trigger_aware: bool,
        budget_mb: float,
        seed: float,
        steps: float,
        guidance: float,
        size: str,
        float_kv: bool,
        negative: str,
        gallery_id: object,
        is_admin: bool,
        request: gr.Request,
    ):
        """Add the checkpoint found by the search to the set (or start a set with it) and draw."""

        def added() -> Drawing:
            checkpoint = repository.get(str(checkpoint_id or "")[:200])
            start = drawing if isinstance(drawing, Drawing) else Drawing("", ())
            return start.with_checkpoint(checkpoint)

        settings = (precision, trigger_aware, budget_mb, seed, steps, guidance, size, float_kv, negative, gallery_id)
        yield from edited(added, history, settings, is_admin, request)

    def reweigh(slot: int) -> Callable:
        """The handler of chip ``slot``'s strength slider: that checkpoint at the new strength, drawn again."""

        def reweigh_chip(
            weight: float,
            history: list,
            drawing: Drawing | None,
            precision: str,
            trigger_aware: bool,
            budget_mb: float,
            seed: float,
            steps: float,
            guidance: float,
            size: str,
            float_kv: bool,
            negative: str,
            gallery_id: object,
            is_admin: bool,
            request: gr.Request,
        ):
            settings = (
                precision,
                trigger_aware,
                budget_mb,
                seed,
                steps,
                guidance,
                size,
                float_kv,
                negative,
                gallery_id,
            )
            yield from edited(lambda: _current(drawing).reweighted(slot, weight), history, settings, is_admin, request)

        return on_gpu(reweigh_chip, engine.settings.zero_gpu)

    def remove(slot: int) -> Callable:
        """The handler of chip ``slot``'s remove button: the set without it (and its trigger), drawn again."""

        def remove_chip(
            history: list,
            drawing: Drawing | None,
            precision: str,
            trigger_aware: bool,
            budget_mb: float,
            seed: float,
            steps: float,
            guidance: float,
            size: str,
            float_kv: bool,
            negative: str,
            gallery_id: object,
            is_admin: bool,
            request: gr.Request,
        ):
            settings = (
                precision,
                trigger_aware,
                budget_mb,
                seed,
                steps,
                guidance,
                size,
                float_kv,
                negative,
                gallery_id,
            )
            yield from edited(lambda: _current(drawing).without(slot), history, settings, is_admin, request)

        return on_gpu(remove_chip, engine.settings.zero_gpu)

    def find(text: str, drawing: Drawing | None):
        """Checkpoints to add, found by what their cards say, on the image's base."""
        found = search(repository, text, drawing.base_model if drawing else None)
        choices = [
            (f"{c.name} · {c.kind.replace('_', ' ')} · {c.canonical_trigger or 'no trigger'}", c.id) for c in found
        ]
        return gr.Dropdown(choices=choices, value=choices[0][1] if choices else None)

    def reuse(evt: gr.SelectData, gallery_id: object):
        """Put a gallery image's settings back: its prompt and checkpoints (the chips follow the drawing), negative
        prompt, seed, size, steps and guidance; nothing is drawn until asked."""
        unchanged = [gr.skip()] * 5
        parameters = images.parameters(images.own_id(gallery_id), _shown_file(evt.value))
        if parameters is None:
            return gr.skip(), "That image is not one of yours, or says nothing of how it was made.", *unchanged
        try:
            drawing = from_parameters(parameters, repository)
        except DrawingRefused as error:
            return gr.skip(), f"Cannot reuse that image: {plain(str(error))}.", *unchanged
        return (
            drawing,
            f"Settings of the image drawn with seed {parameters.seed} are back: change them, or draw it again.",
            parameters.negative_prompt,
            parameters.seed,
            size_value(parameters.width, parameters.height),
            parameters.steps,
            parameters.cfg_scale,
        )

    def show_drawing(drawing: Drawing | None, size: str):
        """The chips of ``drawing`` and the size presets of its base (keeping ``size`` among them)."""
        if not isinstance(drawing, Drawing) or not drawing.uses:
            return *_chips(None), gr.skip()
        try:
            presets = size_presets(native_size(drawing.uses[0].checkpoint))
        except CheckpointLoadError:  # its base is not configured: said when it draws
            presets = []
        values = [value for _, value in presets]
        if size and size not in values:
            presets.append((size, size))
        return *_chips(drawing), gr.Dropdown(choices=presets, value=size or (values[0] if values else None))

    def show_gallery(gallery_id: object):
        return _gallery(images, images.own_id(gallery_id))

    def restore(gallery_id: object):
        """The visitor's gallery on page load: the id the browser keeps (a new one if it holds none of ours)."""
        own = images.own_id(gallery_id)
        return own, _gallery(images, own)

    def last_seed(seed: int | None):
        return gr.skip() if seed is None else seed

    def set_budget(
        mb: float, precision: str, trigger_aware: bool, float_kv: bool, is_admin: bool, request: gr.Request
    ):
        if may_write(is_admin, request):
            try:
                engine.set_budget_mb(check_budget(mb, *BUDGET_MB))
            except Refused as error:
                return f"Budget unchanged: {error}.\n\n" + memory_readout(precision, trigger_aware, float_kv)
        return memory_readout(precision, trigger_aware, float_kv)

    return _Callbacks(
        respond,
        choose,
        memory_readout,
        set_budget,
        on_gpu(redraw, engine.settings.zero_gpu),
        reweigh,
        remove,
        on_gpu(add, engine.settings.zero_gpu),
        find,
        reuse,
        restore,
        show_drawing,
        show_gallery,
        last_seed,
    )


def _current(drawing: Drawing | None) -> Drawing:
    if not isinstance(drawing, Drawing) or not drawing.uses:
        raise DrawingRefused("there is no image yet: ask for one, or add a checkpoint")
    return drawing


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
        name = turn.checkpoint.name
        replies.append(_picture(preview, f"Preview of {name}", f"the preview picture on the card of {name}"))
    return replies, turn


@dataclass
class _Chip:
    row: gr.Row
    name: gr.Markdown
    strength: gr.Slider
    remove: gr.Button


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
    controls: list  # the generation settings every drawing takes, in the /chat endpoint's order
    readout_inputs: list  # what the memory readout depends on
    drawing: gr.State
    negative: gr.Textbox
    seed: gr.Number
    random_seed: gr.Button
    reuse_seed: gr.Button
    size: gr.Dropdown
    steps: gr.Slider
    guidance: gr.Slider
    draw: gr.Button
    chips: list[_Chip]
    search: gr.Textbox
    found: gr.Dropdown
    add: gr.Button
    note: gr.Markdown
    gallery: gr.Gallery
    gallery_id: gr.BrowserState
    last_seed: gr.State
    asked_negative: gr.State
    newest_image: gr.State

    @property
    def draw_outputs(self) -> list:
        named = {
            "history": self.chatbot,
            "state": self.state,
            "image": self.image,
            "stats": self.stats,
            "message": self.message,
            "drawing": self.drawing,
            "asked_negative": self.asked_negative,
            "last_seed": self.last_seed,
            "newest_image": self.newest_image,
            "stop": self.stop,
        }
        return [named[name] for name in DRAW_OUTPUTS]

    @property
    def chip_parts(self) -> list:
        return [part for chip in self.chips for part in (chip.row, chip.name, chip.strength)]


def _layout(engine: Engine, access: WriteAccess, backend: str) -> _Tab:
    """The conversation and the image's checkpoints on the left; the live image and the generation settings on the
    right, the precision and memory settings folded under Advanced; the visitor's gallery below."""
    state = gr.State(ChatState())  # deep-copied for every session, which then draws its own id (ChatState.begin)
    drawing = gr.State(None)  # the Drawing last drawn (or set from the gallery): what the chips edit
    last_seed = gr.State(None)
    asked_negative = gr.State("")  # the negative prompt Check-in read from the last request
    newest_image = gr.State("")  # the file name of the image last drawn: when it changes, the gallery shows it
    gallery_id = gr.BrowserState("", storage_key="personalq-gallery")
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
            with gr.Group(elem_id="chips"):
                gr.Markdown("Checkpoints in this image: move a strength or remove one, and it is drawn again.")
                chips = []
                for slot in range(MAX_USES):
                    with gr.Row(visible=False, elem_id=f"chip-{slot}", equal_height=True) as row:
                        name = gr.Markdown(elem_id=f"chip-{slot}-name")
                        strength = gr.Slider(
                            MIN_WEIGHT,
                            MAX_WEIGHT,
                            value=1.0,
                            step=WEIGHT_STEP,
                            label="Strength",
                            elem_id=f"chip-{slot}-strength",
                            scale=3,
                        )
                        remove = gr.Button("Remove", elem_id=f"chip-{slot}-remove", size="sm", scale=0)
                    chips.append(_Chip(row, name, strength, remove))
                with gr.Row(equal_height=True):
                    search = gr.Textbox(
                        label="Add a checkpoint", placeholder="search the repository", elem_id="chip-search", scale=2
                    )
                    found = gr.Dropdown(choices=[], label="Found", elem_id="chip-found", scale=2)
                    add = gr.Button("Add", elem_id="chip-add", size="sm", scale=0)
        with gr.Column(scale=2):
            image = gr.Image(
                label="Image (streams while it denoises)",
                elem_id="live-image",
                type="pil",
                height=300,
                interactive=False,
            )
            stop = gr.Button("Stop", elem_id="stop", variant="stop", visible=False)
            negative = gr.Textbox(
                "", label="Negative prompt", placeholder="e.g. blurry, lowres", elem_id="negative", max_lines=3
            )
            with gr.Row(equal_height=True):
                seed = gr.Number(RANDOM_SEED, label="Seed (-1: random)", precision=0, minimum=-1, elem_id="seed")
                random_seed = gr.Button("Random", elem_id="seed-random", size="sm", scale=0, min_width=90)
                reuse_seed = gr.Button("Reuse last seed", elem_id="seed-reuse", size="sm", scale=0, min_width=130)
            # the presets of the base the image is drawn on, from its first image; before that its native square. Any
            # "W x H" is read and checked when it draws (what the API sends)
            size = gr.Dropdown(
                [], label="Size", info="the sizes the image's base draws well", elem_id="size", allow_custom_value=True
            )
            steps = gr.Slider(1, 50, value=20, step=1, label="Steps", elem_id="steps")
            guidance = gr.Slider(0, 15, value=5.0, step=0.5, label="Guidance", elem_id="guidance")
            draw = gr.Button("Draw again", elem_id="draw", variant="primary")
            with gr.Accordion("Advanced", open=False, elem_id="advanced"):
                gr.Markdown(ADVANCED_LINE)
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
    note = gr.Markdown(elem_id="history-note")
    gallery = gr.Gallery(
        label="Your images (newest first): click one to reuse its settings",
        elem_id="history",
        columns=8,
        fit_columns=False,  # a few images stay thumbnails rather than filling the row
        height=260,
        allow_preview=True,
        buttons=["download"],
        interactive=False,
    )
    controls = [
        precision,
        trigger_aware,
        budget,
        seed,
        steps,
        guidance,
        size,
        float_kv,
        negative,
    ]  # new controls go last: API order
    return _Tab(
        state,
        chatbot,
        message,
        stats,
        image,
        stop,
        budget,
        memory,
        controls,
        [precision, trigger_aware, float_kv],
        drawing,
        negative,
        seed,
        random_seed,
        reuse_seed,
        size,
        steps,
        guidance,
        draw,
        chips,
        search,
        found,
        add,
        note,
        gallery,
        gallery_id,
        last_seed,
        asked_negative,
        newest_image,
    )


def _wire(tab: _Tab, callbacks: _Callbacks, admin: gr.State) -> None:
    """Sending, option buttons, the chips, Add and Draw again draw (one generation at a time), Stop cancels them,
    the gallery shows each finished image; a click in the gallery puts that image's settings back; the memory readout
    follows the precision controls, and releasing the budget slider sets the budget."""
    outputs = tab.draw_outputs
    settings = [*tab.controls, tab.gallery_id, admin]
    one_at_a_time = {"concurrency_id": GENERATION, "concurrency_limit": 1}
    events = [
        tab.message.submit(
            callbacks.respond,
            [tab.message, tab.chatbot, tab.state, *settings],
            outputs,
            api_name="chat",
            **one_at_a_time,
        ),
        tab.chatbot.option_select(
            callbacks.choose, [tab.chatbot, tab.state, *settings], outputs, api_visibility="private", **one_at_a_time
        ),
        tab.draw.click(
            callbacks.redraw, [tab.chatbot, tab.drawing, *settings], outputs, api_name="draw", **one_at_a_time
        ),
        tab.add.click(
            callbacks.add,
            [tab.found, tab.chatbot, tab.drawing, *settings],
            outputs,
            api_visibility="private",
            **one_at_a_time,
        ),
    ]
    for slot, chip in enumerate(tab.chips):
        events.append(
            chip.strength.release(
                callbacks.reweigh(slot),
                [chip.strength, tab.chatbot, tab.drawing, *settings],
                outputs,
                api_visibility="private",
                **one_at_a_time,
            )
        )
        events.append(
            chip.remove.click(
                callbacks.remove(slot),
                [tab.chatbot, tab.drawing, *settings],
                outputs,
                api_visibility="private",
                **one_at_a_time,
            )
        )
    tab.newest_image.change(callbacks.show_gallery, tab.gallery_id, tab.gallery, api_visibility="private")
    tab.stop.click(lambda: gr.Button(visible=False), None, tab.stop, cancels=events, api_visibility="private")
    # the chips and the size presets follow the set drawn; a request's own negative prompt fills its box
    tab.drawing.change(
        callbacks.show_drawing, [tab.drawing, tab.size], [*tab.chip_parts, tab.size], api_visibility="private"
    )
    tab.asked_negative.change(
        lambda asked: asked or gr.skip(), tab.asked_negative, tab.negative, api_visibility="private"
    )
    tab.search.submit(callbacks.find, [tab.search, tab.drawing], tab.found, api_visibility="private")
    tab.random_seed.click(lambda: RANDOM_SEED, None, tab.seed, api_visibility="private")
    tab.reuse_seed.click(callbacks.last_seed, tab.last_seed, tab.seed, api_visibility="private")
    tab.gallery.select(
        callbacks.reuse,
        [tab.gallery_id],
        [tab.drawing, tab.note, tab.negative, tab.seed, tab.size, tab.steps, tab.guidance],
        api_visibility="private",
    )
    for control in tab.readout_inputs:
        control.change(callbacks.memory_readout, tab.readout_inputs, tab.memory)
    tab.budget.release(
        callbacks.set_budget, [tab.budget, *tab.readout_inputs, admin], tab.memory, api_visibility="private"
    )
