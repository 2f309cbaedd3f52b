"""Blind pairs that stay blind until the vote.

Image names are keyed by a server secret (an unkeyed hash of item and method can be recomputed by anyone),
every showing draws its own side order and the server keeps it (the vote is recorded from that record), and
a pair whose two methods chose the same checkpoint is never asked, but counted in the results.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest
from test_rating import small_repository  # noqa: F401  (the fixture)

from personalq.checkin.agent import CheckIn
from personalq.config import DEFAULT_ASSETS, load_settings
from personalq.rating import service as rating
from personalq.rating.items import RatingItem, all_items
from personalq.rating.pairs import PairMaker
from personalq.rating.votes import VoteStore
from personalq.runtime import start
from personalq.serving.engine import Engine


@pytest.fixture(scope="module")
def zoo(tmp_path_factory):
    settings = load_settings(home=tmp_path_factory.mktemp("home"), assets_dir=DEFAULT_ASSETS)
    return settings, start(settings).repository


@pytest.mark.slow
def test_image_names_cannot_be_recomputed_without_the_server_secret(zoo, tmp_path):
    settings, repository = zoo
    engine, images = Engine(settings), tmp_path / "images"
    maker = PairMaker(repository, CheckIn(repository), engine, images)
    item = RatingItem("coco-bear", "coco", "a teddy bear on a beach")
    shown = {
        method: Path(maker.image(item, maker.pick(item, method))) for method in ("checkin", maker.baseline_for(item))
    }
    guesses = {
        hashlib.sha1(f"{item.id}/{method}".encode()).hexdigest()[:16] for method in maker.methods
    }  # a rater's dictionary
    assert all(path.exists() for path in shown.values()) and not {path.stem for path in shown.values()} & guesses
    assert (settings.home / "secret").stat().st_mode & 0o777 == 0o600
    restarted = PairMaker(repository, CheckIn(repository), engine, images)  # the same secret: stored images are reused
    assert Path(restarted.image(item, restarted.pick(item, "checkin"))) == shown["checkin"]


@pytest.fixture
def service(small_repository, settings):  # noqa: F811
    settings.rater_tokens = {"tok-a": "alice", "tok-b": "bob"}
    settings.admin_token = "tok-admin"
    maker = PairMaker(small_repository, CheckIn(small_repository), baselines=("dense",))
    return rating.RatingService(
        settings, maker, VoteStore(small_repository), all_items(small_repository, repo_count=6)
    )


def test_every_showing_draws_its_sides_and_the_vote_follows_the_servers_record(service):
    alice, bob = service.sign_in("tok-a"), service.sign_in("tok-b")
    lefts = {service.next_pair(alice).left.pick.method for _ in range(40)}  # one item, shown again and again
    assert lefts == {"checkin", "dense"}
    pair = service.next_pair(alice)
    with pytest.raises(rating.PairClosed):
        service.vote(bob, pair.ticket, "left")  # a pair belongs to the rater it was shown to
    with pytest.raises(rating.PairClosed):
        service.vote(alice, "a-ticket-the-browser-made-up", "left")
    service.vote(alice, pair.ticket, "left")
    (vote,) = service.store.all()
    assert (vote.method_left, vote.method_right) == (pair.left.pick.method, pair.right.pick.method)
    assert (vote.checkpoint_left, vote.checkpoint_right) == (
        pair.left.pick.checkpoint_id,
        pair.right.pick.checkpoint_id,
    )
    with pytest.raises(rating.PairClosed):
        service.vote(alice, pair.ticket, "right")  # voted: closed


def test_pairs_showing_one_checkpoint_twice_are_not_asked_and_the_results_count_them(service):
    maker, items = service.maker, service.items
    identical = [
        i
        for i in items
        if maker.pick(i, "checkin").checkpoint_id == maker.pick(i, maker.baseline_for(i)).checkpoint_id
    ]
    assert identical and len(identical) < len(items)
    alice = service.sign_in("tok-a")
    assert service.progress(alice) == (0, len(items) - len(identical))
    asked = []
    while (pair := service.next_pair(alice)) is not None:
        assert pair.left.pick.checkpoint_id != pair.right.pick.checkpoint_id
        asked.append(pair.item.id)
        service.vote(alice, pair.ticket, "tie")
    assert set(asked) == {i.id for i in items} - {i.id for i in identical}
    assert f"Not asked: {len(identical)} of {len(items)} items" in service.results(service.sign_in("tok-admin"))


def test_the_secret_is_made_once_and_kept_to_its_owner(tmp_path):
    from personalq.rating.secret import home_secret

    first = home_secret(tmp_path)
    assert len(first) == 32 and home_secret(tmp_path) == first  # a restart reads the same secret
    (tmp_path / "secret").chmod(0o644)  # restored from a backup that lost the mode
    assert home_secret(tmp_path) == first and (tmp_path / "secret").stat().st_mode & 0o777 == 0o600
