"""Blind pairs that stay blind until the vote.

Image names are keyed by a server secret (an unkeyed hash of item and method can be recomputed by anyone),
every showing draws its own side order and the server keeps it (the vote is recorded from that record), and
a pair whose two methods chose the same checkpoint is never asked, but counted in the results.
"""

from __future__ import annotations

import hashlib
import io
import re
from pathlib import Path

import pytest
from PIL import Image
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
    unanswered = [i for i in items if i not in identical and not maker.answers(i)]
    assert identical and len(identical) < len(items)
    alice = service.sign_in("tok-a")
    assert service.progress(alice) == (0, len(items) - len(identical) - len(unanswered))
    asked = []
    while (pair := service.next_pair(alice)) is not None:
        assert pair.left.pick.checkpoint_id != pair.right.pick.checkpoint_id
        asked.append(pair.item.id)
        service.vote(alice, pair.ticket, "tie")
    assert set(asked) == {i.id for i in items} - {i.id for i in identical} - {i.id for i in unanswered}
    assert f"Not asked: {len(identical)} of {len(items)} items" in service.results(service.sign_in("tok-admin"))


def test_the_secret_is_made_once_and_kept_to_its_owner(tmp_path):
    from personalq.rating.secret import home_secret

    first = home_secret(tmp_path)
    assert len(first) == 32 and home_secret(tmp_path) == first  # a restart reads the same secret
    (tmp_path / "secret").chmod(0o644)  # restored from a backup that lost the mode
    assert home_secret(tmp_path) == first and (tmp_path / "secret").stat().st_mode & 0o777 == 0o600


# -- issue 40: what a hostile card or a curious rater can do ----------------------------------------------------


def test_card_text_in_the_rater_tab_is_inert(small_repository):  # noqa: F811
    from personalq.rating.pairs import Pair, Pick, Side
    from personalq.ui.rater_tab import request_line, reveal_line

    planted = "Evil ![x](http://attacker.example/p.png) <img src=x onerror=alert(1)> [click](http://a.example)"
    item = RatingItem("repo-evil", "repo", planted, None)
    left = Side(Pick("checkin", "evil-v1", "p"), None, f"checkin · {planted}")
    right = Side(Pick("dense", "dog-v1", "p"), None, "dense · Pixel dog v1")
    shown = request_line(Pair(item, left, right)) + reveal_line(Pair(item, left, right), "left")
    unescaped = re.compile(r"(?<!\\)(?:!\[|\]\()")  # "![" opening an image, "](" closing a link text
    assert not unescaped.search(shown) and "<img" not in shown and "Evil" in shown


def test_a_side_that_finds_no_checkpoint_is_never_shown_and_is_counted(small_repository, settings):  # noqa: F811
    settings.rater_tokens, settings.admin_token = {"tok-a": "alice"}, "tok-admin"
    maker = PairMaker(small_repository, CheckIn(small_repository), baselines=("dense",))
    nothing = RatingItem("coco-nothing", "coco", "qzxv wobbleflux")
    assert maker.pick(nothing, "checkin").checkpoint_id is None and maker.pick(nothing, "dense").checkpoint_id
    service = rating.RatingService(
        settings, maker, VoteStore(small_repository), [nothing, *all_items(small_repository, 6)]
    )
    alice = service.sign_in("tok-a")
    while (pair := service.next_pair(alice)) is not None:
        assert pair.item.id != nothing.id and pair.left.pick.checkpoint_id and pair.right.pick.checkpoint_id
        service.vote(alice, pair.ticket, "tie")
    counted = re.search(
        r"(\d+) items where one side found no checkpoint", service.results(service.sign_in("tok-admin"))
    )
    assert counted and int(counted.group(1)) >= 1


@pytest.mark.slow
def test_every_showing_of_a_pair_reaches_the_page_under_its_own_image_names(zoo, tmp_path):
    settings, repository = zoo
    maker = PairMaker(repository, CheckIn(repository), Engine(settings), tmp_path / "images")
    item = RatingItem("coco-bear", "coco", "a teddy bear on a beach")
    first, second = maker.pair(item), maker.pair(item)  # two raters, or one rater twice
    names = {Path(p).name for pair in (first, second) for p in (pair.left.image_path, pair.right.image_path)}
    assert len(names) == 4
    shown = {(pair.left.pick.method, Path(pair.left.image_path).read_bytes()) for pair in (first, second)}
    shown |= {(pair.right.pick.method, Path(pair.right.image_path).read_bytes()) for pair in (first, second)}
    assert len(shown) == 4  # the bytes differ too: Gradio serves each output from a folder named by its bytes' hash
    stored = {method: maker.image(item, maker.pick(item, method)) for method, _ in shown}
    for method, picture in shown:  # the same pixels as the stored picture
        with Image.open(io.BytesIO(picture)) as copy, Image.open(stored[method]) as original:
            assert copy.tobytes() == original.tobytes()
    maker.forget(first)
    assert not Path(first.left.image_path).exists() and Path(second.left.image_path).exists()


def test_the_items_are_pinned_for_a_round_and_an_import_does_not_change_them(small_repository, settings, tmp_path):  # noqa: F811
    from factories import write_card

    settings.admin_token = "tok-admin"

    def service():
        maker = PairMaker(small_repository, CheckIn(small_repository), baselines=("dense",))
        return rating.RatingService(settings, maker, VoteStore(small_repository))

    before = [i.id for i in service().items]
    for animal in ("otter", "lynx", "heron", "moose"):
        write_card(tmp_path / "more", f"{animal}-v1", name=f"Pixel {animal} v1", subjects=[animal])
    assert small_repository.import_paths([tmp_path / "more"]).ok
    restarted = service()
    assert [i.id for i in restarted.items] == before  # the round's items, not the repository's new ones
    admin = restarted.sign_in("tok-admin")
    assert restarted.results(admin).startswith("Round 1:")
    assert restarted.new_round(admin).number == 2 and [i.id for i in restarted.items] != before
    assert service().round.number == 2
