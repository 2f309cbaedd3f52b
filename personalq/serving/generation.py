"""Generation as a stream: a preview after every denoising step, then the final image; cancellable.

diffusers pipelines report progress through a step callback, so the pipeline runs in a worker thread and
the callback hands each preview to the consumer through a queue. Closing the stream (a person pressed
stop, or left) sets the cancel flag, and the worker aborts at the next step.
"""

from __future__ import annotations

import queue
import threading
import time
from dataclasses import dataclass
from typing import Callable, Iterator

import torch
from PIL import Image
from pydantic import BaseModel, Field


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
    run: Runner, total_steps: int, cancel: threading.Event | None = None, preview: Previewer | None = None
) -> Iterator[Frame]:
    """Run ``run(callback)`` in a worker thread; yield a :class:`Frame` per step and the final one.

    ``preview`` draws each step's latents (:mod:`personalq.serving.previews`); without it the step frames carry
    no image, only the progress.
    """
    cancel = cancel or threading.Event()
    frames: queue.Queue = queue.Queue()
    started = time.perf_counter()
    done = object()

    def on_step_end(pipeline, step: int, timestep, tensors: dict) -> dict:
        if cancel.is_set():
            raise Cancelled()
        image = preview(tensors["latents"]) if preview is not None else None
        frames.put(Frame(image, step + 1, total_steps, time.perf_counter() - started))
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

    worker = threading.Thread(target=work, name="generation", daemon=True)
    worker.start()
    try:
        while (item := frames.get()) is not done:
            if isinstance(item, BaseException):
                raise item
            yield item
    finally:
        cancel.set()
        worker.join()
