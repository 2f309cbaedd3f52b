"""Image quality in the demo domain: prompt alignment, Frechet distance and variant fidelity.

These are *domain* metrics computed with the zoo's own classifier (see ``personalq.zoo.evaluator``), the
analogues of CLIP score and FID; they are not comparable with numbers computed with CLIP or Inception.
"""

from __future__ import annotations

import numpy as np
from scipy import linalg

from personalq.zoo.evaluator import Recognition

MIN_FRECHET_SAMPLES = 2  # a covariance needs two samples; one gives NaN and sqrtm fails


def frechet_distance(a: np.ndarray, b: np.ndarray) -> float:
    """FID's formula on any features: ``|mu_a - mu_b|^2 + Tr(S_a + S_b - 2 (S_a S_b)^1/2)``."""
    if min(len(a), len(b)) < MIN_FRECHET_SAMPLES:
        raise ValueError(
            f"a Frechet distance needs at least {MIN_FRECHET_SAMPLES} samples per set, got {len(a)} and {len(b)}"
        )
    mu_a, mu_b = a.mean(0), b.mean(0)
    cov_a, cov_b = np.cov(a, rowvar=False), np.cov(b, rowvar=False)
    root, _ = linalg.sqrtm(cov_a @ cov_b, disp=False)
    root = root.real
    return float(((mu_a - mu_b) ** 2).sum() + np.trace(cov_a + cov_b - 2 * root))


def prompt_alignment(recognition: Recognition, requested: list[dict[str, str]]) -> float:
    """Mean share of the requested attributes that the classifier recognises in each image."""
    shares = []
    for i, wanted in enumerate(requested):
        shares.append(np.mean([recognition.labels[k][i] == v for k, v in wanted.items()]))
    return float(np.mean(shares))


def recognised(recognition: Recognition, wanted: dict[str, str]) -> np.ndarray:
    """Per image: are all ``wanted`` attributes recognised?"""
    n = len(recognition.features)
    return np.array([all(recognition.labels[k][i] == v for k, v in wanted.items()) for i in range(n)])
