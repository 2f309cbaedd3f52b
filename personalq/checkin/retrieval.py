"""Candidates for a request: every checkpoint its reference words point at, with the evidence for each.

The repository's cards are held in a :class:`~personalq.checkin.evidence.SelectionIndex` rebuilt when the card
revision moves, so a request costs a few inverted-index look-ups rather than a text search whose ranking the
picture's words would steer ("a lighthouse ... with Big Pixel Style" is about Big Pixel Style). A request that
names no checkpoint at all but a time ("the lora I got last week", "my newest model") gets every checkpoint
inside its windows instead.
"""

from __future__ import annotations

import datetime as dt
import gc
import re
import threading
from collections import defaultdict
from dataclasses import dataclass

import numpy as np

from personalq.checkin import titles
from personalq.checkin.evidence import Evidence, QueryWord, SelectionIndex, card_fields, model_name
from personalq.checkin.intent import Intent
from personalq.checkin.reference import ANYONE, ROLE_NOUNS, Reference
from personalq.checkin.tokens import field_tokens, is_english, is_unspaced, is_word
from personalq.repository.revision import Revision
from personalq.repository.service import Repository, StoredCheckpoint

WINDOW_LIMIT = 400
FULL_COVERAGE = 0.98  # of a phrase's weight: every word found, some in a weaker field
HEAD_COVERAGE = 0.5  # of the words a request opens with, for them to be taken as the name (reasoning's MIN_COVERAGE)
UNSPACED_SERIES_COVERAGE = 0.8
NAME_RARITY = 0.5  # of the rarest word's idf: a head word this rare is a name, not a role ("girl", "singer")
SPELLED_BY_MANY = 3  # models spelling a clause whole that make it a kind of model, not a name, beside one spelled once
CALLED_AMONG = 20  # candidates read for whether one is called by the words a request opens with
SHORT_HEAD = 3  # words: an opening this short with a word no card has names a model we do not have ("goku")


@dataclass
class Ranked:
    """One candidate and its evidence (see :mod:`personalq.checkin.evidence`)."""

    card: StoredCheckpoint
    family: float = 0.0  # evidence every version of its model shares
    own: float = 0.0  # evidence only this version has
    coverage: float = 1.0  # share of the reference phrase's weight it matched (1 when the request marks none)
    matched: frozenset[int] = frozenset()  # request words it matched
    labelled: frozenset[int] = frozenset()  # request words found in its version label alone
    owned: frozenset[int] = frozenset()  # request words that are evidence for this version alone
    strong: float = 0.0  # the part of the evidence from identity fields (name, creator, version, trigger, subject)
    spelled: bool = False  # the request spells its whole name, or a title in it ("dark dungeon")
    evidence: Evidence | None = None  # what it was scored from, read again for the few that lead
    position: int = -1  # its index in the evidence's arrays
    of_series: bool = True  # matches the series the request says its subject is from ("albedo from genshin")
    series: float = 0.0  # the share of that series' words it has

    @property
    def total(self) -> float:
        return self.family + self.own

    @property
    def exact(self) -> frozenset[int]:
        """Request words its identity fields have as written (no near spelling)."""
        if self.evidence is None:
            return frozenset()
        return self.evidence.exact_words(self.position)


@dataclass
class Ranking:
    """What retrieval hands to reasoning: candidates, best first, and how the request referred to them."""

    candidates: list[Ranked]
    reference: Reference
    by_time_only: bool = False  # no reference words: candidates are the checkpoints inside the time windows
    unique_word: float = 1.0  # the evidence of one word that only one model has, in this repository
    maker_missing: str = ""  # the creator the request said, when none of the candidates is theirs
    # the request names a series the repository has and, for who, only a role: "the singer from one piece film red"
    role_in_series: bool = False
    # naming words no card has in any field and no language's word: a name the repository has never heard
    unheard: frozenset[int] = frozenset()


class CardCache:
    """Parsed cards by id, kept while the repository's revision stands; keeps per-request cost off JSON parsing.

    Call :meth:`refresh` once at the start of a request: it reads the revision (one primary-key read) and drops
    the cards if anything changed, including a last-used time; the request then shares that one check.
    """

    def __init__(self, repository: Repository):
        self.repository = repository
        self._revision: Revision | None = None
        self._cards: dict[str, StoredCheckpoint] = {}
        self._index: tuple[int, SelectionIndex] | None = None
        self._building = threading.Lock()

    def refresh(self) -> Revision:
        revision = self.repository.revision()
        if revision != self._revision:
            self._cards, self._revision = {}, revision
        return revision

    def get_many(self, ids: list[str]) -> list[StoredCheckpoint]:
        missing = [i for i in ids if i not in self._cards]
        if missing:
            for card in self.repository.get_many(missing):
                self._cards[card.id] = card
        return [self._cards[i] for i in ids if i in self._cards]

    def index(self) -> SelectionIndex:
        """The selection index of the current cards, rebuilt when a card changes (not when one is used); one build
        at a time, the others waiting for it (start-up builds it in the background, a first request may join)."""
        cards_revision = self._revision.cards if self._revision else self.refresh().cards
        with self._building:
            if self._index is None or self._index[0] != cards_revision:
                self._index = (cards_revision, SelectionIndex(self.repository.list()))
                # the cards and their index are millions of long-lived objects: out of the cyclic collector's scans,
                # or each full collection walks them all (half a second at 100,000 cards, every 8th request's tail)
                gc.collect()
                gc.freeze()
            return self._index[1]

    def prepare(self) -> None:
        """Build the index now (at start-up, in the background) rather than on the first request."""
        self.refresh()
        self.index()


def _window_ids(repository: Repository, intent: Intent, limit: int) -> list[str]:
    """For requests that name only a time ("the one I used yesterday"): checkpoints inside the windows."""
    by, windows = ("used", intent.used) if intent.used else ("created", intent.created)
    if not windows and (intent.used_order or intent.order):
        return repository.newest_ids("used" if intent.used_order else "created", limit)
    return repository.ids_between([(w.start, w.end) for w in windows], by, limit)


def among(cache: CardCache, cards: list[StoredCheckpoint], reference: Reference) -> Ranking:
    """Evidence for an answer to a clarification, over the candidates still open."""
    index = cache.index()
    evidence = index.score(reference.words, files=reference.files) if reference.words else None
    ranked = []
    for card in cards:
        i = index.position.get(card.id)
        if evidence is None or i is None:
            ranked.append(Ranked(card))
        else:
            ranked.append(
                Ranked(
                    card,
                    float(evidence.family[i]),
                    float(evidence.own[i]),
                    1.0,
                    frozenset(evidence.matched.get(i, ())),
                    frozenset(evidence.labelled.get(i, ())),
                    frozenset(evidence.owned.get(i, ())),
                )
            )
    return Ranking(ranked, reference)


def timed(intent: Intent) -> bool:
    return bool(intent.created or intent.used or intent.order or intent.used_order)


def by_time(cache: CardCache, intent: Intent, reference: Reference) -> Ranking:
    """The checkpoints inside the request's time windows (or all, newest first, for "my newest model"), of the
    creator it names when it names one ("la lora de reevemusk del 6 de marzo": reevemusk's, not the newest 400 of
    every March)."""
    if not reference.makers:
        ids = _window_ids(cache.repository, intent, WINDOW_LIMIT)
        return Ranking([Ranked(card) for card in cache.get_many(ids)], reference, by_time_only=True)
    index = cache.index()
    theirs: set[int] = set()
    for maker in reference.makers:
        made = set(index.made_by(maker.forms))
        if not made:
            return Ranking([], reference, by_time_only=True, maker_missing=maker.forms[0])
        theirs = made if not theirs else theirs & made
    by, windows = ("used", intent.used) if intent.used else ("created", intent.created)
    cards = cache.get_many([index.cards[i].id for i in sorted(theirs)])  # fresh: the index's may predate a use
    if windows:
        cards = [c for c in cards if any(w.contains(_time_of(c, by)) for w in windows)]
    cards.sort(key=lambda c: _time_of(c, by) or dt.datetime.min, reverse=True)
    return Ranking([Ranked(card) for card in cards], reference, by_time_only=True)


def _time_of(card: StoredCheckpoint, by: str) -> dt.datetime | None:
    """When the card was created, or last used (``by``)."""
    return card.last_used_at if by == "used" else card.created_at


def _naming_clause(reference: Reference, named: dict[int, set[int]], family_of: list[str]) -> set[int]:
    """In a request that marks no name ("a clockmaker's shop on a foggy street, gaslamp fantasy, the version
    from june"), the one clause some checkpoint's name, creator, trigger, version or subject spells out
    whole: that clause is the name and the others are what to draw. Of several so spelled, the one a single model
    spells while each other is spelled by many ("..., negative helper: dangercrow": "negative helper" is a kind of
    model). Empty when no clause, or no one clause, is spelled out so, or the request is a single clause."""
    if reference.phrase or len(set(reference.clauses)) < 2:
        return set()
    clauses: dict[int, set[int]] = defaultdict(set)
    for k, c in enumerate(reference.clauses):
        clauses[c].add(k)
    spellers = {c: {family_of[i] for i, found in named.items() if members <= found} for c, members in clauses.items()}
    spelled = [c for c, families in spellers.items() if families]
    if len(spelled) == 1:
        return clauses[spelled[0]]
    # not when the request opens with a name ("snufkin fishing off a bridge, autumn, soft watercolor": the head
    # decides, see named_by), nor when the opening clause is one of the many
    named_head = any(not is_english(reference.words[k].forms[0]) for k in reference.head)
    single = [c for c in spelled if len(spellers[c]) == 1]
    others = [c for c in spelled if c not in single]
    if named_head or len(single) != 1:
        return set()
    if all(len(spellers[c]) >= SPELLED_BY_MANY and c != reference.clauses[0] for c in others):
        return clauses[single[0]]
    return set()


def is_unheard(index: SelectionIndex, forms: tuple[str, ...]) -> bool:
    """Is this a word no card has in any field, and not an English one: a name ("ganondorf", "kratos"), not the
    picture ("fisherman", "bakery")?"""
    word = forms[0]
    return word.isascii() and word.isalpha() and all(form not in index.idf for form in forms) and not is_english(word)


def _head_names(index: SelectionIndex, headed: Reference, evidence: Evidence) -> bool:
    """Is the noun phrase a request opens with the name of what it wants? When some card is called by most of it
    ("lilo with butterfly wings in a flower field": Lilo, not a "butterfly wings" model), or when it is short and
    has a word no card is called by ("goku training on a mountain": a model we do not have, whatever the scene's
    words would find; a description that mentions Goku does not make its model his)."""
    if len(evidence.coverage) and float(evidence.coverage.max()) >= HEAD_COVERAGE:
        return True
    if headed.series and float(index.score(headed.words, headed.series).coverage.max()) >= HEAD_COVERAGE:
        return True  # "subaru natsuki from re:zero": a series the repository has; who from it is checked after
    if headed.series and float(index.score(headed.words, headed.head).coverage.max()) >= HEAD_COVERAGE:
        return True  # "姫野 from チェンソーマン": a series no card spells, said of a name one card has
    words = [headed.words[k] for k in headed.head]
    # short, with a word no card is called by, or a word as rare as a name that none is called by most of with the
    # rest ("liara t'soni at a dig site": "Lara Croft" is not her, nor a glow LoRA the scene's words would find)
    return len(words) <= SHORT_HEAD and any(
        not any(index.names(f) for f in w.forms) or index.rarity(w) >= NAME_RARITY * index.max_idf for w in words
    )


_DEFINITE = re.compile(r"(?i)(?:\b(?:the|that|this|these|those)\s+|\bone\s+of\s+(?:the|my)\s+(?:\S+\s+){0,4})$")


def _names_a_role(reference: Reference) -> bool:
    """ "the singer from ...", "the main witch from ...", "megumin's little sister": a definite or owned noun phrase
    that ends in a role names a role, however few cards say its words ("beast boy from teen titans" is a name)."""
    head_words = [reference.words[k] for k in sorted(reference.head)]
    start = reference.spans[min(reference.head)][0] if reference.head else 0
    owned = any(k < min(reference.head, default=0) for k in reference.series)
    return (
        bool(head_words)
        and head_words[-1].forms[0] in ROLE_NOUNS
        and (owned or head_words[-1].forms[0] in ANYONE or _DEFINITE.search(reference.text[:start]) is not None)
    )


def _titled(card: StoredCheckpoint, head_words: list[QueryWord], series_words: list[QueryWord]) -> bool:
    """Is ``card`` called by the said name, a title of its own ("King" of "King (The King of Fighters) LoRA"), where
    the name is also a word of the said series' title ("king" of "kof", of "the king of fighters")?"""
    said = {form for word in head_words for form in word.forms}
    series = {form for word in series_words for form in word.forms}
    titles_ = [(segment, field_tokens(segment)) for segment in titles.segments(model_name(card))]
    own = any(tokens and tokens <= said for _, tokens in titles_)
    return own and any(
        all(tokens.intersection(word.forms) for word in head_words)
        and bool(tokens & series or titles.initials([segment]) & series)
        for segment, tokens in titles_
    )


def _clips_series(card: StoredCheckpoint, said: list[QueryWord]) -> bool:
    """Does ``card`` write, in its name or tags, the series the words ``said`` clip ("priconne" of its "princess
    connect", "nijigaku" of "Nijigasaki")? Every word must clip a title, or be one of the card's own words."""
    texts = [*titles.segments(model_name(card)), *card.tags]
    fields = card_fields(card)
    own = set().union(fields["name"], fields["tag"])
    return (
        bool(said)
        and any(not own.intersection(w.forms) for w in said)
        and all(own.intersection(w.forms) or any(titles.clips(w.forms[0], text) for text in texts) for w in said)
    )


def _from_series(index: SelectionIndex, reference: Reference, candidates: list[Ranked]) -> bool:
    """ "ryo yamada from bocchi the rock": a name (a word few models or none have) must be found on its own (an "Anna
    Yamada" or a Bocchi model each cover half of the phrase; "the girl from spirited away" is a role, not a name),
    and, where the repository knows the series, a candidate must be from it ("albedo from genshin" is not
    Overlord's Albedo). A candidate failing either keeps its score, with no coverage. Returns whether the head is
    a role from a series the repository has (then who from it is for reasoning to ask)."""
    head_words = [reference.words[k] for k in sorted(reference.head)]
    role = _names_a_role(reference)
    named = not role and any(index.rarity(word) >= NAME_RARITY * index.max_idf for word in head_words)
    head = index.score(reference.words, reference.head).coverage
    if not any(index.mass(reference.words[k]) for k in reference.head):
        head = np.zeros_like(head)  # "芙宁娜 from 原神": character pairs no card has name no one we have
    said = index.score(reference.words, reference.series)
    series = said.coverage
    # a series in a script without spaces is one a card has when the card has nearly all its pairs, those no card
    # has included: a few pairs ("ーマ", "マン" of "チェンソーマン") are in many unrelated names
    unspaced = all(is_unspaced(reference.words[k].forms[0]) for k in reference.series)
    least = UNSPACED_SERIES_COVERAGE if unspaced else HEAD_COVERAGE
    said_words = np.zeros_like(series)  # the share of the series' words each card has, however weighty
    for i, found in said.matched.items():
        said_words[i] = len(found & reference.series) / len(reference.series)
    if unspaced:
        series = said_words
    anyone = role and head_words[-1].forms[0] in ANYONE
    if anyone:  # no word says who, so the series must be said whole: "breaking" alone is not "breaking bad"
        series = np.where(said_words >= 1.0, series, 0.0)
    known = len(series) and float(series.max()) >= least
    if anyone and not known:
        for r in candidates:  # "someone from breaking bad": anyone of a series no card has is no one we have
            r.coverage, r.of_series = 0.0, False
        return False
    # "king from kof": a word of the series' title names the card of the series called by it alone ("King (The King
    # of Fighters) LoRA"); the series' other cards have the word only inside the series' title
    series_words = [reference.words[k] for k in sorted(reference.series)]
    titled = set()
    if known and not role:
        titled = {
            id(r)
            for r in candidates
            if series[index.position[r.card.id]] >= least and _titled(r.card, head_words, series_words)
        }
        named = named or bool(titled)
    for r in candidates:
        i = index.position[r.card.id]
        # a card whose name has the whole name needs only some of the series' words: "lana from pokemon sun n moon"
        # is "Pokemon - Lana", a series said with its subtitle
        called = (
            bool(head_words)
            and series[i] < least
            and said_words[i] > 0.0
            and all(card_fields(r.card)["name"].intersection(word.forms) for word in head_words)
        )
        clipped = series[i] < least and _clips_series(r.card, series_words)
        r.of_series, r.series = not known or series[i] >= least or called or clipped, float(said_words[i])
        if not known and not unspaced and len(titles.segments(model_name(r.card))) >= 2 and not clipped:
            r.of_series = False  # "fiona from shrek": "Fiona Frost | SPY x FAMILY" says it is another story's
        if not r.of_series:
            r.coverage = 0.0
        elif called:  # its name has the whole name, and the series in part: the name says who
            r.coverage = float(head[i])
        elif titled:
            r.coverage = float(head[i]) if id(r) in titled else 0.0
        elif named:  # a series no card has says nothing of who: the name alone ("姫野 from チェンソーマン")
            r.coverage = min(r.coverage, float(head[i])) if known else float(head[i])
    return bool(known) and not named


def maker_made(maker: QueryWord, card: StoredCheckpoint) -> bool:
    """Did the creator a request said (``maker``, as its handle's forms) make ``card``?"""
    return bool(card.creator) and bool(field_tokens(card.creator).intersection(maker.forms))


def _by_makers(reference: Reference, candidates: list[Ranked]) -> str:
    """ "lykon's hatsune miku", "kafka by zakp": only the candidates the said creator made stay named (the others
    keep their scores with no coverage, as the nearest), and with the maker, part of the name names one; returns
    the creator when they made none of them."""
    missing = ""
    for maker in reference.makers:
        theirs = {id(r) for r in candidates if maker_made(maker, r.card)}
        if not any(r.coverage > 0 for r in candidates if id(r) in theirs):  # they made nothing the request names
            missing = missing or maker.forms[0]
        for r in candidates:
            if id(r) not in theirs:
                r.coverage = 0.0
                r.strong = 0.0
            elif r.coverage > 0:  # the maker with part of the name names it ("zolmadri's negative embedding")
                r.coverage = max(r.coverage, HEAD_COVERAGE)
    return missing


def _called_by_all(index: SelectionIndex, headed: Reference, said: list[tuple[str, ...]]) -> bool:
    """Is some card that covers the whole phrase called by every word ``said`` (its name or a trained word)?"""
    covering = np.flatnonzero(index.score(headed.words, headed.phrase).coverage >= FULL_COVERAGE)[:CALLED_AMONG]
    return any(all(_called(index.cards[i], forms) for forms in said) for i in covering)


def _called(card: StoredCheckpoint, forms: tuple[str, ...]) -> bool:
    """Is the card called by a word of these ``forms``: its name or a trained word has it?"""
    fields = card_fields(card)
    return bool((fields["name"] | fields["trigger"]).intersection(forms))


def named_by(index: SelectionIndex, reference: Reference) -> tuple[Reference, Evidence]:
    """The request's reference read against the repository: the phrase it marks, else the one clause a card's name
    spells out whole, else the noun phrase it opens with when that names a model (:func:`_head_names`); with the
    evidence of every card for it. Selection and the image prompt both take the words that named the model from
    here, so they agree on them."""
    evidence = index.score(reference.words, reference.phrase, reference.files)
    clause = _naming_clause(reference, evidence.named, index.family_of)
    if clause and reference.head and not clause & reference.head:
        # "midna floating over a castle, grinning, ...": a request opening with a name (rare words) some card is
        # called by names that, not a clause of the picture's that some trigger happens to spell ("grinning")
        # by its name, not its creator's ("old man playing chess, ..., AnalogFilm768 tintype": "old_man_prompt")
        # (the cheap tests first: a score reads every card)
        headed = reference.with_phrase(reference.head_phrase)
        said = [headed.words[k].forms for k in headed.head]
        rare = all(index.rarity(headed.words[k]) >= NAME_RARITY * index.max_idf for k in headed.head)
        # and so does a role from a series some card has ("one of the quintuplets from 5-toubun no hanayome, veil")
        role = (
            bool(headed.series)
            and all(headed.words[k].forms[0] in ROLE_NOUNS for k in headed.head)
            and float(index.score(headed.words, headed.series).coverage.max()) >= HEAD_COVERAGE
        )
        # "doc brown from back to the future, ..., lightning": a name said with where it is from is who is asked
        declared = bool(headed.series) and not _names_a_role(headed)
        # "ganondorf on a throne, red hair, ...": an opening word no card has and English does not use is a name we
        # lack, whatever a clause of the picture spells
        unheard = len(said) <= SHORT_HEAD and any(is_unheard(index, forms) for forms in said)
        if role or declared or unheard or (rare and _called_by_all(index, headed, said)):
            clause = set()
    if clause:
        reference = reference.with_phrase(clause)
        evidence = index.score(reference.words, reference.phrase, reference.files)
    elif not reference.phrase and reference.head_phrase:
        headed = reference.with_phrase(reference.head_phrase)
        trial = index.score(headed.words, headed.phrase, headed.files)
        if _head_names(index, headed, trial):
            reference, evidence = headed, trial
    return reference, evidence


def retrieve(cache: CardCache, intent: Intent, reference: Reference) -> Ranking:
    """Score every checkpoint against the reference words; keep those with any evidence, best first."""
    if not reference.words or (reference.names_nothing and timed(intent)):
        return by_time(cache, intent, reference)
    index = cache.index()
    reference, evidence = named_by(index, reference)
    candidates = [
        Ranked(
            index.cards[i],
            float(evidence.family[i]),
            float(evidence.own[i]),
            float(evidence.coverage[i]),
            frozenset(words),
            frozenset(evidence.labelled.get(i, ())),
            owned=frozenset(evidence.owned.get(i, ())),
            strong=float(evidence.strong[i]),
            spelled=i in evidence.spelled,
            evidence=evidence,
            position=i,
        )
        for i, words in evidence.matched.items()
    ]
    role = False
    if reference.series and reference.phrase == reference.head_phrase:
        role = _from_series(index, reference, candidates)
    maker_missing = _by_makers(reference, candidates)
    unique = index.max_idf
    if intent.used or intent.used_order:  # the index's cards may predate their last use
        fresh = {c.id: c for c in cache.get_many([r.card.id for r in candidates])}
        for r in candidates:
            r.card = fresh.get(r.card.id, r.card)
    candidates.sort(key=lambda r: (-r.total, -r.card.created_at.timestamp(), r.card.id))
    naming = (reference.phrase or reference.head) - reference.series  # "yu-gi-oh vrains": a subtitle, no name
    unheard = frozenset(
        k
        for k in naming
        if is_unheard(index, reference.words[k].forms)
        and not is_word(reference.words[k].forms[0])
        and not index.heard_of(reference.words[k])  # "sowrd" is a misspelt "sword"
    )
    return Ranking(
        candidates, reference, unique_word=unique, maker_missing=maker_missing, role_in_series=role, unheard=unheard
    )
