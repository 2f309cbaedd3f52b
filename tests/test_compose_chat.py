"""Composing an image in the chat, in Debian's Chromium on the bundled demo zoo: the image's checkpoints as chips,
a strength changed and the image drawn again without Check-in, the visitor's gallery across a reload, and the
downloaded PNG naming every adapter at its weight in the WebUI's ``parameters`` chunk.

The request names its character and its style the WebUI's way (``<lora:name:weight>``): the demo zoo's cards say no
role, so words alone select one checkpoint there. A checkpoint also joins through the chat's own search box."""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from PIL import Image
from playwright.sync_api import TimeoutError as PlaywrightTimeout
from test_chat_app import CHROMIUM, app_url, browser, page, send  # noqa: F401 (the app and browser fixtures)

from personalq.serving.png_parameters import read_parameters

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(not Path(CHROMIUM).exists(), reason="Debian's chromium is not installed"),
]
TIMEOUT = 180_000  # the first image loads the base; two shared cores under load


@pytest.fixture
def chat(page):  # noqa: F811 (test_chat_app's fresh page on the app: a browser of its own)
    return page


def images_in_gallery(chat) -> int:
    return chat.locator("#history .thumbnail-item").count()


def wait_for_gallery(chat, count: int) -> None:
    """Until the gallery holds ``count`` images; failing, say what the conversation said instead."""
    try:
        chat.wait_for_function(
            f"document.querySelectorAll('#history .thumbnail-item').length >= {count}", timeout=TIMEOUT
        )
    except PlaywrightTimeout:
        pytest.fail(
            f"the gallery holds {images_in_gallery(chat)} of {count} images; the chat says: "
            f"{chat.inner_text('#chat')[-600:]!r}; the readout: {chat.inner_text('#turn-stats')!r}"
        )


def type_into(chat, selector: str, value: str) -> None:
    """Type a value and leave the field, as a person does (a slider's number box reports its release on blur)."""
    chat.fill(selector, value)
    chat.press(selector, "Tab")


def served(chat, index: int) -> bytes:
    """The gallery's image at ``index`` (newest first), fetched the way the page fetches it."""
    source = chat.locator("#history .thumbnail-item img").nth(index).get_attribute("src")
    return chat.request.get(source).body()


def pixels(chat, index: int) -> Image.Image:
    return Image.open(io.BytesIO(served(chat, index))).convert("RGB")


def chip_names(chat) -> str:
    return " ".join(chat.locator("#chips [id$='-name']:visible").all_inner_texts())


def downloaded(chat, tmp_path: Path, name: str):
    """The parameters of the gallery's newest image, downloaded from its preview as a person saves it."""
    chat.locator("#history .thumbnail-item").first.click()
    with chat.expect_download(timeout=TIMEOUT) as download:
        chat.locator("#history button[aria-label='Download']").click()
    saved = tmp_path / name
    download.value.save_as(saved)
    chat.keyboard.press("Escape")  # out of the gallery's preview
    parameters = read_parameters(saved)
    assert parameters is not None
    return parameters


def networks(parameters) -> set[tuple[str, float]]:
    return {(n.name, n.weight) for n in parameters.networks}


def test_a_character_and_a_style_a_strength_changed_and_the_png_names_both(chat, tmp_path):
    assert not chat.locator("#stop").is_visible()  # nothing is being drawn
    type_into(chat, "#steps input[type=number]", "4")
    type_into(chat, "#seed input", "7")  # one seed: the images below differ by their checkpoints and strengths only
    send(chat, "<lora:teddybear-v2:0.8> <lora:doodle-v1:0.6> a bear on a beach")
    wait_for_gallery(chat, 1)
    assert "Teddybear bear v2" in chip_names(chat) and "Doodle drawing v1" in chip_names(chat)  # two chips
    strengths = [chat.input_value(f"#chip-{slot}-strength input[type=number]") for slot in (0, 1)]
    assert sorted(strengths) == ["0.6", "0.8"]
    assert not chat.locator("#stop").is_visible()  # shown only while the image was made
    character = 0 if "Teddybear" in chat.inner_text("#chip-0-name") else 1

    # a strength changed: drawn again with the same prompt, no new Check-in turn in the conversation
    said = chat.locator("#chat .message").count()
    type_into(chat, f"#chip-{character}-strength input[type=number]", "0.55")
    wait_for_gallery(chat, 2)
    assert images_in_gallery(chat) == 2  # both images
    assert chat.locator("#chat .message").count() == said + 1  # the new image only
    newest, before = (pixels(chat, i) for i in (0, 1))
    assert newest.size == before.size and newest.tobytes() != before.tobytes()  # the strength changed the image
    labels = chat.locator("#chat img").evaluate_all("images => images.map(i => i.alt)")
    assert len(labels) >= 3 and all(labels), labels  # the card's preview and both images, each described

    # the newest image, downloaded, says how it was made in the WebUI's parameters chunk
    parameters = downloaded(chat, tmp_path, "both.png")
    assert networks(parameters) == {("teddybear-v2", 0.55), ("doodle-v1", 0.6)}
    assert "<teddybear-v2>" in parameters.prompt and "<doodle-v1>" in parameters.prompt
    assert (parameters.steps, parameters.width, parameters.height) == (4, 64, 64)
    assert chat.input_value("#seed input") == str(parameters.seed)  # the click put its settings back

    # the style removed: its trigger leaves the prompt, and the image is drawn with the character alone
    chat.click(f"#chip-{1 - character}-remove")
    wait_for_gallery(chat, 3)
    assert not chat.locator("#chip-1").is_visible()
    alone = downloaded(chat, tmp_path, "alone.png")
    assert networks(alone) == {("teddybear-v2", 0.55)}
    assert "<doodle-v1>" not in alone.prompt and "<teddybear-v2>" in alone.prompt

    # and back from the repository's search box, at full strength
    chat.fill("#chip-search textarea", "doodle drawing")
    chat.press("#chip-search textarea", "Enter")
    chat.wait_for_function(
        "document.querySelector('#chip-found input').value.includes('Doodle drawing v1')", timeout=TIMEOUT
    )
    chat.click("#chip-add")
    wait_for_gallery(chat, 4)
    assert "Teddybear bear v2" in chip_names(chat) and "Doodle drawing v1" in chip_names(chat)
    assert networks(downloaded(chat, tmp_path, "again.png")) == {("teddybear-v2", 0.55), ("doodle-v1", 1.0)}


def test_the_gallery_survives_a_reload_and_an_image_gives_its_settings_back(chat):
    type_into(chat, "#steps input[type=number]", "3")
    type_into(chat, "#seed input", "1234")
    type_into(chat, "#negative textarea", "blurry")
    send(chat, "sneaks shoe v1 on a beach")
    wait_for_gallery(chat, 1)
    type_into(chat, "#seed input", "-1")
    type_into(chat, "#chip-0-strength input[type=number]", "-0.5")
    wait_for_gallery(chat, 2)

    chat.reload()
    chat.wait_for_selector("#chat-input textarea")
    wait_for_gallery(chat, 2)
    assert images_in_gallery(chat) == 2  # this browser's images, and no one else's
    assert not chat.locator("#chip-0").is_visible()  # a new session: nothing composed yet

    chat.locator("#history .thumbnail-item").nth(1).click()  # the older image: seed 1234 at strength 1
    chat.wait_for_function("document.querySelector('#seed input').value === '1234'", timeout=TIMEOUT)
    assert chat.input_value("#negative textarea") == "blurry"
    assert chat.input_value("#steps input[type=number]") == "3"
    assert chat.input_value("#chip-0-strength input[type=number]") == "1"
    assert "Sneaks shoe v1" in chip_names(chat)
    chat.click("#seed-random")
    chat.wait_for_function("document.querySelector('#seed input').value === '-1'", timeout=TIMEOUT)


def test_another_browser_has_its_own_gallery(browser, app_url):  # noqa: F811
    other = browser.new_page()
    try:
        other.goto(app_url)
        other.wait_for_selector("#chat-input textarea")
        other.wait_for_selector("#history")
        other.wait_for_timeout(1_000)  # the gallery's load event has run
        assert images_in_gallery(other) == 0
    finally:
        other.close()
