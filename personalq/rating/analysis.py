"""Win rates with bootstrap confidence intervals, Bradley-Terry scores and inter-rater agreement.

Ties and "both bad" count as half a win for each side. Confidence intervals come from
``scipy.stats.bootstrap`` (percentile, 95%, through :func:`mean_interval`); Bradley-Terry strengths from the
classic MM iteration (Hunter 2004), a dozen lines that do not justify another dependency; agreement is
Fleiss' kappa over items with at least two raters. Votes on pairs that showed one checkpoint on both sides
(cast before such pairs stopped being asked) are left out of all of it, and counted.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from dataclasses import dataclass

import numpy as np

from personalq.rating.votes import Vote
from personalq.stats import mean_interval

FOCUS = "checkin"


@dataclass
class WinRate:
    baseline: str
    rate: float
    low: float
    high: float
    votes: int
    wins: int
    losses: int
    ties: int


def outcome(vote: Vote, method: str = FOCUS) -> float:
    winner = vote.winner()
    return 0.5 if winner is None else float(winner == method)


def win_rates(votes: list[Vote], seed: int = 0) -> list[WinRate]:
    by_baseline: dict[str, list[Vote]] = defaultdict(list)
    for vote in votes:
        methods = {vote.method_left, vote.method_right}
        if FOCUS in methods and len(methods) == 2:
            by_baseline[(methods - {FOCUS}).pop()].append(vote)
    rates = []
    for baseline, group in sorted(by_baseline.items()):
        interval = mean_interval([outcome(v) for v in group], seed)
        wins = sum(v.winner() == FOCUS for v in group)
        losses = sum(v.winner() == baseline for v in group)
        rates.append(
            WinRate(
                baseline,
                interval.mean,
                interval.low,
                interval.high,
                len(group),
                wins,
                losses,
                len(group) - wins - losses,
            )
        )
    return rates


def bradley_terry(votes: list[Vote], iterations: int = 200) -> dict[str, float]:
    """Strengths normalised to sum to 1 (ties split half and half)."""
    methods = sorted({m for v in votes for m in (v.method_left, v.method_right)})
    if not methods:
        return {}
    wins: Counter = Counter()
    games: Counter = Counter()
    for v in votes:
        a, b = v.method_left, v.method_right
        games[frozenset((a, b))] += 1
        score = outcome(v, a)
        wins[a] += score
        wins[b] += 1 - score
    strength = {m: 1.0 for m in methods}
    for _ in range(iterations):
        updated = {}
        for m in methods:
            denominator = sum(
                n / (strength[m] + strength[o]) for pair, n in games.items() if m in pair for o in pair - {m}
            )
            updated[m] = (
                (wins[m] + 0.5) / denominator if denominator else strength[m]
            )  # +0.5: keeps unbeaten methods finite
        total = sum(updated.values())
        strength = {m: s / total for m, s in updated.items()}
    return strength


def fleiss_kappa(votes: list[Vote]) -> tuple[float | None, int]:
    """Agreement on which method won (or tie) for items rated by several raters; (kappa, items used)."""
    by_item: dict[str, list[str]] = defaultdict(list)
    for v in votes:
        by_item[v.item_id].append(v.winner() or "tie")
    items = [labels for labels in by_item.values() if len(labels) >= 2]
    if not items:
        return None, 0
    categories = sorted({label for labels in items for label in labels})
    p_items, totals = [], Counter()
    for labels in items:
        counts, n = Counter(labels), len(labels)
        totals.update(labels)
        p_items.append((sum(c * c for c in counts.values()) - n) / (n * (n - 1)))
    all_labels = sum(totals.values())
    expected = sum((totals[c] / all_labels) ** 2 for c in categories)
    observed = float(np.mean(p_items))
    return (1.0 if expected == 1 else (observed - expected) / (1 - expected)), len(items)


def identical(vote: Vote) -> bool:
    """Both sides showed the same checkpoint (or none): the rater saw one picture twice, so the vote says nothing."""
    return vote.checkpoint_left == vote.checkpoint_right


def _identical_note(not_asked: tuple[int, int] | None, left_out: int, unanswered: int = 0) -> str | None:
    parts = []
    if not_asked is not None:
        parts.append(
            f"Not asked: {not_asked[0]} of {not_asked[1]} items, "
            "where Check-in and its baseline chose the same checkpoint "
            "(the two images would be identical)"
        )
    if unanswered:
        parts.append(
            f"{unanswered} items where one side found no checkpoint, also not asked "
            "(a side that cannot answer would give itself away)"
        )
    if left_out:
        parts.append(f"{left_out} earlier votes on such pairs left out")
    return "; ".join(parts) or None


def results_table(
    votes: list[Vote],
    intent: dict[str, float] | None = None,
    not_asked: tuple[int, int] | None = None,
    unanswered: int = 0,
) -> str:
    """The paper's Table 2 layout: Check-in vs each baseline, with CIs, counts, BT scores and intent scores.

    ``not_asked``: (items whose two sides would show the same checkpoint, all items), reported under the table;
    ``unanswered``: items left out because one side found no checkpoint.
    """
    compared = [v for v in votes if not identical(v)]
    strengths = bradley_terry(compared)
    lines = [
        "| Check-in vs | win rate (ties = 1/2) | 95% CI | votes | wins / losses / ties "
        "| Bradley-Terry (Check-in : baseline) |",
        "| --- | --- | --- | --- | --- | --- |",
    ]
    for r in win_rates(compared):
        lines.append(
            f"| {r.baseline} | {r.rate:.1%} | [{r.low:.1%}, {r.high:.1%}] | {r.votes} | "
            f"{r.wins} / {r.losses} / {r.ties} | "
            f"{strengths.get(FOCUS, 0):.3f} : {strengths.get(r.baseline, 0):.3f} |"
        )
    kappa, items = fleiss_kappa(compared)
    lines.append("")
    lines.append(
        f"Inter-rater agreement (Fleiss' kappa over {items} items with several raters): "
        + (f"{kappa:.3f}" if kappa is not None else "n/a")
    )
    note = _identical_note(not_asked, len(votes) - len(compared), unanswered)
    if note:
        lines.append(note)
    if intent:
        lines.append(
            "Intent score (local rubric judge, 1-5): "
            + ", ".join(f"{m} {s:.2f}" for m, s in sorted(intent.items(), key=lambda x: -x[1]))
        )
    return "\n".join(lines)
