"""A rating round: the set of items raters judge, pinned when the round starts.

Items are drawn from the repository's cards, so an import would otherwise change the set under the raters' feet
(dropped items' votes stop counting toward progress, new ones appear unannounced). The round's items are kept in
the home (``rating-round.json``, never served) and read back at every start; the admin starts a new round on
purpose, and the results say which round they are of.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import json
import logging
from dataclasses import dataclass
from pathlib import Path

from personalq.rating.items import RatingItem, all_items
from personalq.repository.service import Repository

log = logging.getLogger(__name__)
FILE = "rating-round.json"


@dataclass(frozen=True)
class Round:
    number: int
    started: str  # ISO date
    items: list[RatingItem]

    def line(self) -> str:
        return f"Round {self.number}: {len(self.items)} items, pinned on {self.started}"


def current_round(home: Path, repository: Repository) -> Round:
    """The pinned round, or round 1 drawn from the repository now and pinned."""
    path = Path(home) / FILE
    if path.is_file():
        try:
            data = json.loads(path.read_text())
            return Round(data["number"], data["started"], [RatingItem(**item) for item in data["items"]])
        except (ValueError, KeyError, TypeError) as error:  # a damaged file: start over rather than stop rating
            log.warning("%s is unreadable (%s): starting a new rating round", path, error)
    return new_round(home, repository, number=1)


def new_round(home: Path, repository: Repository, number: int | None = None) -> Round:
    """Draw the items afresh from the repository and pin them as the next round."""
    path = Path(home) / FILE
    if number is None:
        number = current_round(home, repository).number + 1 if path.is_file() else 1
    pinned = Round(number, dt.date.today().isoformat(), all_items(repository))
    body = {"number": pinned.number, "started": pinned.started, "items": [dataclasses.asdict(i) for i in pinned.items]}
    partial = path.with_suffix(".part")
    partial.write_text(json.dumps(body, indent=1))
    partial.replace(path)
    return pinned


__all__ = ["Round", "current_round", "new_round"]
