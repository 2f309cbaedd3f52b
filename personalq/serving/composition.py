"""Several checkpoints in one image: which of them the request runs on, and which go on top.

A person combines a character LoRA with a style LoRA, a DreamBooth fine-tune with a detail LoRA, a LoRA with a
textual inversion. One image runs on one base pipeline and one UNet, so a set is refused when its checkpoints were
made for different bases, or when two of them are full UNets (DreamBooth fine-tunes, WebUI checkpoints): both are
named, since only the person knows which to drop.

The set's *anchor* is the checkpoint whose UNet the image runs on: the full UNet when the set has one, else the
first checkpoint (Check-in puts the model the request is about first). At a quantized precision the request runs on
the anchor's variant (:mod:`personalq.serving.variants`), calibrated on the anchor's own trigger prompts; every
other adapter goes on top in full precision at request time, as the anchor's own LoRA does. Calibrating a variant
per set would quantize the base once per combination (minutes each on a CPU) for activation ranges the other
adapters shift little, while the part of TAQ that is about triggers, the token mask, is per request and covers every
trigger of the set (:attr:`Composition.trigger_words`).

So the only key a set needs is its anchor's: the engine's cache holds UNets by the anchor's variant and LoRA
tensors by each file's digest, and Ray Serve routes by the anchor's variant (:func:`ray_serving.variant_id`).
Weights are in no key: ``set_adapters`` sets them per request on adapters already loaded, and nothing cached is
computed from them. The one place the set and its weights matter is a batch: prompts share one pipeline call only
when they share :attr:`Composition.adapters` exactly.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

from personalq.repository.base_models import describe
from personalq.repository.card import StoredCheckpoint
from personalq.repository.weighted import Weighted
from personalq.serving.checkpoints import CheckpointLoadError, replaces_unet

# what a set may hold: full UNets (at most one), and what goes on top of a UNet
KINDS = ("lora", "textual_inversion", "dreambooth", "checkpoint")

Uses = StoredCheckpoint | Sequence[Weighted]


class CompositionError(CheckpointLoadError):
    """A set of checkpoints that cannot make one image together; the message names the checkpoints at fault."""


@dataclass(frozen=True)
class Composition:
    """A checked set of checkpoints at their weights, in the order given (the first is the request's subject)."""

    uses: tuple[Weighted, ...]

    @classmethod
    def of(cls, uses: Uses) -> Composition:
        """One checkpoint (at weight 1) or a sequence of weighted ones, checked (:class:`CompositionError`)."""
        composition = cls((Weighted(uses),) if isinstance(uses, StoredCheckpoint) else tuple(uses))
        composition.check()
        return composition

    def check(self) -> None:
        if not self.uses:
            raise CompositionError("no checkpoint to generate with: the set is empty")
        seen: dict[str, Weighted] = {}
        for use in self.uses:
            if use.id in seen:
                raise CompositionError(f"{use.id} is in the set twice: give each checkpoint once, at one weight")
            seen[use.id] = use
            if use.checkpoint.kind not in KINDS:
                raise CompositionError(f"{use.id}: cannot load checkpoints of kind {use.checkpoint.kind!r}")
        first = self.uses[0].checkpoint
        for use in self.uses[1:]:
            if use.checkpoint.base_model != first.base_model:
                raise CompositionError(
                    f"{first.id} is for {describe(first.base_model)} and {use.id} for "
                    f"{describe(use.checkpoint.base_model)}: one image runs on one base; pick checkpoints of one base"
                )
        unets = [use.checkpoint for use in self.uses if replaces_unet(use.checkpoint)]
        if len(unets) > 1:
            named = " and ".join(f"{c.id} ({c.kind})" for c in unets)
            raise CompositionError(
                f"{named} are each a full UNet, and one image runs on one UNet: keep one of them (LoRAs and "
                "embeddings can go on top of it)"
            )

    @property
    def anchor(self) -> StoredCheckpoint:
        """The checkpoint whose UNet the image runs on: the set's full UNet, else its first checkpoint."""
        return next((u.checkpoint for u in self.uses if replaces_unet(u.checkpoint)), self.uses[0].checkpoint)

    @property
    def checkpoints(self) -> list[StoredCheckpoint]:
        return [use.checkpoint for use in self.uses]

    @property
    def applied(self) -> list[Weighted]:
        """What goes on top of the UNet: LoRAs and embeddings; a weight of 0 switches one off (it is not loaded)."""
        return [u for u in self.uses if not replaces_unet(u.checkpoint) and u.weight != 0]

    @property
    def loras(self) -> list[Weighted]:
        return [use for use in self.applied if use.checkpoint.kind == "lora"]

    @property
    def adapters(self) -> tuple[tuple[str, float], ...]:
        """(id, weight) of what goes on top: what prompts must share to run in one pipeline call."""
        return tuple((use.id, use.weight) for use in self.applied)

    @property
    def trigger_words(self) -> list[str]:
        """Every trigger of the checkpoints in effect (the full UNet and what goes on top), each once: what TAQ keeps
        in full precision. An adapter switched off protects nothing, so its weight 0 draws the set without it."""
        in_effect = [u.checkpoint for u in self.uses if replaces_unet(u.checkpoint)] + [
            u.checkpoint for u in self.applied
        ]
        return list(dict.fromkeys(word for checkpoint in in_effect for word in checkpoint.trigger_words))

    def describe(self) -> str:
        """``mochi-corgi-v2 + ink-wash@0.6`` for logs and errors."""
        return " + ".join(use.id if use.weight == 1 else f"{use.id}@{use.weight:g}" for use in self.uses)
