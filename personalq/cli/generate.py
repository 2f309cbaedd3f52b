"""``personalq generate``: a request to an image, with Check-in and generation exactly as the chat runs them.

Check-in selects the checkpoints (several, each at a weight, when the request combines them); ``--lora ID[:WEIGHT]``
sets one's weight or adds one (:mod:`personalq.cli.lora_option`), ``--negative`` replaces the negative prompt
Check-in read from the request. The PNG carries how it was made in the WebUI's ``parameters`` chunk, so the
WebUI's PNG Info, ComfyUI and Civitai read it.

Exit status: 0 an image was written; 3 Check-in asks a question (the options are printed numbered: answer with
``--pick N``); 4 nothing matches (the nearest checkpoints are printed numbered, ``--pick N`` uses one); 1 the
checkpoint cannot be generated (its base is not configured or does not fit, the memory budget is too small).
"""

from __future__ import annotations

import json
import secrets
import time
from pathlib import Path
from typing import Annotated, Optional

import typer

from personalq.cli.common import HomeOption, fail, settings_for

ASKS = 3
NO_MATCH = 4
RANDOM_SEED = -1
SEEDS = 2**32  # what a torch generator's seed and the WebUI's Seed field hold


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
    lora: Annotated[
        Optional[list[str]],
        typer.Option(
            "--lora",
            help="ID[:WEIGHT]: set the weight of a checkpoint Check-in selected, or add one (repeatable; "
            "weights -2 to 2, an added one 1 by default)",
            show_default=False,
        ),
    ] = None,
    negative: Annotated[
        Optional[str],
        typer.Option(help="negative prompt; default the one the request gave ('..., negative: blurry')"),
    ] = None,
    seed: Annotated[int, typer.Option(min=RANDOM_SEED, max=SEEDS - 1, help="noise seed; -1 draws one")] = 0,
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
    """Pick the checkpoints the request means, rewrite the prompt with their triggers, and generate the image."""
    from pydantic import ValidationError
    from tqdm.auto import tqdm

    from personalq.checkin.agent import InvalidRequest
    from personalq.checkin.backends import make_checkin
    from personalq.cli.lora_option import LoraOptionError, adjusted, parse_lora
    from personalq.conversation import ChatState, Conversation
    from personalq.runtime import start
    from personalq.serving.cache import BudgetError
    from personalq.serving.checkpoints import CheckpointLoadError
    from personalq.serving.composition import Composition
    from personalq.serving.engine import Engine
    from personalq.serving.float_type import type_name
    from personalq.serving.generation import GenerationParams
    from personalq.serving.png_parameters import save_png
    from personalq.serving.variants import PRECISIONS

    if precision not in PRECISIONS:
        fail(f"--precision: choose one of {', '.join(PRECISIONS)}")
    try:
        loras = [parse_lora(entry) for entry in lora or []]
    except LoraOptionError as error:
        fail(str(error))
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
    selected, prompt, negative_prompt = turn.uses, turn.prompt, turn.negative_prompt
    if turn.status == "no_match" and loras:  # the checkpoints are named on the command line
        selected, prompt, negative_prompt = [], request, ""
    elif turn.status != "selected":
        nearest = [{"checkpoint": cid, "option": label} for label, cid in state.offered.items()]
        numbered = [f"  {i}. {n['checkpoint']}: {n['option']}" for i, n in enumerate(nearest, 1)]
        _emit(
            as_json,
            {"status": "no_match", "reason": turn.text, "nearest": nearest},
            [turn.text, *numbered, *(["use one with --pick N"] if nearest else [])],
        )
        raise typer.Exit(NO_MATCH)

    try:
        uses, prompt = adjusted(selected, prompt, loras, runtime.repository)
        composition = Composition.of(uses)
    except (LoraOptionError, CheckpointLoadError) as error:
        fail(str(error))
    negative_prompt = negative_prompt if negative is None else negative
    seed = secrets.randbelow(SEEDS) if seed == RANDOM_SEED else seed
    anchor = composition.anchor
    if not as_json:
        for use in uses:
            card = use.checkpoint
            typer.echo(
                f"checkpoint: {card.id} ({card.name}, {card.kind}, base {card.base_model}) at weight {use.weight:g}"
            )
        typer.echo(f"prompt: {prompt}")
        if negative_prompt:
            typer.echo(f"negative prompt: {negative_prompt}")
        typer.echo(f"seed: {seed}")
    engine = Engine(settings)
    try:
        side = _size(size) or (engine.native_size(uses),) * 2
        params = GenerationParams(
            steps=steps,
            guidance=guidance,
            seed=seed,
            width=side[0],
            height=side[1],
            negative_prompt=negative_prompt,
        )
    except ValidationError as error:
        fail("; ".join(f"--{e['loc'][0]}: {e['msg']}" for e in error.errors()))
    except CheckpointLoadError as error:
        fail(str(error))
    out = out or Path(f"{anchor.id}-s{seed}-{precision}.png")
    image, started = None, time.perf_counter()
    try:
        if not engine.variant_is_stored(uses, precision, trigger_aware):
            typer.echo(f"preparing {precision} for {anchor.id} (first use; stored for next time)", err=True)
        with tqdm(total=steps, desc="denoising", unit="step", leave=False) as bar:
            for frame in engine.generate(uses, prompt, precision, trigger_aware, params, previews=False):
                bar.update(frame.step - bar.n)
                image = frame.image if frame.final else image
    except (BudgetError, CheckpointLoadError) as error:
        fail(f"could not generate: {error}")
    out.parent.mkdir(parents=True, exist_ok=True)
    save_png(image, out, engine.image_parameters(uses, prompt, params))
    for use in uses:
        conversation.record_use(use.checkpoint)
    seconds = time.perf_counter() - started
    base = engine.base_location(anchor)
    float_line = engine.float_line(base)
    _emit(
        as_json,
        {
            "status": "selected",
            "checkpoint": uses[0].id,
            "name": uses[0].checkpoint.name,
            "checkpoints": [{"checkpoint_id": use.id, "weight": use.weight} for use in uses],
            "prompt": prompt,
            "negative_prompt": negative_prompt,
            "seed": seed,
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
