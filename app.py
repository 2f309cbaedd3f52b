"""Entry point of the web app and of the Hugging Face Space: ``python app.py``."""

import os

from personalq.cli import configure_logging
from personalq.config import load_settings
from personalq.runtime import start
from personalq.ui.app import build_app

if __name__ == "__main__":
    configure_logging()
    runtime = start(load_settings())
    build_app(runtime).queue(default_concurrency_limit=4).launch(
        server_name=os.environ.get("GRADIO_SERVER_NAME", "127.0.0.1"),
        server_port=int(os.environ.get("GRADIO_SERVER_PORT", "7860")),
    )
