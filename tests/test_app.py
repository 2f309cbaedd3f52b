"""The app starts on a repository, serves its page, and imports the bundled demo on first start."""

import socket

import httpx
from gradio_client import Client

from personalq.runtime import start
from personalq.ui.app import build_app


def test_app_serves_the_repository_page(settings, tmp_path):
    from factories import write_card

    write_card(tmp_path / "cards", "bear-v4", name="Teddy bear v4")
    runtime = start(settings, import_demo=False)
    runtime.repository.import_paths([tmp_path / "cards"])
    app = build_app(runtime)
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    app.queue().launch(prevent_thread_lock=True, server_name="127.0.0.1", server_port=port, quiet=True)
    try:
        page = httpx.get(app.local_url, timeout=30)
        assert page.status_code == 200 and "PersonalQ" in page.text
        # the page's Repository tab lists what the repository holds, through the same endpoint the page calls
        client = Client(app.local_url, verbose=False)
        table, _gallery, count = client.predict("", "", "", api_name="/browse")
        assert count == "1 checkpoints"
        assert [row[1:3] for row in table["data"]] == [["bear-v4", "Teddy bear v4"]]  # after the thumbnail
        assert client.predict("teddy", "", "", api_name="/browse")[2] == "1 checkpoints"
        assert client.predict("corgi", "", "", api_name="/browse")[2] == "0 checkpoints"
    finally:
        app.close()


def test_first_start_imports_the_bundled_demo(settings, tmp_path):
    from factories import write_card

    demo = tmp_path / "assets"
    write_card(demo / "zoo" / "repository", "demo-v1")
    settings.assets_dir = demo
    runtime = start(settings)
    assert runtime.demo_import is not None and runtime.repository.count() == 1
    assert start(settings).demo_import is None  # only on the first start
