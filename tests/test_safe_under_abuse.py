"""The app as a hostile visitor finds it (issue 40): nothing private is served, uploads and request bodies are
bounded, one visitor cannot starve the others, rating stays blind. A real app on loopback with an admin token and
a rater, reached over HTTP, through gradio_client and in Chromium."""

from __future__ import annotations

import contextlib
import json
import shutil
import time
from pathlib import Path

import httpx
import pytest
from servers import free_port

from personalq.config import DEFAULT_ASSETS, load_settings
from personalq.runtime import start
from personalq.serving.engine import Engine
from personalq.ui.app import launch

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"


@pytest.fixture(scope="module")
def engine(tmp_path_factory):
    settings = load_settings(
        home=tmp_path_factory.mktemp("home"),
        assets_dir=DEFAULT_ASSETS,
        rater_tokens={"tok-alice": "alice"},
        admin_token="tok-admin",
        max_request_kb=256,
        max_history_messages=20,
    )
    return Engine(settings)


@pytest.fixture(scope="module")
def served(engine):
    settings = engine.settings
    runtime = start(settings)
    app = launch(runtime, "127.0.0.1", free_port(), engine=engine, prevent_thread_lock=True, quiet=True)
    yield app, settings
    app.close()


def client(app):
    from gradio_client import Client

    return Client(app.local_url, verbose=False)


# -- nothing private served (findings 2, 3, 4) -----------------------------------------------------------------


def test_the_votes_export_is_a_one_time_download_outside_the_served_folders(served):
    app, settings = served
    admin = client(app)
    admin.predict("tok-admin", api_name="/rater_sign_in")
    link = admin.predict(api_name="/rater_export")
    address = link[link.index("](") + 2 : link.index(")")]
    for guess in (settings.rating_dir / "preference-votes.csv", *settings.home.rglob("*.csv")):
        assert httpx.get(f"{app.local_url}gradio_api/file={guess.resolve()}", timeout=30).status_code != 200
    first = httpx.get(app.local_url + address, timeout=30)
    assert first.status_code == 200 and first.text.startswith("rater,")
    assert httpx.get(app.local_url + address, timeout=30).status_code == 404  # once
    assert not list(settings.exports_dir.iterdir())  # nothing of it is left on disk
    anonymous = client(app)
    assert "Download" not in str(anonymous.predict(api_name="/rater_export"))


def test_an_anonymous_visitor_cannot_upload(served):
    app, _settings = served
    response = httpx.post(
        f"{app.local_url}gradio_api/upload", files={"files": ("big.bin", b"x" * 100_000)}, timeout=30
    )
    assert response.status_code == 403


def test_request_bodies_over_the_limit_are_refused_before_they_are_parsed(served):
    app, settings = served
    history = [{"role": "user", "content": "a" * 1000}] * 400  # 400 KB of history, over the 256 KB limit
    body = {
        "data": ["a teddy bear", history, None, "FP32", True, 2048, 0, 1, 5.0, "64 x 64", False, False],
        "fn_index": 0,
        "session_hash": "abuser",
    }
    response = httpx.post(f"{app.local_url}gradio_api/queue/join", content=json.dumps(body), timeout=30)
    assert response.status_code == 413
    chunked = httpx.post(  # no Content-Length: counted as it arrives
        f"{app.local_url}gradio_api/queue/join", content=iter([json.dumps(body).encode()]), timeout=30
    )
    assert chunked.status_code == 413


def test_an_event_with_thousands_of_history_entries_is_refused_before_gradio_reads_them(served):
    app, settings = served
    body = {
        "data": ["a teddy bear", [{}] * 5000, None, "FP32", True, 2048, 0, 1, 5.0, "64 x 64", False, False],
        "fn_index": 0,
        "session_hash": "many-entries",
    }  # 15 KB, under the size limit: each invalid entry would be a line of Gradio's printed validation error
    response = httpx.post(f"{app.local_url}gradio_api/queue/join", json=body, timeout=30)
    assert response.status_code == 413 and "Too many entries" in response.text


def test_the_history_a_client_sends_is_cut_to_its_newest_messages(served):
    app, settings = served
    sent = [
        {"role": "user" if i % 2 == 0 else "assistant", "content": [{"type": "text", "text": f"message {i}"}]}
        for i in range(60)
    ]
    history, *_ = client(app).predict(
        "zzzz qqqq", sent, "FP32", True, 2048, 0, 1, 5.0, "64 x 64", False, api_name="/chat"
    )
    texts = [str(m["content"]) for m in history]
    assert len(history) <= settings.max_history_messages + 4 and "'message 0'" not in " ".join(texts)
    assert any("'message 59'" in t for t in texts)


@pytest.mark.browser
@pytest.mark.skipif(not Path(CHROMIUM).exists(), reason="Debian's chromium is not installed")
def test_the_signed_in_admin_uploads_and_imports_cards(served, tmp_path):
    from factories import write_card
    from playwright.sync_api import sync_playwright

    app, _settings = served
    write_card(tmp_path, "yak-v1", name="Yak plush v1", subjects=["yak"])
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        page = browser.new_page(viewport={"width": 1280, "height": 1000})
        page.goto(app.local_url)
        page.get_by_role("tab", name="Repository").click()
        page.get_by_text("Admin", exact=True).click()
        page.fill("#admin-token input", "tok-admin")
        page.click("#admin-sign-in")
        page.wait_for_function("document.querySelector('#admin-status').innerText.includes('Signed in')")
        page.wait_for_function("document.cookie.includes('personalq-upload=')")
        page.get_by_text("Import or remove").click()
        page.locator("#import-files input[type=file]").set_input_files(str(tmp_path / "yak-v1.yaml"))
        page.wait_for_selector("text=yak-v1.yaml")
        page.click("#import-button")
        page.wait_for_function(
            "document.querySelector('#import-status textarea').value.includes('yak-v1')", timeout=60_000
        )
        assert "imported" in page.input_value("#import-status textarea")
        browser.close()


# -- a fair share of the generator (findings 1, 6) --------------------------------------------------------------


def chat_inputs(budget=2048, seed=0, steps=1, guidance=5.0) -> list:
    """/chat's inputs as the page sends them: message, history, chat state, precision, trigger-aware, budget, seed,
    steps, guidance, size, float K/V, negative prompt, gallery id, admin state."""
    return [
        "the latest teddy bear",
        [],
        None,
        "FP32",
        True,
        budget,
        seed,
        steps,
        guidance,
        "64 x 64",
        False,
        "",
        None,
        False,
    ]


def join(app, session: str, steps: int = 1) -> httpx.Response:
    """A raw queue join of one /chat generation, as a script does it (it never opens the event stream)."""
    fn_index = next(i for i, fn in app.fns.items() if fn.api_name == "chat")
    body = {
        "data": chat_inputs(steps=steps),
        "fn_index": fn_index,
        "session_hash": session,
    }
    return httpx.post(f"{app.local_url}gradio_api/queue/join", json=body, timeout=30)


def test_one_visitor_gets_two_places_in_the_queue_and_is_told_why_not_more(served):
    app, settings = served
    answers = [join(app, "greedy-session", steps=20) for _ in range(5)]
    assert [a.status_code for a in answers[:2]] == [200, 200], [a.text for a in answers]
    assert all(a.status_code == 400 and "fair share" in a.json()["detail"] for a in answers[2:])
    history, _image, stats, _box = client(app).predict(  # another visitor is still served
        "the latest teddy bear", [], "FP32", True, 2048, 0, 1, 5.0, "64 x 64", False, api_name="/chat"
    )
    assert "image ready" in stats


def test_an_anonymous_request_is_held_to_its_steps_times_pixels(served):
    app, _settings = served
    history, _image, stats, _box = client(app).predict(
        "the latest teddy bear", [], "FP32", True, 2048, 0, 50, 5.0, "128 x 128", False, api_name="/chat"
    )
    said = str(history[-1]["content"])
    assert "more than a visitor may ask for" in said and "at most 5 steps" in said and "image ready" not in stats


def test_every_browser_session_draws_into_its_own_folder(served):
    app, settings = served
    before = set(settings.outputs_dir.iterdir())
    for _ in range(2):
        client(app).predict(
            "the latest teddy bear", [], "FP32", True, 2048, 0, 1, 5.0, "64 x 64", False, api_name="/chat"
        )
    folders = set(settings.outputs_dir.iterdir()) - before
    assert len(folders) == 2 and all(len(list(f.iterdir())) == 1 for f in folders)


@pytest.fixture
def slow_queue():
    with slow_app(limit=10, by_address=False) as running:
        yield running


@contextlib.contextmanager
def slow_app(limit: int, by_address: bool):
    """A small real Gradio app whose one function takes 0.4 s (3 s for "blocker"), one at a time, under the same
    fair share (a one-second grace for clients that never listen), recording the order it served requests in."""
    import gradio as gr
    from starlette.middleware import Middleware

    from personalq.web.fair_queue import FairShare, Listeners, ListenerTracker

    served_order: list[str] = []

    def work(name: str) -> str:
        time.sleep(3.0 if name == "blocker" else 0.4)
        served_order.append(name)
        return name

    with gr.Blocks() as demo:
        box, out = gr.Textbox(), gr.Textbox()
        box.submit(work, box, out, api_name="work", concurrency_id="generation", concurrency_limit=1)
    demo.queue(max_size=64)
    listeners = Listeners()
    share = FairShare("generation", limit, listeners, by_address=by_address, grace_s=1.0)
    share.install(demo)
    demo.launch(
        server_port=free_port(),
        prevent_thread_lock=True,
        quiet=True,
        app_kwargs={"middleware": [Middleware(ListenerTracker, listeners=listeners)]},
    )
    try:
        yield demo, served_order
    finally:
        demo.close()


def test_a_visitor_is_served_between_another_visitors_backlog(slow_queue):
    from gradio_client import Client

    demo, served_order = slow_queue
    backlog, newcomer = Client(demo.local_url, verbose=False), Client(demo.local_url, verbose=False)
    jobs = [backlog.submit(f"backlog {i}", api_name="/work") for i in range(6)]
    time.sleep(0.2)
    served_before = len(served_order)
    assert newcomer.predict("newcomer", api_name="/work") == "newcomer"
    assert served_order.index("newcomer") <= served_before + 2  # after the job drawing as it joined, not all six
    assert [job.result() for job in jobs] == [f"backlog {i}" for i in range(6)]


def test_jobs_whose_client_never_listens_are_dropped_before_they_run(slow_queue):
    from gradio_client import Client

    demo, served_order = slow_queue
    listener = Client(demo.local_url, verbose=False)
    blocker = listener.submit("blocker", api_name="/work")  # holds the one slot for longer than the grace
    time.sleep(0.2)
    fn_index = next(i for i, fn in demo.fns.items() if fn.api_name == "work")
    for i in range(4):
        body = {"data": [f"unheard {i}"], "fn_index": fn_index, "session_hash": "never-listens"}
        assert httpx.post(f"{demo.local_url}gradio_api/queue/join", json=body, timeout=30).status_code == 200
    assert blocker.result() == "blocker"
    assert listener.predict("listener", api_name="/work") == "listener"
    assert served_order == ["blocker", "listener"]  # the four nobody listened to never ran


def test_behind_a_trusted_proxy_new_sessions_from_one_address_do_not_multiply_the_share():
    with slow_app(limit=2, by_address=True) as (demo, _served_order):
        fn_index = next(i for i, fn in demo.fns.items() if fn.api_name == "work")
        answers = [
            httpx.post(
                f"{demo.local_url}gradio_api/queue/join",
                json={"data": ["blocker"], "fn_index": fn_index, "session_hash": f"fresh-session-{n}"},
                timeout=30,
            ).status_code
            for n in range(4)
        ]
        assert answers == [200, 200, 400, 400]  # one address, whatever sessions it opens


def test_behind_a_named_proxy_each_forwarded_address_has_its_own_attempts(tmp_path):
    from gradio_client import Client

    settings = load_settings(
        home=tmp_path / "home", rater_tokens={"tok-alice": "alice"}, trusted_proxies=["127.0.0.1"]
    )
    app = launch(start(settings, import_demo=False), "127.0.0.1", free_port(), prevent_thread_lock=True, quiet=True)
    try:

        def attempt(address: str) -> str:
            forwarded = Client(app.local_url, verbose=False, headers={"X-Forwarded-For": address})
            return str(forwarded.predict("wrong-token", api_name="/rater_sign_in"))

        assert not any("Too many" in attempt(f"203.0.113.{n}") for n in range(6))  # six visitors, one try each
        assert "Too many" in [attempt("198.51.100.7") for _ in range(6)][-1]  # one visitor, six tries
    finally:
        app.close()


# -- errors (finding 10) ----------------------------------------------------------------------------------------


def test_a_visitor_is_told_what_failed_but_not_where_the_server_keeps_files(served, engine):
    app, settings = served
    engine.set_budget_mb(64)  # what an admin can set: too small for any model
    try:
        history, *_ = client(app).predict(
            "the latest teddy bear", [], "FP32", True, 2048, 0, 1, 5.0, "64 x 64", False, api_name="/chat"
        )
    finally:
        engine.set_budget_mb(settings.memory_budget_mb)
    said = str(history[-1]["content"])
    assert "Could not generate" in said and "memory budget" in said
    assert str(settings.home) not in said and str(DEFAULT_ASSETS) not in said and "/" not in said.split("budget")[0]


def raw_chat(app, budget, seed, steps, guidance) -> dict:
    """One /chat as raw JSON (which may carry NaN, as Python's json writes it), read through the event stream."""
    import uuid

    session = uuid.uuid4().hex
    fn_index = next(i for i, fn in app.fns.items() if fn.api_name == "chat")
    data = chat_inputs(budget, seed, steps, guidance)
    body = json.dumps({"data": data, "fn_index": fn_index, "session_hash": session})
    joined = httpx.post(
        f"{app.local_url}gradio_api/queue/join", content=body, headers={"content-type": "application/json"}, timeout=30
    )
    assert joined.status_code == 200, joined.text
    with httpx.stream("GET", f"{app.local_url}gradio_api/queue/data?session_hash={session}", timeout=120) as stream:
        for line in stream.iter_lines():
            message = json.loads(line[5:]) if line.startswith("data:") else {}
            if message.get("msg") == "process_completed":
                return message


@pytest.mark.parametrize(
    "budget, seed, steps, guidance",
    [(2048, 0, float("nan"), 5.0), (2048, 0, 20, float("inf")), (2048, -3, 20, 5.0), (2048, 0, 0, 5.0)],
)
def test_settings_that_are_not_numbers_or_out_of_range_are_refused_with_a_message(
    served, budget, seed, steps, guidance
):
    app, _settings = served
    completed = raw_chat(app, budget, seed, steps, guidance)
    if completed["success"]:  # NaN passes Gradio's range checks: the app refuses it
        assert "I cannot draw that" in str(completed["output"]["data"][0][-1]["content"])
    else:  # Gradio's own refusal of a value outside a slider's range
        assert "value" in completed["output"]["error"].lower()


def test_a_budget_that_is_not_a_number_or_out_of_range_is_refused_with_a_message():
    from personalq.serving.allowance import Refused, check_budget

    assert check_budget(512.0, 64, 8192) == 512
    for bad in (float("nan"), float("inf"), 32, 10**6):
        with pytest.raises(Refused, match="between 64 and 8192 MB"):
            check_budget(bad, 64, 8192)


# -- addresses (finding 9) --------------------------------------------------------------------------------------


def test_a_forwarded_address_from_an_undeclared_proxy_is_not_believed(served):
    from gradio_client import Client

    app, _settings = served
    said = []
    for n in range(6):  # each attempt claims another address
        forged = Client(app.local_url, verbose=False, headers={"X-Forwarded-For": f"203.0.113.{n}"})
        said.append(str(forged.predict("wrong-token", api_name="/rater_sign_in")))
    assert "Too many wrong tokens" in said[-1]  # counted against the one address they all came from
