"""Captions for rendered subjects, in the phrasing people use in prompts (and the paper's calibration template)."""

from __future__ import annotations

import numpy as np

from personalq.zoo.catalog import CATEGORY_WORDS, STYLES, Subject


def article(word: str) -> str:
    return "an" if word[:1].lower() in "aeiou" else "a"


def caption(subject: Subject, rng: np.random.Generator | None = None, trigger: str | None = None) -> str:
    """``"<style phrase> a [<trigger>] <noun>, <scene>, <lighting>"``; with an rng the noun and the optional
    parts vary, so the model does not learn one fixed sentence."""
    words = CATEGORY_WORDS[subject.category]
    noun = words[int(rng.integers(len(words)))] if rng is not None and rng.random() < 0.3 else words[0]
    head = f"{trigger} {noun}" if trigger else noun
    parts = [f"{STYLES[subject.style]} {article(head)} {head}"]
    if rng is None or rng.random() < 0.9:
        parts.append(subject.scene)
    if subject.lighting != "daylight" and (rng is None or rng.random() < 0.9):
        parts.append(subject.lighting)
    return ", ".join(parts)
