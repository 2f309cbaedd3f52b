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
from personalq.taq.quantizers import QuantSpec

PARTS = {"k": "keys", "v": "values", "p": "attention probabilities"}


@dataclass(frozen=True)
class RangeRatios:
    """Span of ``mode``'s range over plain's, one entry per cross-attention layer (and timestep group, for ``p``)."""

    mode: str
    spec: QuantSpec
    by_part: dict[str, list[float]]

    def median(self, part: str) -> float:
        return statistics.median(self.by_part[part])

    def least(self, part: str) -> float:
        return min(self.by_part[part])


def _span(bounds: list[float], spec: QuantSpec) -> float:
    """What the rounding step is proportional to: the width for the linear grid, the peak for the log one."""
    lo, hi = bounds
    return hi - lo if spec.kind == "linear" else hi


def range_ratios(observer: Observer, spec: QuantSpec, mode: str, timestep_groups: int) -> RangeRatios:
    """``mode``'s searched range over plain's at every cross-attention site the calibration observed.

    Below 1: protecting ``mode``'s tokens narrows the range the other tokens are rounded in. About 1: the
    protected values were inside it, and protection can only save their own rounding error.
    """
    by_part: dict[str, list[float]] = {part: [] for part in PARTS}
    for site in sorted(observer.sites()):
        base, _, observed_mode = site.partition("@")
        part = base.rpartition(":")[2]
        if observed_mode != "plain" or part not in PARTS:
            continue
        groups = 1 if part in ("k", "v") else timestep_groups  # K/V depend only on the prompt: one range
        plain = observer.ranges(site, groups, spec).tolist()
        protected = observer.ranges(f"{base}@{mode}", groups, spec).tolist()
        by_part[part] += [_span(p, spec) / _span(q, spec) for p, q in zip(protected, plain) if _span(q, spec) > 0]
    if not any(by_part.values()):
        raise KeyError("the calibration observed no cross-attention K, V or probabilities")
    return RangeRatios(mode, spec, by_part)
