"""One thread for the process's model computation.

PyTorch computes on the CPU through OpenMP (libgomp), which gives every thread that computes a team of worker threads
and keeps that team for as long as the thread lives. Once a second thread computes while another's team is alive,
libgomp counts more threads than cores and stops spinning between parallel regions, and every operator then waits for
its workers to wake from sleep. Small operators ran several times slower, and whole images too, once the app's main
thread had embedded the demo cards at start-up (benchmarks/README.md, "One compute thread").

So the runtime computes on one long-lived thread: generating (:mod:`personalq.serving.generation`), loading,
quantizing and preparing at start-up (:class:`personalq.serving.engine.Engine`) and embedding cards
(:mod:`personalq.repository.embedding`). The threads that ask (the chat's, the warm-up's, ``personalq generate``'s
main thread) wait for the result and never compute with a model themselves. Jobs run one at a time in the order they
came, which the engine's lock did already for generation and preparation. A one-off computation that must not wait
behind them (a start-up self-check, a one-time export) runs with :func:`run_apart` instead. Commands that compute
on their main thread (``personalq quantize``, the zoo and evaluation commands) keep its team; a script that computes
and also uses the engine runs itself on the compute thread (``compute.run(main)``, as the benchmarks do).
"""

from __future__ import annotations

import functools
import os
import queue
import threading
from concurrent.futures import Future
from typing import Callable, TypeVar

T = TypeVar("T")


class ComputeThread:
    """A thread that runs the jobs given to it one at a time. A daemon, so a process can exit while a job runs (the
    job is abandoned)."""

    def __init__(self, name: str = "personalq-compute"):
        self._jobs: queue.SimpleQueue = queue.SimpleQueue()
        self._thread = threading.Thread(target=self._serve, name=name, daemon=True)
        self._thread.start()

    def _serve(self) -> None:
        while True:
            future, fn, args, kwargs = self._jobs.get()
            _run_into(future, fn, args, kwargs)

    def is_current(self) -> bool:
        return threading.current_thread() is self._thread

    def submit(self, fn: Callable[..., T], *args, **kwargs) -> Future:
        """Queue ``fn(*args, **kwargs)``; its result or exception arrives in the returned future. A job cannot queue
        another and wait for it (the second would wait for the first to finish): on this thread, use :meth:`run`."""
        if self.is_current():
            raise RuntimeError("a job on the compute thread cannot queue another behind itself; call it in place")
        future: Future = Future()
        self._jobs.put((future, fn, args, kwargs))
        return future

    def run(self, fn: Callable[..., T], *args, **kwargs) -> T:
        """``fn(*args, **kwargs)`` on this thread, waiting for it; called on this thread, it runs in place."""
        if self.is_current():
            return fn(*args, **kwargs)
        return self.submit(fn, *args, **kwargs).result()


def _run_into(future: Future, fn: Callable, args: tuple, kwargs: dict) -> None:
    if not future.set_running_or_notify_cancel():
        return
    try:
        result = fn(*args, **kwargs)
    except BaseException as error:  # handed to whoever waits, re-raised in their thread
        future.set_exception(error)
    else:
        future.set_result(result)


_shared: ComputeThread | None = None
_shared_lock = threading.Lock()


def _forget_in_child() -> None:
    """A forked child (a ZeroGPU worker, say) has none of its parent's threads: it starts its own on first use."""
    global _shared, _shared_lock
    _shared, _shared_lock = None, threading.Lock()


os.register_at_fork(after_in_child=_forget_in_child)


def compute_thread() -> ComputeThread:
    """The process's compute thread, started on first use."""
    global _shared
    with _shared_lock:
        if _shared is None:
            _shared = ComputeThread()
        return _shared


def on_it() -> bool:
    """Whether the calling thread is the process's compute thread (asking does not start it)."""
    shared = _shared
    return shared is not None and shared.is_current()


def run(fn: Callable[..., T], *args, **kwargs) -> T:
    """``fn(*args, **kwargs)`` on the process's compute thread (:meth:`ComputeThread.run`)."""
    return compute_thread().run(fn, *args, **kwargs)


def submit(fn: Callable[..., T], *args, **kwargs) -> Future:
    """Queue ``fn(*args, **kwargs)`` on the process's compute thread (:meth:`ComputeThread.submit`)."""
    return compute_thread().submit(fn, *args, **kwargs)


def run_apart(fn: Callable[..., T], *args, **kwargs) -> T:
    """``fn(*args, **kwargs)`` on a short-lived thread of its own, waiting for it: a one-off computation that must not
    queue behind the compute thread's jobs (minutes, at start-up). Its OpenMP team ends with the thread."""
    if on_it():
        return fn(*args, **kwargs)
    future: Future = Future()
    thread = threading.Thread(target=_run_into, args=(future, fn, args, kwargs), name="personalq-apart", daemon=True)
    thread.start()
    thread.join()
    return future.result()


def on_compute_thread(fn: Callable[..., T]) -> Callable[..., T]:
    """Decorate a function (or method) that computes with a model, so it always runs on the compute thread."""

    @functools.wraps(fn)
    def on_the_compute_thread(*args, **kwargs):
        return run(fn, *args, **kwargs)

    return on_the_compute_thread
