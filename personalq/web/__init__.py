"""What the web server adds around Gradio: bounds on requests and uploads, one-time downloads, a fair queue.

Each piece is plain ASGI or a small hook on Gradio's queue, installed by :func:`personalq.ui.app.launch`."""
