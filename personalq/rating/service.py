"""The rater tab's library: sign-in by token, the next unvoted pair, votes, and the admin's results."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from personalq.config import Settings
from personalq.rating.analysis import results_table
from personalq.rating.items import RatingItem, all_items
from personalq.rating.pairs import Pair, PairMaker
from personalq.rating.simulate import intent_scores
from personalq.rating.votes import Vote, VoteStore


class SignInError(PermissionError):
    pass


@dataclass(frozen=True)
class Rater:
    name: str
    admin: bool = False


class RatingService:
    def __init__(self, settings: Settings, maker: PairMaker, store: VoteStore, items: list[RatingItem] | None = None):
        self.settings = settings
        self.maker = maker
        self.store = store
        self.items = items if items is not None else all_items(maker.repository)

    def sign_in(self, token: str) -> Rater:
        token = (token or "").strip()
        if self.settings.admin_token and token == self.settings.admin_token:
            return Rater("admin", admin=True)
        if token in self.settings.rater_tokens:
            return Rater(self.settings.rater_tokens[token])
        if not self.settings.rater_tokens and not self.settings.admin_token:
            raise SignInError("no raters are configured: set PERSONALQ_RATER_TOKENS and PERSONALQ_ADMIN_TOKEN")
        raise SignInError("unknown token")

    def progress(self, rater: Rater) -> tuple[int, int]:
        return len(self.store.voted_items(rater.name)), len(self.items)

    def next_pair(self, rater: Rater) -> Pair | None:
        done = self.store.voted_items(rater.name)
        item = next((i for i in self.items if i.id not in done), None)
        return None if item is None else self.maker.pair(item, rater.name)

    def vote(self, rater: Rater, pair: Pair, choice: str) -> Vote:
        vote = Vote(rater.name, pair.item.id, pair.item.request, pair.left.pick.method, pair.right.pick.method,
                    pair.left.pick.checkpoint_id, pair.right.pick.checkpoint_id, choice)
        self.store.add(vote)
        return vote

    def results(self, rater: Rater) -> str:
        if not rater.admin:
            raise SignInError("only the admin sees results")
        votes = self.store.all()
        if not votes:
            return "No votes yet."
        return results_table(votes, intent_scores(self.maker, self.items))

    def export_csv(self, rater: Rater, folder: Path) -> Path:
        if not rater.admin:
            raise SignInError("only the admin exports votes")
        path = Path(folder) / "preference-votes.csv"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(self.store.csv())
        return path
