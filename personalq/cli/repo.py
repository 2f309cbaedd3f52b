"""``personalq repo``: import, list, show, remove and reindex checkpoints."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path
from typing import Annotated, Optional

import typer
from tqdm import tqdm

from personalq.cli.common import HomeOption, fail, settings_for
from personalq.repository.overrides import CardEdit, InvalidEdit
from personalq.repository.service import CheckpointFilter, CheckpointNotFound, Repository

app = typer.Typer(help="Manage the checkpoint repository.", no_args_is_help=True)


def _date(value: str | None, end: bool = False) -> dt.datetime | None:
    if value is None:
        return None
    try:
        parsed = dt.datetime.fromisoformat(value)
    except ValueError:
        fail(f"not a date: {value!r} (use YYYY-MM-DD)")
    return parsed.replace(hour=23, minute=59, second=59) if end and len(value) <= 10 else parsed


@app.command("import")
def import_(
    paths: Annotated[list[Path], typer.Argument(help="card files, model files or folders")],
    replace: Annotated[
        bool, typer.Option("--replace", help="overwrite checkpoints whose id or weights exist with other content")
    ] = False,
    home: HomeOption = None,
) -> None:
    """Import checkpoints; prints one line per file and a summary. Exit code 1 when any file failed (a copy of
    weights already imported is reported as "duplicate of ID" and is no failure)."""
    repository = Repository(settings_for(home))
    with tqdm(desc="reading", unit=" entries", leave=False) as bar:
        report = repository.import_paths(paths, replace=replace, on_entry=lambda _entry: bar.update(1))
    for outcome in report.outcomes:
        colour = {"error": typer.colors.RED, "skipped": typer.colors.YELLOW}.get(outcome.status)
        ident = f" {outcome.checkpoint_id}" if outcome.checkpoint_id else ""
        typer.secho(f"{outcome.status:9}{ident}  {_shown(outcome.path)}  {outcome.message}", fg=colour)
    rate = len([o for o in report.outcomes if o.status in ("imported", "updated")]) / max(report.seconds, 1e-9)
    typer.echo(f"{report.summary()} in {report.seconds:.2f}s ({rate:.{1 if rate < 10 else 0}f} checkpoints/s)")
    if not report.ok:
        raise typer.Exit(1)


def _shown(path: str) -> str:
    """A path as the person typed it: relative to the current folder when inside it (stored paths are absolute)."""
    absolute = Path(path)
    return str(absolute.relative_to(Path.cwd())) if absolute.is_relative_to(Path.cwd()) else path


@app.command("list")
def list_(
    family: Annotated[Optional[str], typer.Option(help="only this family")] = None,
    style: Annotated[Optional[str], typer.Option(help="only checkpoints with this style")] = None,
    kind: Annotated[Optional[str], typer.Option(help="lora | dreambooth | textual_inversion | checkpoint")] = None,
    creator: Annotated[
        Optional[str], typer.Option(help="only checkpoints by this creator (Civitai user, modelspec.author)")
    ] = None,
    base: Annotated[
        Optional[str],
        typer.Option(help="only checkpoints for this base: a key (sd-1.5, sdxl, pony) or Civitai's name ('SD 1.5')"),
    ] = None,
    since: Annotated[Optional[str], typer.Option(help="created on or after YYYY-MM-DD")] = None,
    until: Annotated[Optional[str], typer.Option(help="created on or before YYYY-MM-DD")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="print a JSON array")] = False,
    home: HomeOption = None,
) -> None:
    """One checkpoint per line (id, name, family, version, kind, created, trigger, base), grouped by family and
    ordered by version."""
    filters = CheckpointFilter(
        family=family,
        style=style,
        kind=kind,
        creator=creator,
        base_model=base,
        since=_date(since),
        until=_date(until, end=True),
    )
    checkpoints = Repository(settings_for(home)).list(filters)
    if as_json:
        typer.echo(json.dumps([c.model_dump(mode="json") for c in checkpoints], indent=1))
        return
    for c in checkpoints:
        trigger = c.canonical_trigger or "-"
        typer.echo(
            f"{c.id}\t{c.name}\t{c.family}\t{c.version or '-'}\t{c.kind}\t{c.created_at:%Y-%m-%d}\t{trigger}\t"
            f"{c.base_model}"
        )


def _words(values: list[str] | None) -> list[str] | None:
    """A repeatable option: None when not given (the field is left as it is); ``--style ""`` empties the list."""
    return None if values is None else [v for v in values if v.strip()]


@app.command("edit")
def edit(
    checkpoint_id: str,
    name: Annotated[Optional[str], typer.Option("--name", help="display name")] = None,
    trigger: Annotated[
        Optional[list[str]], typer.Option("--trigger", help="repeatable: replaces the triggers, in this order")
    ] = None,
    add_trigger: Annotated[list[str], typer.Option("--add-trigger", help="repeatable: appended")] = [],
    remove_trigger: Annotated[list[str], typer.Option("--remove-trigger", help="repeatable: dropped")] = [],
    style: Annotated[Optional[list[str]], typer.Option("--style", help="repeatable: replaces the styles")] = None,
    subject: Annotated[
        Optional[list[str]], typer.Option("--subject", help="repeatable: replaces the subjects")
    ] = None,
    tag: Annotated[Optional[list[str]], typer.Option("--tag", help="repeatable: replaces the tags")] = None,
    base: Annotated[Optional[str], typer.Option("--base", help="base model: a key (sd-1.5, sdxl) or a name")] = None,
    reset: Annotated[bool, typer.Option("--reset", help="drop earlier edits first (back to the files)")] = False,
    home: HomeOption = None,
) -> None:
    """Correct a checkpoint's card. The edit is kept as your override: re-importing the file keeps it, and
    Check-in uses it at once. Repeatable options replace the whole list (--style "" empties it)."""
    change = CardEdit(
        name=name,
        triggers=_words(trigger),
        add_triggers=add_trigger,
        remove_triggers=remove_trigger,
        styles=_words(style),
        subjects=_words(subject),
        tags=_words(tag),
        base_model=base,
        reset=reset,
    )
    try:
        card = Repository(settings_for(home)).edit(checkpoint_id, change)
    except (CheckpointNotFound, InvalidEdit) as exc:
        fail(str(exc))
    edited = ", ".join(card.edited) or "nothing (as the files say)"
    typer.echo(f"edited {card.id} ({card.name}): {edited}")
    triggers, styles = ", ".join(card.triggers) or "-", ", ".join(card.styles) or "-"
    typer.echo(f"  triggers: {triggers}; styles: {styles}; base {card.base_model}")


@app.command("duplicates")
def duplicates(
    as_json: Annotated[bool, typer.Option("--json", help="print a JSON array")] = False, home: HomeOption = None
) -> None:
    """Checkpoints found at more than one path (identical weights): the checkpoint's own file, then each copy."""
    found = Repository(settings_for(home)).duplicates()
    if as_json:
        typer.echo(json.dumps([vars(d) for d in found], indent=1))
        return
    for d in found:
        typer.echo(f"{d.checkpoint_id}\t{d.name}\t{d.weights_path}")
        for copy in d.copies:
            typer.echo(f"  copy\t{copy}")
    if not found:
        typer.echo("no duplicates")


@app.command("show")
def show(checkpoint_id: str, home: HomeOption = None) -> None:
    """Every field of one checkpoint, as JSON."""
    try:
        checkpoint = Repository(settings_for(home)).get(checkpoint_id)
    except CheckpointNotFound as exc:
        fail(str(exc))
    typer.echo(json.dumps(checkpoint.model_dump(mode="json"), indent=2))


@app.command("remove")
def remove(checkpoint_id: str, home: HomeOption = None) -> None:
    """Remove a checkpoint from the repository (its files are left where they are)."""
    try:
        removed = Repository(settings_for(home)).remove(checkpoint_id)
    except CheckpointNotFound as exc:
        fail(str(exc))
    typer.echo(f"removed {removed.id} ({removed.name})")


@app.command("reindex")
def reindex(
    rebuild: Annotated[
        bool, typer.Option("--rebuild", help="drop the dense index and embed every card again")
    ] = False,
    home: HomeOption = None,
) -> None:
    """Bring the Chroma index in line with the database."""
    report = Repository(settings_for(home)).sync_index(rebuild=rebuild)
    typer.echo(
        f"added {report.added}, updated {report.updated}, removed {report.removed}, rebuilt {report.rebuilt} "
        f"in {report.seconds:.2f}s"
    )
