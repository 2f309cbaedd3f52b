"""Entry point of the web app and of the Hugging Face Space: ``python app.py``."""

import os

from personalq.cli import configure_logging
from personalq.config import load_settings
from personalq.runtime import start
from personalq.ui.app import launch

if __name__ == "__main__":
    configure_logging()
    launch(
        start(load_settings()),
        host=os.environ.get("GRADIO_SERVER_NAME", "127.0.0.1"),
        port=int(os.environ.get("GRADIO_SERVER_PORT", "7860")),
    )
