"""The app as a public deployment: who may write, which files it serves, what card text can do in the chat."""

from __future__ import annotations

import datetime as dt
import os
import re
import shutil
import tempfile
import time
from pathlib import Path

import httpx
import pytest
from factories import write_card
from PIL import Image
from servers import free_port

from personalq.access import AttemptLimiter, TooManyAttempts, WriteAccess, WriteRefused, token_matches
from personalq.checkin.agent import CheckIn, LocalReasoner
from personalq.checkin.backends import make_reasoner
from personalq.checkin.sessions import SessionState, SessionStore
from personalq.config import DEFAULT_ASSETS, load_settings
from personalq.conversation import ChatState, Conversation
from personalq.repository.service import Repository
from personalq.retention import prune
from personalq.runtime import start
from personalq.ui.app import build_app, launch
from personalq.ui.media import published_preview, store_uploads

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"


# -- who may write ---------------------------------------------------------------------------------------


def test_writes_are_open_only_on_loopback_without_any_sign_in():
    assert WriteAccess(None, signed_in_users=False, public=False).open
    public = WriteAccess(None, signed_in_users=False, public=True)
    assert not public.open and "PERSONALQ_ADMIN_TOKEN" in public.disabled_reason
    with pytest.raises(WriteRefused, match="disabled"):
        public.require(admin=False, username=None)
    with_token = WriteAccess("s3cret", signed_in_users=False, public=True)
    assert with_token.disabled_reason is None
    with pytest.raises(WriteRefused, match="Sign in"):
        with_token.require(admin=False, username=None)
    with_token.require(admin=True, username=None)
    WriteAccess(None, signed_in_users=True, public=True).require(admin=False, username="alice")


def test_token_checks_are_constant_time_and_limited_per_client():
    assert token_matches("s3cret", "s3cret") and not token_matches("s3cre", "s3cret") and not token_matches("", None)
    now = [0.0]
    access = WriteAccess("s3cret", False, True, AttemptLimiter(limit=3, window_s=60, clock=lambda: now[0]))
    assert [access.sign_in("guess", "10.0.0.1") for _ in range(3)] == [False, False, False]
    with pytest.raises(TooManyAttempts):
        access.sign_in("s3cret", "10.0.0.1")  # even the right token waits: guessing must not pay
    assert access.sign_in("s3cret", "10.0.0.2")  # another client is not held up
    now[0] = 61.0
    assert access.sign_in("s3cret", "10.0.0.1")


def test_a_wrong_token_burst_from_a_shared_address_slows_guessing_but_the_right_token_gets_in():
    now = [0.0]
    access = WriteAccess("s3cret", False, True, AttemptLimiter(limit=5, window_s=300, slot_s=10, clock=lambda: now[0]))
    for second in range(5):  # someone else behind the same proxy address guesses
        now[0] = float(second)
        assert not access.sign_in("guess", "10.0.0.9")
    now[0] = 6.0
    with pytest.raises(TooManyAttempts):
        access.sign_in("guess-again", "10.0.0.9")  # locked: not even compared
    now[0] = 15.0  # the next slot, well inside the five-minute window
    assert access.sign_in("s3cret", "10.0.0.9")


def test_guesses_spread_over_many_addresses_count_against_the_token_too():
    now = [0.0]
    limiter = AttemptLimiter(limit=5, everyone_limit=8, window_s=300, slot_s=10, clock=lambda: now[0])
    access = WriteAccess("s3cret", False, True, limiter)
    for k in range(8):  # one guess from each of eight forwarded addresses: no address reaches its own limit
        assert not access.sign_in("guess", f"203.0.113.{k}")
    with pytest.raises(TooManyAttempts, match="lately"):
        access.sign_in("guess", "203.0.113.99")  # a ninth address waits for the next slot too
    now[0] = 11.0  # the next slot: the right token gets in, from anywhere
    assert access.sign_in("s3cret", "198.51.100.7")


def test_a_gemini_backend_without_a_key_falls_back_to_local(tmp_path):
    settings = load_settings(home=tmp_path / "home", llm_backend="gemini")
    assert isinstance(make_reasoner(settings), LocalReasoner)
    build_app(start(settings, import_demo=False))  # does not raise


def test_the_api_key_is_a_secret_never_shown(tmp_path):
    settings = load_settings(home=tmp_path / "home", llm_backend="gemini", llm_api_key="sk-very-secret")
    assert "sk-very-secret" not in repr(settings) and "sk-very-secret" not in str(settings.model_dump())


# -- what card text can do ------------------------------------------------------------------------------


def test_card_text_cannot_plant_images_links_or_html_in_the_chat(settings, tmp_path):
    write_card(
        tmp_path / "cards",
        "evil-v1",
        name="Evil ![x](http://attacker.example/p.png) <img src=x onerror=alert(1)>",
        version="[click](http://attacker.example)",
        triggers=["evl"],
        subjects=["lantern"],
    )
    repository = Repository(settings)
    assert repository.import_paths([tmp_path / "cards"]).ok
    turn = Conversation(CheckIn(repository), repository).reply("evil lantern", ChatState())
    assert turn.checkpoint is not None
    unescaped = re.compile(r"(?<!\\)(?:!\[|\]\()")  # "![" opening an image, "](" closing a link text
    assert not unescaped.search(turn.text) and "<img" not in turn.text


def test_card_text_is_escaped_once_quotes_and_exclamation_marks_as_typed(settings, tmp_path):
    write_card(tmp_path / "cards", "owl-v1", name="Owl's ![x](http://a.example/p.png) lamp", subjects=["lamp"])
    repository = Repository(settings)
    assert repository.import_paths([tmp_path / "cards"]).ok
    turn = Conversation(CheckIn(repository), repository).reply("owl's lamp", ChatState())
    assert turn.checkpoint is not None
    assert "Owl's !\\[x\\](http://a.example/p.png) lamp" in turn.text  # one escape, where one is needed
    assert "&#x27;" not in turn.text and "\\!" not in turn.text


# -- retention ------------------------------------------------------------------------------------------


def test_old_outputs_and_sessions_are_deleted_fresh_ones_kept(settings):
    settings.retention_hours = 1
    repository = Repository(settings)
    old, fresh = settings.outputs_dir / "old-session", settings.outputs_dir / "fresh-session"
    for folder in (old, fresh):
        folder.mkdir(parents=True)
        (folder / "image.png").write_bytes(b"png")
    two_hours_ago = time.time() - 7200
    os.utime(old / "image.png", (two_hours_ago, two_hours_ago))
    os.utime(old, (two_hours_ago, two_hours_ago))
    store = SessionStore(repository)
    kept = store.create(
        "a fox", dt.datetime(2024, 1, 1), "clarify", SessionState(prompt="a fox", candidate_ids=[], options=[])
    )
    pruned = prune(settings, repository, now=time.time())
    assert pruned.output_files == 1 and not (old / "image.png").exists() and (fresh / "image.png").exists()
    assert pruned.sessions == 0 and store.load(kept)
    assert prune(settings, repository, now=time.time() + 7200).sessions == 1
    assert not old.exists()  # left empty: gone at the next sweep


def test_a_session_that_keeps_drawing_still_loses_its_old_images(settings):
    settings.retention_hours = 1
    busy = settings.outputs_dir / "busy-session"
    busy.mkdir(parents=True)
    old, new = busy / "first.png", busy / "latest.png"
    old.write_bytes(b"png")
    two_hours_ago = time.time() - 7200
    os.utime(old, (two_hours_ago, two_hours_ago))
    new.write_bytes(b"png")  # the folder's own date is now
    assert prune(settings, Repository(settings)).output_files == 1 and not old.exists() and new.exists()


# -- uploads and previews live in the home --------------------------------------------------------------


def test_a_card_and_its_weights_uploaded_together_land_together_inside_the_home(settings, tmp_path):
    uploaded = [tmp_path / "gradio-a" / "otter.yaml", tmp_path / "gradio-b" / "otter.safetensors"]
    write_card(uploaded[0].parent, "otter", name="Otter v1", weights="otter.safetensors")
    uploaded[1].parent.mkdir()
    uploaded[1].write_bytes(b"not really weights")
    folder = store_uploads([str(p) for p in uploaded], settings.uploads_dir)
    assert folder.is_absolute() and folder.parent == settings.uploads_dir.resolve()
    assert sorted(p.name for p in folder.iterdir()) == ["otter.safetensors", "otter.yaml"]


def test_previews_are_served_from_copies_in_the_home(settings, tmp_path):
    picture = tmp_path / "elsewhere" / "preview.png"
    picture.parent.mkdir()
    Image.new("RGB", (4, 4), "red").save(picture)
    copy = Path(published_preview(picture, settings.previews_dir))
    assert copy.parent == settings.previews_dir and copy.read_bytes() == picture.read_bytes()
    assert published_preview(tmp_path / "missing.png", settings.previews_dir) is None
    assert published_preview(tmp_path / "elsewhere", settings.previews_dir) is None  # not a picture


# -- the app with its home outside the working and temp directories --------------------------------------


@pytest.fixture(scope="module")
def outside_home():
    """A home Gradio would not serve by default: neither under the working directory nor the temp directory."""
    base = Path.home() if not str(Path.home()).startswith((os.getcwd(), tempfile.gettempdir())) else Path("/var/tmp")
    home = Path(tempfile.mkdtemp(prefix="personalq-home-", dir=base))
    assert not str(home).startswith(os.getcwd()) and not str(home).startswith(tempfile.gettempdir())
    yield home
    shutil.rmtree(home, ignore_errors=True)


@pytest.fixture(scope="module")
def outside_app(outside_home):
    cards = outside_home / "my-cards"
    cards.mkdir()
    Image.new("RGB", (8, 8), "blue").save(cards / "fox.png")
    settings = load_settings(home=outside_home / "home", assets_dir=DEFAULT_ASSETS, admin_token="tok-admin")
    runtime = start(settings)
    write_card(cards, "fox-v1", name="Glass fox v1", subjects=["fox"], preview="fox.png")
    assert runtime.repository.import_paths([cards]).ok
    app = launch(runtime, "127.0.0.1", free_port(), prevent_thread_lock=True, quiet=True)
    yield app, settings
    app.close()


def test_the_app_serves_its_images_with_the_home_outside_cwd_and_temp(outside_app):
    from gradio_client import Client

    app, settings = outside_app
    client = Client(app.local_url, verbose=False)
    history, _image, stats, _box = client.predict(
        "the latest teddy bear", [], "FP32", True, 2048, 0, 2, 5.0, "64 x 64", False, api_name="/chat"
    )
    assert "image ready" in stats
    pictures = [part for m in history for part in m["content"] if part.get("type") == "component"]
    # the card's preview (copied into the home's previews) and the final image (in the home's outputs) are served
    assert [p["constructor_args"]["label"].startswith("Preview of") for p in pictures] == [True, False]
    assert all(p["constructor_args"]["alt_text"] for p in pictures)
    for picture in pictures:
        served = httpx.get(f"{app.local_url}gradio_api/file={picture['value']}", timeout=30)
        assert served.status_code == 200 and served.content[:4] == b"\x89PNG"
    _table, gallery, _count = client.predict("glass fox", "", "", api_name="/browse")
    assert gallery and Path(gallery[0]["image"]).read_bytes()[:4] == b"\x89PNG"


def test_the_app_serves_nothing_else_of_the_home(outside_app):
    app, settings = outside_app
    database = settings.sqlite_path.resolve()
    response = httpx.get(f"{app.local_url}gradio_api/file={database}", timeout=30)
    assert response.status_code in (403, 404) and b"SQLite" not in response.content


def test_the_api_cannot_change_the_memory_budget_without_signing_in(outside_app):
    from gradio_client import Client

    app, settings = outside_app
    client = Client(app.local_url, verbose=False)
    engine_budget_line = client.predict(
        "the latest teddy bear", [], "FP32", True, 64, 0, 1, 5.0, "64 x 64", False, api_name="/chat"
    )[2]
    assert f"of {settings.memory_budget_mb} MB" in engine_budget_line  # still the configured budget, not 64


@pytest.mark.browser
@pytest.mark.skipif(not Path(CHROMIUM).exists(), reason="Debian's chromium is not installed")
def test_a_public_app_without_a_token_disables_writes_and_says_why(tmp_path):
    from playwright.sync_api import sync_playwright

    settings = load_settings(home=tmp_path / "home")
    runtime = start(settings, import_demo=False)
    write_card(tmp_path / "cards", "owl-v1", name="Owl v1")
    port = free_port()
    app = launch(runtime, "0.0.0.0", port, prevent_thread_lock=True, quiet=True)
    try:
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
            page = browser.new_page()
            page.goto(f"http://127.0.0.1:{port}/")
            page.get_by_role("tab", name="Repository").click()
            page.get_by_text("Import or remove").click()
            page.fill("#import-path textarea", str(tmp_path / "cards"))
            page.click("#import-button")
            page.wait_for_function(
                "document.querySelector('#import-status textarea').value.includes('disabled')", timeout=60_000
            )
            browser.close()
        assert runtime.repository.count() == 0
    finally:
        app.close()


# -- the Space -----------------------------------------------------------------------------------------


@pytest.mark.slow
def test_space_build_makes_a_folder_that_starts_the_app_in_public_mode(outside_home, tmp_path):
    import subprocess
    import sys

    from typer.testing import CliRunner

    from personalq.cli import app as cli

    space = tmp_path / "space"
    result = CliRunner().invoke(cli, ["space", "build", str(space)])
    assert result.exit_code == 0, result.output
    assert (space / "README.md").read_text().startswith("---\ntitle: PersonalQ")
    assert {"app.py", "requirements.txt", "pyproject.toml", "personalq", "assets"} <= {p.name for p in space.iterdir()}
    assert not list(space.rglob("__pycache__")) and not (space / "tests").exists()
    # what git ignores is made on the Space, not shipped: the demo base's text encoder comes from a package
    assert not (space / "assets" / "zoo" / "base" / "text_encoder").exists()
    assert CliRunner().invoke(cli, ["space", "build", str(space)]).exit_code != 0  # never over an existing folder

    port = free_port()
    env = {
        **os.environ,
        "PERSONALQ_HOME": str(outside_home / "space-home"),
        "GRADIO_SERVER_PORT": str(port),
        "PYTHONPATH": "",
    }
    env.pop("PERSONALQ_ADMIN_TOKEN", None)
    server = subprocess.Popen(
        [sys.executable, "app.py"], cwd=space, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT
    )
    try:
        config = None
        for _ in range(240):
            try:
                config = httpx.get(f"http://127.0.0.1:{port}/config", timeout=5)
                break
            except httpx.TransportError:
                assert server.poll() is None, server.stdout.read().decode()[-3000:]
                time.sleep(0.5)
        assert config is not None and config.status_code == 200
        assert "Changes are disabled" in config.text  # public (0.0.0.0) without a token: writes are off
        assert (outside_home / "space-home" / "personalq.sqlite").exists()  # the home the Space was given
    finally:
        server.terminate()
        server.wait(timeout=30)
