"""Generation as a stream: a frame per denoising step (with a preview on the first, then at most one per interval),
then the final image; cancellable.

diffusers pipelines report progress through a step callback, so the pipeline runs on the process's
compute thread (:mod:`personalq.compute`) and the callback hands each preview to the consumer through a queue.
Closing the stream (a person pressed stop, or left) sets the cancel flag, and the worker aborts at the next step
(or never starts, if it was still queued).
"""

from __future__ import annotations

import queue
import threading
import time
from concurrent.futures import wait
from dataclasses import dataclass
from typing import Callable, Iterator

import torch
from PIL import Image
from pydantic import BaseModel, Field

from personalq import compute


class GenerationParams(BaseModel):
    steps: int = Field(20, ge=1, le=150)
    guidance: float = Field(5.0, ge=0.0, le=30.0)
    seed: int = Field(0, ge=0, le=2**32 - 1)
    width: int = Field(64, ge=32, le=2048, multiple_of=8)
    height: int = Field(64, ge=32, le=2048, multiple_of=8)
    negative_prompt: str = ""


@dataclass
class Frame:
    image: Image.Image | None  # None for a step whose preview was not asked for
    step: int
    total: int
    seconds: float  # since the stream started
    final: bool = False


class Cancelled(Exception):
    """The consumer stopped listening; the worker leaves the denoising loop."""


Runner = Callable[[Callable], Image.Image]  # runs the pipeline with a step callback, returns the final image


Previewer = Callable[[torch.Tensor], Image.Image]  # a step's latents -> the preview shown while it denoises


def stream(
    run: Runner,
    total_steps: int,
    cancel: threading.Event | None = None,
    preview: Previewer | None = None,
    preview_interval_s: float = 0.0,
) -> Iterator[Frame]:
    """Run ``run(callback)`` on the compute thread; yield a :class:`Frame` per step and the final one. Called on the
    compute thread itself, it runs ``run`` in place and yields the frames once it is done.

    ``preview`` draws a step's latents (:mod:`personalq.serving.previews`): the first step's, then a step's once
    ``preview_interval_s`` has passed since the last preview. The other step frames carry no image, only the progress:
    a fast model finishes a step every few milliseconds, faster than anyone watches, and every preview sent costs the
    app an encoded image.
    """
    cancel = cancel or threading.Event()
    frames: queue.Queue = queue.Queue()
    started = time.perf_counter()
    done = object()
    last_preview = -float("inf")

    def on_step_end(pipeline, step: int, timestep, tensors: dict) -> dict:
        nonlocal last_preview
        if cancel.is_set():
            raise Cancelled()
        now = time.perf_counter()
        image = None
        if preview is not None and now - last_preview >= preview_interval_s:
            image, last_preview = preview(tensors["latents"]), now
        frames.put(Frame(image, step + 1, total_steps, now - started))
        return tensors

    def work() -> None:
        try:
            image = run(on_step_end)
            frames.put(Frame(image, total_steps, total_steps, time.perf_counter() - started, final=True))
        except Cancelled:
            pass
        except BaseException as error:  # handed to the consumer, which re-raises it in its own thread
            frames.put(error)
        finally:
            frames.put(done)

    if compute.on_it():  # a job that generates (a benchmark, say): the pipeline runs in place, frames come after
        work()
        job = None
    else:
        job = compute.submit(work)
    try:
        while (item := frames.get()) is not done:
            if isinstance(item, BaseException):
                raise item
            yield item
    finally:
        cancel.set()
        # a job that had started: wait for it to leave at its next step (unless this is its own thread, where an
        # abandoned stream may be collected)
        if job is not None and not job.cancel() and not compute.on_it():
            wait([job])
