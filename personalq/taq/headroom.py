"""How much a protection mode narrows the ranges of what it still rounds.

Protecting the trigger helps in two ways: its K/V rows and attention columns skip rounding, and the ranges
of everything else are fitted without them. The second is the large one when the protected values are the
extremes: excluding them frees a per-tensor range for all other tokens, whose rounding step shrinks with
it. When they lie inside the other tokens' range, fitting without them changes nothing, and all that is left
is the protected values' own rounding error, which at 8 bits is a 256th of the range. Which case a
checkpoint is in can be read off its calibration alone, with no image generated: that is what this measures.
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass

from personalq.taq.activations import Observer
from personalq.taq.quantize import TAQConfig, activation_ranges

PARTS = {"k": "keys", "v": "values", "p": "attention probabilities"}


@dataclass(frozen=True)
class RangeRatios:
    """Span of a mode's range over plain's, one entry per cross-attention layer (and timestep group, for ``p``)."""

    by_part: dict[str, list[float]]

    def median(self, part: str) -> float:
        return statistics.median(self.by_part[part])

    def least(self, part: str) -> float:
        return min(self.by_part[part])


def _span(lo: float, hi: float, config: TAQConfig) -> float:
    """What the rounding step is proportional to: the width for the linear grid, the peak for the log one."""
    return hi - lo if config.quantizer == "linear" else hi


def range_ratios(observer: Observer, config: TAQConfig) -> RangeRatios:
    """The cross-attention ranges ``config`` quantizes with, over the ones plain PTQ would, site by site.

    Below 1: protecting ``config.mode``'s tokens narrows the range the other tokens are rounded in. About 1:
    the protected values were inside it, and protection can only save their own rounding error.
    """
    protected = activation_ranges(observer, config, cross_attention_only=True)
    plain = activation_ranges(observer, config.model_copy(update={"mode": "plain"}), cross_attention_only=True)
    by_part: dict[str, list[float]] = {part: [] for part in PARTS}
    for site, plain_rows in plain.items():
        part = site.rpartition(":")[2]
        if part in PARTS:
            by_part[part] += [
                _span(*mine, config) / _span(*theirs, config)
                for mine, theirs in zip(protected[site].tolist(), plain_rows.tolist())
                if _span(*theirs, config) > 0
            ]
    if not any(by_part.values()):
        raise KeyError("the calibration observed no cross-attention K, V or probabilities")
    return RangeRatios(by_part)
