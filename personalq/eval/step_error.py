"""The quantization error of one denoising step, measured on the full-precision model's own trajectory.

An image's MSE to the FP32 image at the same seed compounds every step's error through the sampler: once a
trajectory drifts, the two images are different samples of the prompt and the MSE says little about how
much each step got wrong, or about which part of the UNet got it wrong. So the TAQ bench also feeds the
quantized UNet the exact inputs the FP32 UNet saw while generating (latents, timestep, prompt embeddings,
unconditional half first) and compares the classifier-free-guided noise predictions: the error each step
adds, with nothing compounded.
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass
from typing import Iterator

import numpy as np
import torch

EVERY = 4  # record every 4th of the zoo's 20 denoising steps: five steps spread over the trajectory


@dataclass(frozen=True)
class UNetCall:
    """One recorded call: the UNet's inputs and its output (unconditional half first)."""

    batch: int  # which pipeline call it belongs to: timesteps only fall within a call, so a rise starts the next
    sample: torch.Tensor
    timestep: torch.Tensor
    encoder_hidden_states: torch.Tensor
    output: torch.Tensor
    added_cond_kwargs: dict[str, torch.Tensor] | None = None  # SDXL's pooled text embedding and time ids


@contextlib.contextmanager
def recording_calls(unet: torch.nn.Module, every: int = EVERY) -> Iterator[list[UNetCall]]:
    """Record every ``every``-th call of ``unet`` (the first included) while the block runs."""
    calls: list[UNetCall] = []
    seen, batch, last_timestep = 0, -1, float("-inf")

    def hook(module, args, kwargs, output):
        nonlocal seen, batch, last_timestep
        sample = kwargs.get("sample", args[0] if args else None)
        timestep = kwargs.get("timestep", args[1] if len(args) > 1 else None)
        now = float(torch.as_tensor(timestep).flatten()[0])
        if now >= last_timestep:  # timesteps only fall within a pipeline call: a new call begins
            seen, batch = 0, batch + 1
        last_timestep = now
        embeddings = kwargs["encoder_hidden_states"]
        if seen % every == 0:
            predicted = output[0] if isinstance(output, tuple) else output.sample
            added = kwargs.get("added_cond_kwargs")
            calls.append(
                UNetCall(
                    batch,
                    sample.detach().clone(),
                    torch.as_tensor(timestep).detach().clone(),
                    embeddings.detach().clone(),
                    predicted.detach().clone(),
                    {k: v.detach().clone() for k, v in added.items()} if added else None,
                )
            )
        seen += 1

    handle = unet.register_forward_hook(hook, with_kwargs=True)
    try:
        yield calls
    finally:
        handle.remove()


def guided(prediction: torch.Tensor, guidance: float) -> torch.Tensor:
    """The noise prediction the sampler steps with: ``uncond + guidance * (cond - uncond)``."""
    uncond, cond = prediction.chunk(2)
    return uncond + guidance * (cond - uncond)


@torch.no_grad()
def step_error(unet: torch.nn.Module, calls: list[UNetCall], guidance: float) -> np.ndarray:
    """Per image (in generation order), the MSE between ``unet``'s guided noise prediction and the recorded one,
    averaged over that image's recorded steps."""
    if not calls:
        raise ValueError("no recorded UNet calls to replay")
    per_batch: dict[int, list[torch.Tensor]] = {}
    for call in calls:
        predicted = unet(
            call.sample,
            call.timestep,
            encoder_hidden_states=call.encoder_hidden_states,
            added_cond_kwargs=call.added_cond_kwargs,
            return_dict=False,
        )[0]
        difference = guided(predicted.float(), guidance) - guided(call.output.float(), guidance)
        per_batch.setdefault(call.batch, []).append(difference.pow(2).flatten(1).mean(1))
    return torch.cat([torch.stack(errors).mean(0) for _, errors in sorted(per_batch.items())]).cpu().numpy()
