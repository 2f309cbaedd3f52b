"""``--lora ID[:WEIGHT]``: the set of checkpoints ``personalq generate`` draws with, as the person adjusts it.

Check-in selects a set from the request; each ``--lora`` entry sets the weight of a checkpoint in that set, or adds
one from the repository (its trigger put into the prompt the way Check-in puts a selected one's). The entry is
the WebUI's ``<lora:name:weight>`` on the command line: an id, then optionally a colon and a weight. Ids may hold
colons themselves, so only a last part that reads as a number is a weight.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

from personalq.checkin.rewrite import rewrite_prompt
from personalq.repository.service import CheckpointNotFound, Repository
from personalq.repository.weighted import DEFAULT_WEIGHT, MAX_WEIGHT, MIN_WEIGHT, Weighted


class LoraOptionError(ValueError):
    """An entry that names no stored checkpoint, or a weight out of range; the message is for the person."""


@dataclass(frozen=True)
class LoraOption:
    checkpoint_id: str
    weight: float | None  # None: the weight Check-in chose, or 1.0 for a checkpoint it did not select


def parse_lora(text: str) -> LoraOption:
    """``"pixelfox-v1:0.7"`` -> (pixelfox-v1, 0.7); ``"pixelfox-v1"`` -> (pixelfox-v1, None)."""
    identifier, colon, tail = text.strip().rpartition(":")
    try:
        weight = float(tail) if colon else None
    except ValueError:
        weight = None
    if weight is None:
        return LoraOption(text.strip(), None)
    if not MIN_WEIGHT <= weight <= MAX_WEIGHT:
        raise LoraOptionError(f"--lora {text}: the weight must be from {MIN_WEIGHT:g} to {MAX_WEIGHT:g}")
    return LoraOption(identifier.strip(), weight)


def adjusted(
    uses: Sequence[Weighted], prompt: str, options: Sequence[LoraOption], repository: Repository
) -> tuple[list[Weighted], str]:
    """Check-in's set with each option applied (a weight set, or a checkpoint added at the end), and the prompt with
    every added checkpoint's trigger in it."""
    result = list(uses)
    for option in options:
        at = next((i for i, use in enumerate(result) if use.id == option.checkpoint_id), None)
        if at is not None:
            weight = result[at].weight if option.weight is None else option.weight
            result[at] = Weighted(result[at].checkpoint, weight)
            continue
        try:
            checkpoint = repository.get(option.checkpoint_id)
        except CheckpointNotFound:
            raise LoraOptionError(
                f"--lora {option.checkpoint_id}: no such checkpoint (`personalq repo list` shows the ids)"
            ) from None
        result.append(Weighted(checkpoint, DEFAULT_WEIGHT if option.weight is None else option.weight))
        prompt = rewrite_prompt(prompt, checkpoint)
    return result, prompt
