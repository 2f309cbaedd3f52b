"""The rater tab's library: sign-in by token, the next unvoted pair, votes, and the admin's results.

Which method is on which side is the server's record: every pair shown is held here under its ticket, and a
vote names only the ticket and the choice, so nothing the page sends back can move a method to the other side.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from dataclasses import dataclass

from personalq.access import AttemptLimiter, token_matches
from personalq.config import Settings
from personalq.rating.analysis import results_table
from personalq.rating.items import RatingItem
from personalq.rating.pairs import Pair, PairMaker
from personalq.rating.rounds import Round, current_round, new_round
from personalq.rating.simulate import intent_scores
from personalq.rating.votes import Vote, VoteStore

OPEN_PAIRS = 1000  # pairs shown and not yet voted on that the server remembers; the oldest are forgotten first


class SignInError(PermissionError):
    pass


class PairClosed(LookupError):
    """A vote on a pair the server does not hold open for this rater: voted on already, shown to someone else,
    forgotten (a restart, or too many pairs left open), or a ticket that was never issued."""


@dataclass(frozen=True)
class Rater:
    name: str
    admin: bool = False


class RatingService:
    def __init__(self, settings: Settings, maker: PairMaker, store: VoteStore, items: list[RatingItem] | None = None):
        self.settings = settings
        self.maker = maker
        self.store = store
        self.round = None if items is not None else current_round(settings.home, maker.repository)
        self.items = items if items is not None else self.round.items
        self._askable: list[RatingItem] | None = None
        self._open: OrderedDict[str, tuple[str, Pair]] = OrderedDict()
        self._lock = threading.Lock()
        self.limiter = AttemptLimiter()

    def sign_in(self, token: str, client: str = "local") -> Rater:
        """The rater a token names. Every token is compared in constant time, and ``client`` (the visitor's
        address) may guess wrong only a few times before :class:`~personalq.access.TooManyAttempts`."""
        if not self.settings.rater_tokens and not self.settings.admin_token:
            raise SignInError("no raters are configured: set PERSONALQ_RATER_TOKENS and PERSONALQ_ADMIN_TOKEN")
        self.limiter.check(client)
        token = (token or "").strip()
        if token_matches(token, self.settings.admin_token):  # the setting is a SecretStr: ``==`` never matches it
            return Rater("admin", admin=True)
        names = [name for known, name in self.settings.rater_tokens.items() if token_matches(token, known)]
        if names:
            return Rater(names[0])
        self.limiter.failed(client)
        raise SignInError("unknown token")

    def new_round(self, rater: Rater) -> Round:
        """The admin starts a new rating round: the items are drawn afresh from the repository and pinned."""
        if not rater.admin:
            raise SignInError("only the admin starts a rating round")
        fresh = new_round(self.settings.home, self.maker.repository)
        with self._lock:
            self.round, self.items, self._askable = fresh, fresh.items, None
        return fresh

    def askable(self) -> list[RatingItem]:
        """The items worth a rater's time (see :meth:`PairMaker.askable`), decided on first use: it runs every
        method on every item, too slow for start-up."""
        with self._lock:
            if self._askable is None:
                self._askable = self.maker.askable(self.items)
            return self._askable

    def progress(self, rater: Rater) -> tuple[int, int]:
        asked = {item.id for item in self.askable()}
        return len(self.store.voted_items(rater.name) & asked), len(asked)

    def next_pair(self, rater: Rater) -> Pair | None:
        """The rater's next unvoted item, its sides freshly drawn and held open under the pair's ticket."""
        done = self.store.voted_items(rater.name)
        item = next((i for i in self.askable() if i.id not in done), None)
        if item is None:
            return None
        pair = self.maker.pair(item)
        with self._lock:
            self._open[pair.ticket] = (rater.name, pair)
            forgotten = [self._open.popitem(last=False)[1][1] for _ in range(len(self._open) - OPEN_PAIRS)]
        for old in forgotten:
            self.maker.forget(old)
        return pair

    def vote(self, rater: Rater, ticket: str, choice: str) -> Pair:
        """Record ``choice`` on the pair shown under ``ticket``, sides as the server drew them; returns that pair
        for the reveal."""
        with self._lock:
            held = self._open.get(ticket)
        if held is None or held[0] != rater.name:
            raise PairClosed("this pair is no longer open: show the next pair")
        pair = held[1]
        self.store.add(
            Vote(
                rater.name,
                pair.item.id,
                pair.item.request,
                pair.left.pick.method,
                pair.right.pick.method,
                pair.left.pick.checkpoint_id,
                pair.right.pick.checkpoint_id,
                choice,
            )
        )
        with self._lock:
            self._open.pop(ticket, None)
        self.maker.forget(pair)
        return pair

    def results(self, rater: Rater) -> str:
        if not rater.admin:
            raise SignInError("only the admin sees results")
        votes = self.store.all()
        if not votes:
            return f"{self.round.line()}\n\nNo votes yet." if self.round else "No votes yet."
        identical = sum(1 for item in self.items if self.maker.identical(item))
        unanswered = len(self.items) - len(self.askable()) - identical
        table = results_table(
            votes, intent_scores(self.maker, self.items), (identical, len(self.items)), unanswered=unanswered
        )
        return f"{self.round.line()}\n\n{table}" if self.round else table

    def export_csv(self, rater: Rater) -> str:
        """Every vote as CSV text, for the admin only; where it is kept is the caller's choice (never a folder the
        app serves: the votes name the raters)."""
        if not rater.admin:
            raise SignInError("only the admin exports votes")
        return self.store.csv()
