"""``personalq checkin``: pick the checkpoints a request means (DESIGN.md contract); ``--json`` lists the set with
their weights and the negative prompt the request gave."""

from __future__ import annotations

import datetime as dt
import json
from typing import Annotated, Optional

import typer

from personalq.cli.common import HomeOption, fail, settings_for


def checkin(
    query: Annotated[
        Optional[str], typer.Argument(help="what you want, e.g. 'the April dog model on a beach'")
    ] = None,
    now: Annotated[
        Optional[str], typer.Option(help="reference date YYYY-MM-DD for 'yesterday', 'April' (default: today)")
    ] = None,
    session: Annotated[Optional[str], typer.Option(help="continue this session (with --answer)")] = None,
    answer: Annotated[Optional[str], typer.Option(help="answer to the session's clarification question")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="print one JSON object")] = False,
    home: HomeOption = None,
) -> None:
    """Select a checkpoint, ask one clarification question, or say that nothing matches."""
    from personalq.checkin.agent import InvalidRequest
    from personalq.checkin.backends import make_checkin
    from personalq.checkin.sessions import SessionNotFound

    settings = settings_for(home)
    agent = make_checkin(settings)
    try:
        if session:
            if not answer:
                fail("--session needs --answer")
            result = agent.answer(session, answer)
        elif query:
            reference = dt.datetime.fromisoformat(now) if now else None
            result = agent.ask(query, reference)
        else:
            fail("give a QUERY, or --session ID --answer TEXT")
    except (InvalidRequest, SessionNotFound) as exc:
        fail(str(exc))
    except ValueError as exc:
        fail(f"bad --now value: {exc}")
    if as_json:
        typer.echo(json.dumps(result.contract()))
        return
    if result.status == "selected":
        card = agent.repository.get(result.checkpoint_id)
        typer.echo(
            f"selected {card.id}: {card.name} (version {card.version or '-'}, created {card.created_at:%Y-%m-%d})"
        )
        if len(result.checkpoints) > 1 or any(c.weight != 1 for c in result.checkpoints):
            typer.echo("checkpoints: " + ", ".join(f"{c.checkpoint_id} at {c.weight:g}" for c in result.checkpoints))
        typer.echo(f"prompt: {result.prompt}")
        if result.negative_prompt:
            typer.echo(f"negative prompt: {result.negative_prompt}")
    elif result.status == "clarify":
        typer.echo(result.question)
        for option in result.options:
            typer.echo(f"  - {option.label}")
        typer.echo(f'answer with: personalq checkin --session {result.session} --answer "..."')
    else:
        typer.echo(f"no match: {result.reason}")
        for alt in result.alternatives:
            typer.echo(f"  nearest: {alt.checkpoint_id} ({alt.name}, {alt.created_at:%Y-%m-%d})")
