"""``personalq generate``: a request to an image, with Check-in and generation exactly as the chat runs them.

Exit status: 0 an image was written; 3 Check-in asks a question (the options are printed numbered: answer with
``--pick N``); 4 nothing matches (the nearest checkpoints are printed numbered, ``--pick N`` uses one); 1 the
checkpoint cannot be generated (its base is not configured or does not fit, the memory budget is too small).
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Annotated, Optional

import typer

from personalq.cli.common import HomeOption, fail, settings_for

ASKS = 3
NO_MATCH = 4


def _size(text: str | None) -> tuple[int, int] | None:
    """``"512"`` or ``"768x512"`` (width x height)."""
    if not text:
        return None
    parts = text.lower().replace(" ", "").split("x")
    try:
        numbers = [int(p) for p in parts]
    except ValueError:
        fail(f"--size: expected 512 or WIDTHxHEIGHT, got {text!r}")
    if len(numbers) not in (1, 2):
        fail(f"--size: expected 512 or WIDTHxHEIGHT, got {text!r}")
    return (numbers[0], numbers[-1])


def _emit(as_json: bool, fields: dict, lines: list[str]) -> None:
    if as_json:
        typer.echo(json.dumps(fields))
    else:
        for line in lines:
            typer.echo(line)


def generate(
    request: Annotated[str, typer.Argument(help="what you want, e.g. 'a lighthouse with my big pixel lora'")],
    precision: Annotated[str, typer.Option(help="FP32 | W8A8 | W4A8 | W8A4 | W4A4")] = "FP32",
    trigger_aware: Annotated[
        bool, typer.Option("--trigger-aware/--no-trigger-aware", help="keep the trigger's cross-attention in float")
    ] = True,
    seed: Annotated[int, typer.Option(help="noise seed")] = 0,
    steps: Annotated[int, typer.Option(help="denoising steps")] = 20,
    guidance: Annotated[float, typer.Option(help="classifier-free guidance scale")] = 5.0,
    size: Annotated[
        Optional[str], typer.Option(help="512 or WIDTHxHEIGHT; default the base's own (512 for SD 1.5)")
    ] = None,
    out: Annotated[
        Optional[Path], typer.Option(help="the PNG to write; default CHECKPOINT-sSEED-PRECISION.png here")
    ] = None,
    pick: Annotated[
        Optional[int], typer.Option(min=1, help="answer Check-in's question (or take a nearest checkpoint): option N")
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="print one JSON object")] = False,
    home: HomeOption = None,
) -> None:
    """Pick the checkpoint the request means, rewrite the prompt with its trigger, and generate the image."""
    from pydantic import ValidationError
    from tqdm.auto import tqdm

    from personalq.checkin.agent import InvalidRequest
    from personalq.checkin.backends import make_checkin
    from personalq.conversation import ChatState, Conversation
    from personalq.runtime import start
    from personalq.serving.cache import BudgetError
    from personalq.serving.checkpoints import CheckpointLoadError
    from personalq.serving.engine import Engine
    from personalq.serving.float_type import type_name
    from personalq.serving.generation import GenerationParams
    from personalq.serving.variants import PRECISIONS

    if precision not in PRECISIONS:
        fail(f"--precision: choose one of {', '.join(PRECISIONS)}")
    settings = settings_for(home)
    runtime = start(settings)
    conversation, state = Conversation(make_checkin(settings), runtime.repository), ChatState()
    try:
        turn = conversation.reply(request, state)
        if turn.status != "selected" and pick is not None:
            if pick > len(turn.options):
                fail(f"--pick {pick}: there are {len(turn.options)} options")
            turn = conversation.reply(turn.options[pick - 1], state)
    except InvalidRequest as error:
        fail(str(error))
    if turn.status == "clarify":
        numbered = [f"  {i}. {option}" for i, option in enumerate(turn.options, 1)]
        _emit(
            as_json,
            {"status": "clarify", "question": turn.text, "options": turn.options},
            [turn.text, *numbered, "answer with --pick N"],
        )
        raise typer.Exit(ASKS)
    if turn.status != "selected":
        nearest = [{"checkpoint": cid, "option": label} for label, cid in state.offered.items()]
        numbered = [f"  {i}. {n['checkpoint']}: {n['option']}" for i, n in enumerate(nearest, 1)]
        _emit(
            as_json,
            {"status": "no_match", "reason": turn.text, "nearest": nearest},
            [turn.text, *numbered, *(["use one with --pick N"] if nearest else [])],
        )
        raise typer.Exit(NO_MATCH)

    card, prompt = turn.checkpoint, turn.prompt
    if not as_json:
        typer.echo(f"checkpoint: {card.id} ({card.name}, {card.kind}, base {card.base_model})")
        typer.echo(f"prompt: {prompt}")
    engine = Engine(settings)
    try:
        side = _size(size) or (engine.native_size(card),) * 2
        params = GenerationParams(steps=steps, guidance=guidance, seed=seed, width=side[0], height=side[1])
    except ValidationError as error:
        fail("; ".join(f"--{e['loc'][0]}: {e['msg']}" for e in error.errors()))
    except CheckpointLoadError as error:
        fail(str(error))
    out = out or Path(f"{card.id}-s{seed}-{precision}.png")
    image, started = None, time.perf_counter()
    try:
        if not engine.variant_is_stored(card, precision, trigger_aware):
            typer.echo(f"preparing {precision} for {card.id} (first use; stored for next time)", err=True)
        with tqdm(total=steps, desc="denoising", unit="step", leave=False) as bar:
            for frame in engine.generate(card, prompt, precision, trigger_aware, params, previews=False):
                bar.update(frame.step - bar.n)
                image = frame.image if frame.final else image
    except (BudgetError, CheckpointLoadError) as error:
        fail(f"could not generate: {error}")
    out.parent.mkdir(parents=True, exist_ok=True)
    image.save(out)
    conversation.record_use(card)
    seconds = time.perf_counter() - started
    base = engine.base_location(card)
    float_line = engine.float_line(base)
    _emit(
        as_json,
        {
            "status": "selected",
            "checkpoint": card.id,
            "name": card.name,
            "prompt": prompt,
            "precision": precision,
            "kernels": None if precision == "FP32" else engine.kernels.describe(),
            "float_type": type_name(engine.float_dtype(base)),
            "trigger_aware": trigger_aware,
            "size": [params.width, params.height],
            "seconds": round(seconds, 3),
            "image": str(out),
        },
        [
            f"image: {out} ({params.width}x{params.height}, {precision}, {seconds:.1f} s)",
            *([] if precision == "FP32" else [f"quantized layers: {engine.kernels.describe()}"]),
            *([float_line] if float_line else []),
        ],
    )
