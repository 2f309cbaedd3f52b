"""The local reasoning engine: deterministic filtering and ranking of candidates against the intent record.

Hard constraints (subject, time window, usage window, version, qualifiers, negations) remove candidates and
remember why, so a "no match" can say which constraint nothing satisfied and offer what was closest before
it. Style is soft: it narrows when something fits and is ignored otherwise (the prompt still asks for it).
Recency words pick the extreme of what remains.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Callable, Literal

from rapidfuzz import fuzz

from personalq.checkin.intent import Intent
from personalq.checkin.lexicon import canonical_style, canonical_subject, singular
from personalq.repository.card import StoredCheckpoint
from personalq.repository.versions import parse_version

Status = Literal["selected", "clarify", "no_match"]
_WORDS = re.compile(r"[a-z0-9]+")


@dataclass(frozen=True)
class CardFeatures:
    subjects: frozenset[str]  # canonical subjects plus the words of subject phrases
    names: frozenset[str]  # words of name, family, tags, triggers
    styles: frozenset[str]
    qualifiers: frozenset[str]
    version_parts: tuple[int, ...]


_FEATURES: dict[tuple[str, object], CardFeatures] = {}


def features(card: StoredCheckpoint) -> CardFeatures:
    key = (card.id, card.imported_at)
    cached = _FEATURES.get(key)
    if cached is None:
        subjects = {canonical_subject(s) for s in card.subjects}
        subjects |= {canonical_subject(w) for s in card.subjects for w in _WORDS.findall(s.lower())}
        names = {w if w.isdigit() else singular(w) for text in (card.name, card.family or "", *card.tags, *card.triggers)
                 for w in _WORDS.findall(text.lower())}
        styles = {canonical_style(s) for s in card.styles} | {canonical_style(t) for t in card.tags if canonical_style(t) != t.lower()}
        version = parse_version(card.version)
        qualifiers = set(version.qualifiers) | {w for w in _WORDS.findall(card.name.lower()) if w in ("pruned", "offset", "fp16", "final", "beta")}
        cached = CardFeatures(frozenset(subjects), frozenset(names), frozenset(styles), frozenset(qualifiers), version.parts)
        if len(_FEATURES) > 200_000:
            _FEATURES.clear()
        _FEATURES[key] = cached
    return cached


def _vocabulary(pool: list[StoredCheckpoint]) -> set[str]:
    """Every word of the pool's names and subjects."""
    vocabulary: set[str] = set()
    for card in pool:
        f = features(card)
        vocabulary |= f.names | f.subjects
    return vocabulary


def _near_words(terms: list[str], vocabulary: set[str]) -> dict[str, frozenset[str]]:
    """Each term's typo-tolerant matches ("corgy" ~ "corgi") in the pool's vocabulary, found once per request
    rather than once per card."""
    return {t: frozenset(w for w in vocabulary if w == t or (len(t) >= 5 and len(w) >= 5 and fuzz.ratio(t, w) >= 85))
            for t in terms}


def _term_hit(near: frozenset[str], f: CardFeatures) -> bool:
    return not (near.isdisjoint(f.names) and near.isdisjoint(f.subjects))


@dataclass
class Decision:
    status: Status
    remaining: list[StoredCheckpoint]
    reason: str = ""
    alternatives: list[StoredCheckpoint] = field(default_factory=list)
    phrasing: tuple[str, list] | None = None  # an LLM's validated question and options, when it wrote them

    @property
    def chosen(self) -> StoredCheckpoint | None:
        return self.remaining[0] if self.status == "selected" else None


def _version_matches(intent: Intent, parts: tuple[int, ...]) -> bool:
    if not parts:
        return False
    wanted = intent.version_parts
    padded = parts + (0,) * max(0, len(wanted) - len(parts))
    return padded[: len(wanted)] == wanted


def _subject_label(intent: Intent) -> str:
    return " ".join(intent.subjects or intent.terms[:2]) or "matching"


def _nearest_by_date(cards: list[StoredCheckpoint], windows) -> list[StoredCheckpoint]:
    def distance(card: StoredCheckpoint) -> float:
        return min(min(abs((card.created_at - w.start).total_seconds()), abs((card.created_at - w.end).total_seconds())) for w in windows)

    return sorted(cards, key=distance)


def rank(cards: list[StoredCheckpoint], scores: dict[str, float]) -> list[StoredCheckpoint]:
    return sorted(cards, key=lambda c: (-scores.get(c.id, 0.0), -c.created_at.timestamp(), c.id))


def decide(intent: Intent, candidates: list[StoredCheckpoint], scores: dict[str, float]) -> Decision:
    """Filter, rank and decide: one survivor is selected, several need a question, none is no match."""
    pool = rank(candidates, scores)
    if not pool:
        return Decision("no_match", [], f"I have no {_subject_label(intent)} checkpoint in the repository.")

    # subject: keep the candidates that match the most of what the request names
    if intent.subjects or intent.terms:
        vocabulary = _vocabulary(pool)
        exact = {w for w in intent.words if w in vocabulary}
        near = _near_words(intent.terms, vocabulary)

        def hits(card: StoredCheckpoint) -> tuple[int, int]:
            f = features(card)
            subject_hits = sum(1 for s in intent.subjects if s in f.subjects or s in f.names)
            # exact word matches first; fuzzy (typos) only for words that match no candidate exactly
            word_hits = sum(1 for w in intent.words if (w in f.names or w in f.subjects) if w in exact)
            word_hits += sum(1 for w in intent.terms if w not in exact and _term_hit(near[w], f))
            return subject_hits, word_hits

        scored = [(hits(c), c) for c in pool]
        if intent.subjects:
            scored = [(h, c) for h, c in scored if h[0] > 0]
        else:
            # no known subject: the request names the checkpoint, so every name word must match
            # (numbers and hyphen parts only rank; "fang inspection day 1.0" still finds both 1.0 versions)
            named = [t for t in intent.terms if t.isalpha() and not t.isdigit()]
            scored = [(h, c) for h, c in scored if h[1] > 0 and all(_term_hit(near[t], features(c)) for t in named)]
        if not scored:
            wanted = ", ".join(intent.subjects or intent.terms)
            return Decision("no_match", [], f"No checkpoint in the repository is about {wanted}.", pool[:3])
        best = max(h for h, _ in scored)
        pool = [c for h, c in scored if h == best]

    steps: list[tuple[str, Callable[[StoredCheckpoint], bool], Callable[[list[StoredCheckpoint]], list[StoredCheckpoint]]]] = []
    if intent.created:
        label = " or ".join(dict.fromkeys(w.label.split()[0] if len(intent.created) > 2 else w.label for w in intent.created))
        steps.append((f"none of your {_subject_label(intent)} checkpoints was created in {label}",
                      lambda c: any(w.contains(c.created_at) for w in intent.created), lambda cs: _nearest_by_date(cs, intent.created)))
    if intent.used:
        label = " or ".join(w.label for w in intent.used)
        steps.append((f"none of your {_subject_label(intent)} checkpoints was used {label}",
                      lambda c: any(w.contains(c.last_used_at) for w in intent.used), lambda cs: cs))
    if intent.version is not None:
        steps.append((f"no {_subject_label(intent)} checkpoint has version {intent.version:g}",
                      lambda c: _version_matches(intent, features(c).version_parts), lambda cs: cs))
    if intent.version_qualifiers:
        quals = set(intent.version_qualifiers)
        steps.append((f"no {_subject_label(intent)} checkpoint is {' '.join(sorted(quals))}",
                      lambda c: quals <= (features(c).qualifiers | features(c).names), lambda cs: cs))
    if intent.excluded:
        banned = set(intent.excluded)

        def allowed(c: StoredCheckpoint) -> bool:
            f = features(c)
            return not (banned & (f.styles | f.qualifiers | f.names | f.subjects))

        steps.append((f"every {_subject_label(intent)} checkpoint is {' or '.join(sorted(banned))}", allowed, lambda cs: cs))

    for reason, keep, nearest in steps:
        survivors = [c for c in pool if keep(c)]
        if not survivors:
            return Decision("no_match", [], reason[0].upper() + reason[1:] + ".", nearest(pool)[:3])
        pool = survivors

    if intent.styles:
        styled = [c for c in pool if set(intent.styles) & features(c).styles]
        if styled:
            pool = styled

    if intent.used_order:
        used = [c for c in pool if c.last_used_at]
        if used:
            pool = [max(used, key=lambda c: c.last_used_at)]
    if intent.version_order:
        families = {c.family for c in pool}
        if len(families) == 1:
            pool = [max(pool, key=lambda c: (features(c).version_parts, c.created_at))]
    if intent.order:
        pick = max if intent.order == "newest" else min
        pool = [pick(pool, key=lambda c: c.created_at)]

    if len(pool) == 1:
        return Decision("selected", pool, "")
    return Decision("clarify", pool, f"{len(pool)} checkpoints fit: {intent.describe()}")


__all__ = ["Decision", "decide", "features", "rank"]
