"""Entry point of the PersonalQ Hugging Face Space (copied to the Space's root by ``personalq space build``).

A Space is public: it listens on 0.0.0.0, so the web app's writes (import, remove, reindex, memory budget) need
the admin token, set as the Space secret ``PERSONALQ_ADMIN_TOKEN``; without it they stay disabled. The home
defaults to the Space's persistent storage (``/data``) when it is attached, so the repository survives restarts.
"""

import os
from pathlib import Path

PERSISTENT = Path("/data")

if __name__ == "__main__":
    if PERSISTENT.is_dir() and os.access(PERSISTENT, os.W_OK):
        os.environ.setdefault("PERSONALQ_HOME", str(PERSISTENT / "personalq"))
    from personalq.cli import configure_logging
    from personalq.config import load_settings
    from personalq.runtime import start
    from personalq.ui.app import launch

    configure_logging()
    launch(
        start(load_settings()),
        host=os.environ.get("GRADIO_SERVER_NAME", "0.0.0.0"),
        port=int(os.environ.get("GRADIO_SERVER_PORT", "7860")),
    )
