"""Start-up warm-up: what it plans from the repository's use, that it prepares and stores what a first request then
finds ready, that one checkpoint it cannot serve stops nothing, and that generating records use."""

from __future__ import annotations

import datetime as dt

import pytest

from personalq.checkin.backends import make_checkin
from personalq.config import DEFAULT_ASSETS, load_settings
from personalq.conversation import ChatState, Conversation
from personalq.runtime import start
from personalq.serving.engine import Engine
from personalq.serving.generation import GenerationParams
from personalq.serving.variants import precision_config, variant_path
from personalq.serving.warmup import WarmItem, Warmup, likely_requests


@pytest.fixture
def home(tmp_path):
    settings = load_settings(home=tmp_path / "home", assets_dir=DEFAULT_ASSETS, memory_budget_mb=1024)
    return settings, start(settings).repository


def used(repository, *ids):
    """Mark ``ids`` used, the first most recently."""
    now = dt.datetime(2026, 11, 24, 12, 0)
    for minutes, checkpoint_id in enumerate(ids):
        repository.touch(checkpoint_id, now - dt.timedelta(minutes=minutes))


def test_the_plan_is_the_default_precision_then_the_warmup_precisions_of_recent_checkpoints(home):
    settings, repository = home
    assert likely_requests(repository, settings) == [WarmItem(None, "FP32")]  # nothing used yet: the base

    used(repository, "teddybear-v2", "mochi-v3", "zoomy-v2")
    recent = [repository.get(i) for i in ("teddybear-v2", "mochi-v3")]
    assert likely_requests(repository, settings) == [
        WarmItem(recent[0], "FP32"),
        WarmItem(recent[0], "W8A8"),
        WarmItem(recent[1], "W8A8"),
    ]
    quantized_default = settings.model_copy(update={"default_precision": "W8A8", "warmup_checkpoints": 1})
    assert likely_requests(repository, quantized_default) == [WarmItem(recent[0], "W8A8")]
    off = settings.model_copy(update={"warmup_checkpoints": 0})
    assert likely_requests(repository, off) == [WarmItem(recent[0], "FP32")]


@pytest.mark.slow
def test_warmup_stores_the_variant_a_first_request_then_finds_ready(home):
    settings, repository = home
    used(repository, "teddybear-v2")
    card = repository.get("teddybear-v2")
    stored = variant_path(card, precision_config("W8A8"), settings.home / "taq")
    assert not stored.exists()
    engine = Engine(settings.model_copy(update={"warmup_checkpoints": 1}), calibration_captions=4, calibration_steps=2)
    warmup = Warmup(engine, likely_requests(repository, engine.settings))
    assert "preparing" not in warmup.line()
    warmup.start()
    assert warmup.finished.wait(300) and not warmup.failed and len(warmup.done) == 2
    assert warmup.line() == ""
    assert stored.exists() and engine.variant_is_stored(card, "W8A8")
    written = stored.stat().st_mtime_ns
    frames = list(engine.generate(card, "a photo of a <teddybear-v2> bear", "W8A8", params=GenerationParams(steps=2)))
    assert frames[-1].final and stored.stat().st_mtime_ns == written  # served from what warm-up left, not redone


def test_a_checkpoint_that_cannot_be_served_is_skipped_and_the_rest_prepared(home):
    settings, repository = home
    engine = Engine(settings)
    broken = repository.get("mochi-v3").model_copy(update={"base_model": "Flux.1 D"})
    warmup = Warmup(engine, [WarmItem(broken, "FP32"), WarmItem(None, "FP32")])
    warmup.run()
    assert [item for item, _ in warmup.failed] == [WarmItem(broken, "FP32")] and "Flux" in warmup.failed[0][1]
    assert warmup.done == [WarmItem(None, "FP32")] and warmup.finished.is_set()


def test_an_unexpected_error_is_logged_and_the_rest_still_prepared(home, monkeypatch, caplog):
    settings, repository = home
    engine = Engine(settings)
    prepare = engine.prepare

    def failing_once(checkpoint, precision):
        if checkpoint is not None:
            raise RuntimeError("oneDNN could not create a primitive")
        prepare(checkpoint, precision)

    monkeypatch.setattr(engine, "prepare", failing_once)
    teddy = repository.get("teddybear-v2")
    warmup = Warmup(engine, [WarmItem(teddy, "FP32"), WarmItem(None, "FP32")])
    warmup.run()
    assert warmup.failed == [(WarmItem(teddy, "FP32"), "RuntimeError('oneDNN could not create a primitive')")]
    assert warmup.done == [WarmItem(None, "FP32")] and warmup.finished.is_set() and warmup.line() == ""
    assert "preparing FP32 for teddybear-v2 failed" in caplog.text


def test_a_finished_generation_records_use(home):
    settings, repository = home
    conversation = Conversation(make_checkin(settings, repository), repository)
    turn = conversation.reply("teddy bear v2 on a beach", ChatState())
    assert turn.checkpoint.id == "teddybear-v2" and repository.newest_ids(by="used") == []
    conversation.record_use(turn.checkpoint)
    assert repository.newest_ids(by="used") == ["teddybear-v2"]
