"""The compute thread: every model computation of a process on one thread, jobs one at a time, no self-deadlock."""

from __future__ import annotations

import threading
import time

import pytest

from personalq import compute
from personalq.compute import ComputeThread


def test_a_job_runs_on_the_compute_thread_and_hands_back_its_result_or_its_error():
    worker = ComputeThread(name="test-compute")
    assert worker.run(lambda: threading.current_thread().name) == "test-compute"
    with pytest.raises(KeyError, match="missing"):
        worker.run(lambda: {}["missing"])
    assert worker.run(lambda x, y=0: x + y, 2, y=3) == 5  # the thread survives an error


def test_jobs_run_one_at_a_time_in_the_order_they_came():
    worker = ComputeThread()
    spans: list[tuple[int, float, float]] = []

    def job(index: int) -> None:
        started = time.perf_counter()
        time.sleep(0.02)
        spans.append((index, started, time.perf_counter()))

    futures = [worker.submit(job, i) for i in range(5)]
    for future in futures:
        future.result(timeout=10)
    assert [index for index, _, _ in spans] == list(range(5))
    assert all(later[1] >= earlier[2] for earlier, later in zip(spans, spans[1:]))


def test_a_job_runs_more_compute_in_place_and_is_refused_a_queue_behind_itself():
    worker = ComputeThread(name="test-compute")

    def outer() -> str:
        with pytest.raises(RuntimeError, match="cannot queue another behind itself"):
            worker.submit(lambda: None)  # it would wait for the job that waits for it
        return worker.run(lambda: threading.current_thread().name)

    assert worker.submit(outer).result(timeout=20) == "test-compute"


def test_a_stream_asked_for_on_the_compute_thread_runs_in_place():
    from personalq.serving.generation import stream

    def pipeline(callback) -> str:
        for step in range(3):
            callback(None, step, 0, {"latents": None})
        return threading.current_thread().name

    frames = compute.run(lambda: list(stream(pipeline, 3)))
    assert [f.step for f in frames] == [1, 2, 3, 3] and frames[-1].image == "personalq-compute"


def test_a_queued_job_that_is_cancelled_never_runs():
    worker = ComputeThread()
    release, ran = threading.Event(), []
    blocker = worker.submit(release.wait, 10)
    queued = worker.submit(ran.append, "ran")
    assert queued.cancel()
    release.set()
    blocker.result(timeout=10)
    worker.run(lambda: None)  # everything queued before it has been taken
    assert ran == []


def test_decorated_functions_compute_on_the_process_compute_thread():
    @compute.on_compute_thread
    def where() -> threading.Thread:
        return threading.current_thread()

    seen = [where()]
    callers = [threading.Thread(target=lambda: seen.append(where())) for _ in range(3)]
    for caller in callers:
        caller.start()
    for caller in callers:
        caller.join()
    assert len({id(thread) for thread in seen}) == 1 and seen[0].name == "personalq-compute"


def test_cards_are_embedded_on_the_compute_thread():
    from personalq.repository import embedding

    seen = []
    model = embedding._model()
    hook = model.register_forward_pre_hook(lambda module, args: seen.append(threading.current_thread().name))
    try:
        embedding.embed(["a teddy bear LoRA, version 2"])
        embedding.embed_query("the teddy bear")
    finally:
        hook.remove()
    assert seen and set(seen) == {"personalq-compute"}


def _compute_in_child(results) -> None:
    results.put(compute.run(lambda: threading.current_thread().name))


def test_a_forked_child_starts_a_compute_thread_of_its_own():
    """A ZeroGPU worker is forked from a process whose compute thread is running: the child has none of its parent's
    threads, so a job queued on the parent's would never run."""
    import multiprocessing

    compute.run(lambda: None)  # the parent's thread is running
    context = multiprocessing.get_context("fork")
    results = context.Queue()
    child = context.Process(target=_compute_in_child, args=(results,), daemon=True)
    child.start()
    try:
        child.join(timeout=30)
        assert child.exitcode == 0 and results.get(timeout=5) == "personalq-compute"
    finally:
        if child.is_alive():  # it hung: a job queued on a thread that does not exist in it
            child.kill()


def test_a_one_off_computation_runs_apart_without_queueing_behind_a_job():
    release = threading.Event()
    blocker = compute.submit(release.wait, 10)
    try:
        assert compute.run_apart(lambda: threading.current_thread().name) == "personalq-apart"
        with pytest.raises(ValueError, match="apart"):
            compute.run_apart(lambda: (_ for _ in ()).throw(ValueError("apart")))
    finally:
        release.set()
    blocker.result(timeout=10)
