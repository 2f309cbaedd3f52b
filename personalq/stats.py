"""A mean with its 95% bootstrap confidence interval (``scipy.stats.bootstrap``, percentile method).

Shared by the rater tab's win rates and the TAQ bench's paired comparisons, so that every interval the
benchmarks report is computed the same way. It lives in the runtime because the rater tab reports these intervals; the
benchmarks import it from here.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.stats import bootstrap


@dataclass(frozen=True)
class MeanInterval:
    mean: float
    low: float
    high: float

    def excludes(self, value: float) -> bool:
        return value < self.low or value > self.high


def mean_interval(values, seed: int = 0, resamples: int = 2000) -> MeanInterval:
    """The mean of ``values`` and its 95% interval; a degenerate interval when there is nothing to resample."""
    values = np.asarray(values, dtype=float)
    if len(values) == 0:
        raise ValueError("a mean needs at least one value")
    mean = float(values.mean())
    if len(values) < 2 or values.std() == 0:
        return MeanInterval(mean, mean, mean)
    ci = bootstrap(
        (values,),
        np.mean,
        confidence_level=0.95,
        n_resamples=resamples,
        method="percentile",
        random_state=np.random.default_rng(seed),
    ).confidence_interval
    return MeanInterval(mean, float(ci.low), float(ci.high))
