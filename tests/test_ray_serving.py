"""The app as the ingress of Ray Serve replicas: routing by variant, the status board, ``personalq serve --status``,
and a chat request driven in Chromium through two replicas to an image."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

pytest.importorskip("ray.serve", reason="Ray Serve is not installed (pip install 'personalq[ray]')")

from test_chat_app import CHROMIUM, browser, free_port, send, wait_for_image  # noqa: E402,F401 (the browser fixture)

from personalq.config import DEFAULT_ASSETS, load_settings  # noqa: E402
from personalq.runtime import start  # noqa: E402
from personalq.serving.generation import GenerationParams  # noqa: E402
from personalq.ui.app import launch  # noqa: E402

pytestmark = pytest.mark.slow


def test_the_deployment_takes_its_scaling_and_resources_from_settings(tmp_path):
    from personalq.serving.ray_serving import replica_deployment

    autoscaled = load_settings(
        home=tmp_path, ray_min_replicas=1, ray_max_replicas=3, ray_target_ongoing_requests=1.5, ray_replica_gpus=1
    )
    config = replica_deployment(autoscaled)._deployment_config
    scaling = config.autoscaling_config
    assert (scaling.min_replicas, scaling.max_replicas, scaling.target_ongoing_requests) == (1, 3, 1.5)
    assert replica_deployment(autoscaled).ray_actor_options == {"num_cpus": 1.0, "num_gpus": 1.0}
    fixed = replica_deployment(autoscaled.model_copy(update={"ray_max_replicas": 1, "ray_max_batch_size": 8}))
    assert fixed._deployment_config.autoscaling_config is None and fixed._deployment_config.num_replicas == 1
    assert fixed._deployment_config.max_ongoing_requests == 8  # a full batch fits


@pytest.fixture(scope="module")
def on_ray(tmp_path_factory):
    import ray
    from ray import serve

    from personalq.serving.ray_serving import start_ray_serving

    settings = load_settings(
        home=tmp_path_factory.mktemp("home"),
        assets_dir=DEFAULT_ASSETS,
        ray_min_replicas=2,
        ray_max_replicas=2,
        ray_replica_cpus=0.5,
        ray_max_batch_size=4,
        ray_batch_wait_s=0.5,  # wide enough that two requests sent together always meet in one batch
    )
    runtime = start(settings)
    engine = start_ray_serving(settings)
    app = launch(runtime, "127.0.0.1", free_port(), engine=engine, prevent_thread_lock=True, quiet=True)
    yield runtime, engine, app.local_url
    app.close()
    serve.shutdown()
    ray.shutdown()


def test_requests_for_a_variant_go_to_the_replica_that_holds_it(on_ray):
    from personalq.serving.ray_serving import cluster_status, variant_id

    runtime, engine, _ = on_ray
    card = runtime.repository.get("teddybear-v2")
    before = len(engine.placements)
    for _ in range(2):
        frames = list(engine.generate(card, "a photo of <teddybear-v2> bear on a beach"))
        assert frames[-1].final and frames[-1].image.size == (64, 64)
    first, second = engine.placements[before:]
    assert second.replica == first.replica and second.resident
    statuses = {s.replica: s for s in cluster_status()}
    assert len(statuses) == 2
    assert variant_id(card, "FP32") in statuses[first.replica].resident
    assert "teddybear-v2 FP32" in engine.serving_line()


def test_requests_for_the_same_variant_sent_together_run_as_one_batch(on_ray):
    """Two requests sent together for a variant one replica holds are drawn in one pipeline call there.

    Which replica holds what reaches Serve's router asynchronously, and a pair the router splits leaves the variant on
    both replicas, after which every pair for it is split too. So each of up to three tries uses a variant that no
    replica has loaded yet."""
    runtime, engine, _ = on_ray
    tries = []
    for name in ("zoomy-v3", "ada-v2", "comet-v1"):
        card = runtime.repository.get(name)
        trigger = card.triggers[0]
        list(engine.generate(card, f"a photo of {trigger}"))  # one replica now holds the variant
        time.sleep(2)  # its multiplexed ids reach the router
        before, images = len(engine.placements), {}

        def request(prompt: str, seed: int) -> None:
            images[seed] = list(engine.generate(card, prompt, params=GenerationParams(seed=seed)))[-1].image

        threads = [
            threading.Thread(target=request, args=(f"a photo of {trigger} {place}", seed))
            for seed, place in enumerate(["on a beach", "in the snow"])
        ]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        assert len(images) == 2 and images[0].tobytes() != images[1].tobytes()
        placements = engine.placements[before:]
        tries.append([(p.replica, p.batch) for p in placements])
        if [p.batch for p in placements] == [2, 2] and len({p.replica for p in placements}) == 1:
            return
    pytest.fail(f"no pair was drawn as one batch; (replica, batch) per request in each try: {tries}")


def test_a_checkpoint_that_fails_on_a_replica_fails_its_own_request_only(on_ray, tmp_path):
    from personalq.serving.checkpoints import CheckpointLoadError

    runtime, engine, _ = on_ray
    good = runtime.repository.get("zoomy-v3")
    garbage = tmp_path / "broken.safetensors"
    garbage.write_bytes(b"not a safetensors file")
    broken = runtime.repository.get("yoyo-v1").model_copy(
        update={"id": "broken-v1", "weights_path": str(garbage), "weights_sha256": "0" * 64}
    )
    outcomes = {}

    def request(name: str, card) -> None:
        try:
            outcomes[name] = list(engine.generate(card, "a photo on a beach"))[-1].final
        except CheckpointLoadError as error:
            outcomes[name] = error

    threads = [threading.Thread(target=request, args=item) for item in (("good", good), ("broken", broken))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert outcomes["good"] is True
    assert isinstance(outcomes["broken"], CheckpointLoadError) and "broken-v1" in str(outcomes["broken"])


def test_the_rater_tabs_pair_is_drawn_on_the_replicas(on_ray, tmp_path):
    from personalq.checkin.agent import CheckIn
    from personalq.rating.items import RatingItem
    from personalq.rating.pairs import PairMaker

    runtime, engine, _ = on_ray
    maker = PairMaker(runtime.repository, CheckIn(runtime.repository), engine, tmp_path / "images")
    item = RatingItem("coco-bear", "coco", "a teddy bear on a beach")
    before = len(engine.placements)
    sides = [maker.image(item, pick) for pick in maker.picks(item)]
    assert all(side is not None and Path(side).exists() for side in sides)
    assert len(engine.placements) - before == 2  # both images came from Ray Serve replicas


def test_the_status_command_lists_the_replicas(on_ray):
    environment = {**os.environ, "PERSONALQ_HOME": str(on_ray[0].settings.home)}
    result = subprocess.run(
        [str(Path(sys.executable).parent / "personalq"), "serve", "--status"],
        capture_output=True,
        text=True,
        timeout=120,
        env=environment,
    )
    assert result.returncode == 0, result.stderr
    assert "Ray Serve: 2 replicas" in result.stdout


@pytest.mark.browser
@pytest.mark.skipif(not Path(CHROMIUM).exists(), reason="Debian's chromium is not installed")
def test_a_chat_request_streams_an_image_through_the_replicas(on_ray, browser):  # noqa: F811
    page = browser.new_page(viewport={"width": 1280, "height": 1000})
    page.goto(on_ray[2])
    page.wait_for_selector("#chat-input textarea")
    send(page, "mochi v3 on a beach")
    page.wait_for_selector("#chat mark", timeout=60_000)
    wait_for_image(page)
    page.get_by_text("Advanced").click()  # the serving readout is folded away with the precision settings
    page.wait_for_function("document.body.innerText.includes('Ray Serve: 2 replicas')", timeout=30_000)
    page.close()
