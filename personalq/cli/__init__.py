"""The ``personalq`` command. Each sub-command group lives in its own module; this one wires them together."""

from __future__ import annotations

import logging

import typer

from personalq.cli import base, bench, checkin, generate, quantize, repo, serve, space, zoo

app = typer.Typer(
    help="PersonalQ: select, quantize and serve personalized diffusion checkpoints.",
    no_args_is_help=True,
    add_completion=False,
)
app.add_typer(repo.app, name="repo")
app.add_typer(zoo.app, name="zoo")
app.add_typer(bench.app, name="bench")
app.add_typer(space.app, name="space")
app.add_typer(base.app, name="base")
app.command("serve")(serve.serve)
app.command("checkin")(checkin.checkin)
app.command("quantize")(quantize.quantize)
app.command("generate")(generate.generate)


def configure_logging(verbose: bool = False) -> None:
    logging.basicConfig(level=logging.DEBUG if verbose else logging.INFO, format="%(levelname)s %(name)s: %(message)s")
    for noisy in ("alembic", "httpx", "chromadb", "sentence_transformers", "bm25s", "urllib3"):
        logging.getLogger(noisy).setLevel(logging.WARNING)
    for chatty in ("diffusers", "transformers"):  # warn about BERT-as-CLIP and adapter prefixes on every call
        logging.getLogger(chatty).setLevel(logging.ERROR)


def main() -> None:
    configure_logging()
    app()
