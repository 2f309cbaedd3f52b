"""The Repository tab in Debian's Chromium on the bundled demo zoo: thumbnails, editing a trigger that the chat
then answers to, and "use in chat"."""

from __future__ import annotations

import pytest
from servers import free_port
from test_chat_app import CHROMIUM, send  # noqa: F401  (the module's skip mark applies here too)

from personalq.config import DEFAULT_ASSETS, load_settings
from personalq.runtime import start
from personalq.ui.app import launch

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(not __import__("pathlib").Path(CHROMIUM).exists(), reason="Debian's chromium is not installed"),
]


@pytest.fixture(scope="module")
def app_url(tmp_path_factory):
    settings = load_settings(home=tmp_path_factory.mktemp("home"), assets_dir=DEFAULT_ASSETS, admin_token="tok-admin")
    runtime = start(settings)
    app = launch(runtime, "127.0.0.1", free_port(), prevent_thread_lock=True, quiet=True)
    yield app.local_url
    app.close()


@pytest.fixture(scope="module")
def browser():
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        yield chromium
        chromium.close()


@pytest.fixture
def page(browser, app_url):
    page = browser.new_page(viewport={"width": 1400, "height": 1100})
    page.goto(app_url)
    page.wait_for_selector("#chat-input textarea")
    page.get_by_role("tab", name="Repository").click()
    page.wait_for_function("document.querySelectorAll('#repo-table .virtual-row').length > 0", timeout=60_000)
    yield page
    page.close()


def _search(page, text: str) -> None:
    page.get_by_label("Search").fill(text)
    page.get_by_label("Search").press("Enter")
    page.wait_for_function(
        f"document.querySelector('#repo-table').innerText.includes({text!r})"
        " && document.querySelectorAll('#repo-table .virtual-row').length < 10",
        timeout=60_000,
    )


def _cell(page, text: str):
    return page.locator("#repo-table .body-cell", has_text=text).first


def test_every_row_shows_a_thumbnail(page):
    rows = page.locator("#repo-table .virtual-row")
    page.wait_for_function(
        "[...document.querySelectorAll('#repo-table .virtual-row')].every(r => r.querySelector('img'))", timeout=60_000
    )
    image = page.locator("#repo-table .virtual-row img").first
    page.wait_for_function(
        "document.querySelector('#repo-table .virtual-row img').naturalWidth > 0", timeout=60_000
    )  # served, not a broken link
    assert rows.count() >= 10 and image.get_attribute("src")  # the rows in view (the table draws those alone)


def test_edit_a_trigger_then_ask_the_chat_for_it(page):
    _search(page, "teddybear-v2")
    _cell(page, "Teddybear bear v2").click()
    page.get_by_text("Edit the selected checkpoint").click()
    page.wait_for_function("document.querySelector('#edit-id textarea')?.value === 'teddybear-v2'", timeout=60_000)
    assert page.input_value("#edit-triggers textarea") == "<teddybear-v2>"
    page.get_by_text("Admin", exact=True).click()
    page.fill("#admin-token input", "tok-admin")
    page.click("#admin-sign-in")
    page.wait_for_function("document.querySelector('#admin-status').innerText.includes('Signed in')", timeout=60_000)
    page.fill("#edit-triggers textarea", "zorblaxbear\n<teddybear-v2>")
    page.click("#edit-save")
    page.wait_for_function("document.querySelector('#edit-status').innerText.includes('Saved')", timeout=60_000)
    assert "triggers" in page.inner_text("#edit-status")
    _search(page, "teddybear-v2")
    page.wait_for_function("document.querySelector('#repo-table').innerText.includes('zorblaxbear')", timeout=60_000)
    assert "✎ triggers" in page.inner_text("#repo-table")

    page.get_by_role("tab", name="Chat").click()
    send(page, "zorblaxbear on a beach")
    page.wait_for_selector("#chat mark", timeout=60_000)
    assert "zorblaxbear" in page.inner_text("#chat mark")
    assert "Teddybear bear v2" in page.inner_text("#chat")


def test_use_in_chat_fills_the_chats_box(page):
    _search(page, "ada-v2")
    _cell(page, "use in chat").click()
    page.wait_for_function("document.querySelector('#chat-input textarea').value.includes('v2')", timeout=60_000)
    assert page.locator("#chat-input textarea").is_visible()  # the Chat tab is open
    assert page.input_value("#chat-input textarea") == "Ada person v2 (<ada-v2>), "
