"""Append-only vote records in SQLite: one per rater and item, never updated or deleted.

The database enforces it (migration 0006 refuses UPDATE and DELETE on ``preference_votes``). Rating owns the table
(:mod:`personalq.rating.tables`) and its queries, here, through the sessionmaker the repository exposes
(``Repository.sessions``; its ``begin()`` is the write transaction that takes SQLite's write lock up front).
"""

from __future__ import annotations

import csv
import datetime as dt
import io
from dataclasses import dataclass
from typing import Literal

from sqlalchemy import select
from sqlalchemy.exc import IntegrityError

from personalq.rating.tables import PreferenceVote
from personalq.repository.service import Repository

Choice = Literal["left", "right", "tie", "both_bad"]
CHOICES: tuple[Choice, ...] = ("left", "right", "tie", "both_bad")
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")  # what spreadsheets read as the start of a formula


class AlreadyVoted(ValueError):
    """A rater voting a second time on the same item."""


@dataclass(frozen=True)
class Vote:
    rater: str
    item_id: str
    prompt: str
    method_left: str
    method_right: str
    checkpoint_left: str | None
    checkpoint_right: str | None
    choice: Choice
    created_at: dt.datetime | None = None

    def winner(self) -> str | None:
        return {"left": self.method_left, "right": self.method_right}.get(self.choice)


class VoteStore:
    def __init__(self, repository: Repository):
        self.sessions = repository.sessions

    def add(self, vote: Vote) -> None:
        if vote.choice not in CHOICES:
            raise ValueError(f"choice must be one of {', '.join(CHOICES)}, not {vote.choice!r}")
        row = PreferenceVote(
            rater=vote.rater,
            created_at=dt.datetime.now(),
            item_id=vote.item_id,
            prompt=vote.prompt,
            method_left=vote.method_left,
            method_right=vote.method_right,
            checkpoint_left=vote.checkpoint_left,
            checkpoint_right=vote.checkpoint_right,
            choice=vote.choice,
        )
        try:
            with self.sessions.begin() as session:
                session.add(row)
        except IntegrityError as error:
            raise AlreadyVoted(f"{vote.rater} has already voted on item {vote.item_id}") from error

    def voted_items(self, rater: str) -> set[str]:
        with self.sessions() as session:
            return set(session.scalars(select(PreferenceVote.item_id).where(PreferenceVote.rater == rater)))

    def all(self) -> list[Vote]:
        with self.sessions() as session:
            rows = session.scalars(select(PreferenceVote).order_by(PreferenceVote.id)).all()
            return [
                Vote(
                    r.rater,
                    r.item_id,
                    r.prompt,
                    r.method_left,
                    r.method_right,
                    r.checkpoint_left,
                    r.checkpoint_right,
                    r.choice,
                    r.created_at,
                )
                for r in rows
            ]

    def csv(self) -> str:
        out = io.StringIO()
        writer = csv.writer(out)
        writer.writerow(
            [
                "rater",
                "created_at",
                "item_id",
                "prompt",
                "method_left",
                "method_right",
                "checkpoint_left",
                "checkpoint_right",
                "choice",
            ]
        )
        for v in self.all():
            created = v.created_at.isoformat() if v.created_at else ""
            cells = (
                v.rater,
                created,
                v.item_id,
                v.prompt,
                v.method_left,
                v.method_right,
                v.checkpoint_left or "",
                v.checkpoint_right or "",
                v.choice,
            )
            writer.writerow([_cell(cell) for cell in cells])
        return out.getvalue()


def _cell(value: str) -> str:
    """A cell a spreadsheet shows as text: rater names, prompts and ids come from outside, and a leading ``=``
    (or ``+ - @``) would run as a formula when the admin opens the export (CSV injection); a quote defuses it."""
    return f"'{value}" if value.startswith(FORMULA_STARTS) else value
