"""Which text tokens stay in full precision: the trigger's sub-token span, the start token, or none.

Spans come from the tokenizer's character offsets, so a trigger that WordPiece splits into several pieces
(``<teddybear-v2>`` -> ``<``, ``teddy``, ``##be``, ``##ar``, ...) is protected whole, every occurrence of
every trigger is found, and an unconditional (negative) prompt without a trigger protects nothing.
"""

from __future__ import annotations

import re
from typing import Literal, Sequence

import torch

Mode = Literal["plain", "bos", "taq"]
MODES: tuple[Mode, ...] = ("plain", "bos", "taq")


def trigger_char_spans(prompt: str, triggers: Sequence[str]) -> list[tuple[int, int]]:
    """Character spans of every occurrence of every trigger (case-insensitive, longest trigger first)."""
    spans: list[tuple[int, int]] = []
    for trigger in sorted({t for t in triggers if t.strip()}, key=len, reverse=True):
        for match in re.finditer(re.escape(trigger), prompt, flags=re.IGNORECASE):
            if not any(start < match.end() and match.start() < end for start, end in spans):
                spans.append(match.span())
    return sorted(spans)


def token_mask(
    tokenizer, prompts: Sequence[str], triggers: Sequence[str], mode: Mode, max_length: int | None = None
) -> torch.Tensor:
    """(len(prompts), max_length) bool: True where a token's K/V row and attention column stay full precision."""
    if mode not in MODES:
        raise ValueError(f"unknown protection mode {mode!r}; expected one of {', '.join(MODES)}")
    length = max_length or tokenizer.model_max_length
    mask = torch.zeros(len(prompts), length, dtype=torch.bool)
    if mode == "bos":
        mask[:, 0] = True
    if mode != "taq":
        return mask
    encoded = tokenizer(
        list(prompts), padding="max_length", max_length=length, truncation=True, return_offsets_mapping=True
    )
    for row, (prompt, offsets) in enumerate(zip(prompts, encoded["offset_mapping"])):
        for start, end in trigger_char_spans(prompt, triggers):
            for position, (token_start, token_end) in enumerate(offsets):
                if token_end > token_start and token_start < end and start < token_end:
                    mask[row, position] = True
    return mask
