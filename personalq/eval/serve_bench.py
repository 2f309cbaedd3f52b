"""``personalq bench serve``: latency of the chat path on the demo zoo, precision side by side, concurrent people.

1. One person: message -> Check-in -> first streamed preview -> final 20-step image, through the same
   :class:`Conversation` and :class:`Engine` calls the chat tab makes.
2. FP32 against W8A8 TAQ (and the other precisions), generating alternately in one run so both see the
   same machine state; the ratio of medians is the figure. Quantized precisions run on the engine's kernels
   (integer where the processor has them) and once more on a second engine that dequantizes, so both paths are
   shown side by side.
3. Several simulated people at once against the running app through ``gradio_client`` (Gradio's queue,
   the generation concurrency limit and all); every request must finish without error; p50/p95 reported.
4. A cold W8A8 request (a checkpoint whose variant was never made) through the chat's callbacks: how soon the chat
   says it is preparing, and the full reply without and with start-up warm-up (the checkpoint marked used, warm-up
   run to completion first; how long it took after start-up is reported too).
"""

from __future__ import annotations

import socket
import statistics
import threading
import time
from dataclasses import dataclass, field

import numpy as np

from personalq.checkin.backends import make_checkin
from personalq.config import Settings
from personalq.conversation import ChatState, Conversation
from personalq.runtime import start
from personalq.serving.engine import Engine
from personalq.serving.generation import GenerationParams

REQUESTS = [
    "teddy bear v2 on a beach",
    "the latest teddy bear",
    "the newest dog model in a park",
    "the oldest cat",
    "my car v1",
]


@dataclass
class ServeReport:
    first_preview_s: list[float] = field(default_factory=list)
    full_image_s: list[float] = field(default_factory=list)
    precision_s: dict[str, list[float]] = field(default_factory=dict)
    concurrent_s: list[float] = field(default_factory=list)
    concurrent_errors: list[str] = field(default_factory=list)
    people: int = 0
    kernels: str = ""
    cold: dict[str, float] = field(default_factory=dict)

    def table(self) -> str:
        fp = statistics.median(self.precision_s["FP32"])
        rows = [
            ("quantized layers compute with", self.kernels),
            ("first preview after sending a message (median)", f"{statistics.median(self.first_preview_s):.2f} s"),
            ("full 20-step 64x64 image after sending (median)", f"{statistics.median(self.full_image_s):.2f} s"),
            *[
                (
                    f"generation at {name} (median; x FP32)",
                    f"{statistics.median(t):.2f} s ({statistics.median(t) / fp:.2f}x)",
                )
                for name, t in self.precision_s.items()
            ],
            (
                f"{self.people} concurrent people: requests / errors",
                f"{len(self.concurrent_s)} / {len(self.concurrent_errors)}",
            ),
            (
                f"{self.people} concurrent people: p50 / p95 latency",
                f"{np.percentile(self.concurrent_s, 50):.2f} s / {np.percentile(self.concurrent_s, 95):.2f} s"
                if self.concurrent_s
                else "n/a",
            ),
            *[(f"cold W8A8 request: {name}", f"{seconds:.2f} s") for name, seconds in self.cold.items()],
        ]
        return "| measure | value |\n| --- | --- |\n" + "\n".join(f"| {a} | {b} |" for a, b in rows)


def single_person(conversation: Conversation, engine: Engine, report: ServeReport, rounds: int) -> None:
    for i in range(rounds):
        request = REQUESTS[i % len(REQUESTS)]
        sent = time.perf_counter()
        turn = conversation.reply(request, ChatState())
        if turn.checkpoint is None:
            continue
        first = None
        for frame in engine.generate(turn.checkpoint, turn.prompt, "FP32", params=GenerationParams(seed=i)):
            first = first or time.perf_counter() - sent
        report.first_preview_s.append(first)
        report.full_image_s.append(time.perf_counter() - sent)


def precisions(
    conversation: Conversation, engines: dict[str, Engine], report: ServeReport, rounds: int, names: list[str]
) -> None:
    """Each precision on each engine (labelled ``name`` for the first, ``name (label)`` for the others; full precision
    only on the first: kernels only change quantized layers), alternating within every round."""
    turn = conversation.reply(REQUESTS[0], ChatState())
    runs = [
        (name if i == 0 else f"{name} ({label})", engine, name)
        for i, (label, engine) in enumerate(engines.items())
        for name in names
        if i == 0 or name != "FP32"
    ]
    for _, engine, name in runs:  # produce (calibrate, quantize, store) every variant before timing
        list(engine.generate(turn.checkpoint, turn.prompt, name, params=GenerationParams(steps=2), previews=False))
    for i in range(rounds):
        for row, engine, name in runs:
            started = time.perf_counter()
            list(engine.generate(turn.checkpoint, turn.prompt, name, params=GenerationParams(seed=i)))
            report.precision_s.setdefault(row, []).append(time.perf_counter() - started)


def cold_request(settings: Settings, runtime, report: ServeReport) -> None:
    from personalq.access import WriteAccess
    from personalq.serving.variants import precision_config, variant_path
    from personalq.serving.warmup import start_warmup
    from personalq.ui.chat_tab import _callbacks

    request = "zoomy v2 on a beach"
    checkpoint = runtime.repository.get("zoomy-v2")
    stored = variant_path(checkpoint, precision_config("W8A8"), settings.home / "taq")

    def reply(engine: Engine) -> tuple[float | None, float]:
        """Seconds until the chat says it is preparing (None: it did not), and until the image."""
        conversation = Conversation(make_checkin(settings, runtime.repository), runtime.repository)
        folder = settings.outputs_dir
        chat = _callbacks(conversation, engine, folder, settings.previews_dir, WriteAccess(None, False, False))
        started, preparing = time.perf_counter(), None
        for history, *_ in chat.respond(request, [], ChatState(), "W8A8", True, 4096, 0, 20, 5.0, "64 x 64"):
            if not isinstance(history, list):  # a preview: the chat itself is left as it was (gr.skip)
                continue
            said = [m["content"] for m in history if isinstance(m["content"], str)]
            if preparing is None and any(text.startswith("Preparing W8A8") for text in said):
                preparing = time.perf_counter() - started
        return preparing, time.perf_counter() - started

    stored.unlink(missing_ok=True)
    preparing, cold = reply(Engine(settings))
    report.cold["the chat says it is preparing after"] = preparing if preparing is not None else float("nan")
    report.cold["full reply, no warm-up"] = cold
    stored.unlink()
    runtime.repository.touch(checkpoint.id)
    started = time.perf_counter()
    engine = Engine(settings.model_copy(update={"warmup_checkpoints": 1}))
    warmup = start_warmup(engine, runtime.repository)
    warmup.finished.wait()
    report.cold["start-up warm-up finished after"] = time.perf_counter() - started
    report.cold["full reply after warm-up"] = reply(engine)[1]


def concurrent_people(runtime, engine: Engine, report: ServeReport, people: int, requests_each: int) -> None:
    from gradio_client import Client

    from personalq.ui.app import launch

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    app = launch(
        runtime, "127.0.0.1", port, engine, prevent_thread_lock=True, quiet=True
    )  # as deployed: queue and all
    lock = threading.Lock()

    def person(index: int) -> None:
        client = Client(app.local_url, verbose=False)
        for r in range(requests_each):
            started = time.perf_counter()
            try:
                _, _, stats, _ = client.predict(
                    REQUESTS[(index + r) % len(REQUESTS)],
                    [],
                    "FP32",
                    True,
                    4096,
                    index,
                    20,
                    5.0,
                    "64 x 64",
                    False,
                    api_name="/chat",
                )
                with lock:
                    report.concurrent_s.append(time.perf_counter() - started)
            except Exception as error:  # recorded: the benchmark's point is that there are none
                with lock:
                    report.concurrent_errors.append(f"person {index}: {error}")

    threads = [threading.Thread(target=person, args=(i,)) for i in range(people)]
    try:
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    finally:
        app.close()
    report.people = people


def run_serve_bench(
    settings: Settings,
    rounds: int = 5,
    people: int = 8,
    requests_each: int = 2,
    names: tuple[str, ...] = ("FP32", "W8A8", "W4A8", "W8A4", "W4A4"),
) -> ServeReport:
    runtime = start(settings)
    engine = Engine(settings)
    conversation = Conversation(make_checkin(settings, runtime.repository), runtime.repository)
    report = ServeReport()
    single_person(conversation, engine, ServeReport(), 1)  # warm-up: pipeline load, first-call overheads
    single_person(conversation, engine, report, rounds)
    report.kernels = engine.kernels.describe()
    engines = {report.kernels: engine}
    if engine.kernels.available:
        engines["dequantizing"] = Engine(settings.model_copy(update={"kernels": "dequantize"}))
    precisions(conversation, engines, report, rounds, list(names))
    cold_request(settings, runtime, report)
    if people:
        concurrent_people(runtime, engine, report, people, requests_each)
    return report
