"""State that every quantized layer and attention processor of one UNet reads during a forward pass.

Per call, the denoising step decides the timestep group and the prompt decides which tokens are protected;
rather than threading both through diffusers' call signatures, they live on one object the modules share.
A forward pre-hook on the UNet sets the group from the timestep it is called with.
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass, field
from typing import Iterator

import torch

from personalq.taq.activations import Observer

TRAIN_TIMESTEPS = 1000


@dataclass
class QuantContext:
    timestep_groups: int = 4
    group: int = 0
    protected: torch.Tensor | None = None  # (batch, tokens) bool; True = full precision
    observer: Observer | None = None
    observed_masks: dict[str, torch.Tensor] = field(default_factory=dict)  # calibration: mode -> mask

    def set_timestep(self, timestep) -> None:
        t = float(timestep.flatten()[0]) if torch.is_tensor(timestep) else float(timestep)
        self.group = min(int(t * self.timestep_groups / TRAIN_TIMESTEPS), self.timestep_groups - 1)

    @contextlib.contextmanager
    def protecting(self, mask: torch.Tensor | None) -> Iterator[None]:
        previous, self.protected = self.protected, mask
        try:
            yield
        finally:
            self.protected = previous

    def protected_rows(self, batch: int, tokens: int, device) -> torch.Tensor | None:
        """The protection mask for a batch of ``batch`` prompts of ``tokens`` tokens, or None (nothing protected)."""
        return None if self.protected is None else fit_to_batch(self.protected, batch, tokens).to(device)


def fit_to_batch(mask: torch.Tensor, batch: int, tokens: int) -> torch.Tensor:
    """A per-prompt token mask repeated for ``num_images_per_prompt`` copies and cut to the encoder length."""
    if mask.shape[0] != batch:
        if batch % mask.shape[0]:
            raise ValueError(f"a token mask for {mask.shape[0]} prompts does not fit a batch of {batch}")
        mask = mask.repeat_interleave(batch // mask.shape[0], dim=0)
    return mask[:, :tokens]


def attach_timestep_hook(unet: torch.nn.Module, context: QuantContext):
    """Keep ``context.group`` in step with the timestep the UNet is called with; returns the hook handle."""

    def hook(module, args, kwargs):
        timestep = kwargs.get("timestep", args[1] if len(args) > 1 else None)
        if timestep is not None:
            context.set_timestep(timestep)

    return unet.register_forward_pre_hook(hook, with_kwargs=True)
