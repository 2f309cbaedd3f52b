"""Static activation ranges: observed at calibration, per site and timestep group, then frozen.

A *site* is a named place where an activation is quantized: the input of a Linear or Conv2d
(``down_blocks.0.resnets.0.conv1``), or a cross-attention tensor (``...attn2:q``, ``:k``, ``:v``, ``:p``).
Activations of a diffusion UNet drift with the timestep, so each site keeps one range per group of
timesteps (as Q-Diffusion and TFMQ-DM do); cross-attention K and V depend only on the prompt and share one.

The observer keeps the true extremes and a bounded random sample of values per (site, group); ranges are
then searched on the sample for the smallest round-trip error at the target bit width. The sample is
uniform over the whole calibration run (bottom-k on random priorities), not the first calls that fill it:
K and V see every denoising step of every batch, and a sample of only the first prompts fitted them to those.
Each (site, group) draws from its own generator, so observing one more site does not change what the others
keep, and a calibration is reproducible site by site.

Layer inputs are also observed per input channel (each channel's extremes, and the channel of every sampled
value), so that smoothing (:mod:`personalq.taq.smoothing`), which divides each channel by its own factor, gets
the ranges of the smoothed input from the same calibration pass instead of a second one.
"""

from __future__ import annotations

import math
import zlib
from collections import defaultdict
from dataclasses import dataclass, field
from functools import partial

import torch

from personalq.taq.quantizers import AffineGrid, QuantSpec, log_round_trip, search_range

SAMPLE_PER_CALL = 1024
SAMPLE_CAP = 16384


@dataclass
class Observer:
    seed: int = 0
    keep_inputs: int = 0  # whole layer inputs kept per site (spread over the run), for AdaRound
    samples: dict[tuple[str, int], torch.Tensor] = field(default_factory=dict)
    _priorities: dict[tuple[str, int], torch.Tensor] = field(default_factory=dict)
    _generators: dict[tuple[str, int], torch.Generator] = field(default_factory=dict)
    extremes: dict[tuple[str, int], tuple[float, float]] = field(default_factory=dict)
    channel_extremes: dict[tuple[str, int], tuple[torch.Tensor, torch.Tensor]] = field(
        default_factory=dict
    )  # per-channel (lo, hi)
    sample_channels: dict[tuple[str, int], torch.Tensor] = field(
        default_factory=dict
    )  # the channel of each sampled value
    inputs: dict[str, list[torch.Tensor]] = field(default_factory=lambda: defaultdict(list))
    _calls: dict[str, int] = field(default_factory=lambda: defaultdict(int))

    def _generator(self, key: tuple[str, int]) -> torch.Generator:
        if key not in self._generators:
            site, group = key
            self._generators[key] = torch.Generator().manual_seed(
                self.seed * 1_000_003 + zlib.crc32(f"{site}#{group}".encode())
            )
        return self._generators[key]

    def record(self, site: str, group: int, values: torch.Tensor, channel_dim: int | None = None) -> None:
        """Observe ``values`` at ``site``; with ``channel_dim``, also per channel along that dimension."""
        flat = values.detach().reshape(-1).float()
        if flat.numel() == 0:
            return
        key = (site, group)
        lo, hi = float(flat.min()), float(flat.max())
        old = self.extremes.get(key)
        self.extremes[key] = (lo, hi) if old is None else (min(old[0], lo), max(old[1], hi))
        generator = self._generator(key)
        pick = torch.randint(0, flat.numel(), (min(SAMPLE_PER_CALL, flat.numel()),), generator=generator)
        drawn = {"values": flat[pick], "priorities": torch.rand(len(pick), generator=generator)}
        if channel_dim is not None:
            channel_dim %= values.dim()
            self._record_channels(key, values.detach().float(), channel_dim)
            drawn["channels"] = (pick // math.prod(values.shape[channel_dim + 1 :])) % values.shape[channel_dim]
        stores = {"values": self.samples, "priorities": self._priorities, "channels": self.sample_channels}
        held = {
            name: torch.cat([stores[name][key], new]) if key in stores[name] else new for name, new in drawn.items()
        }
        if len(held["values"]) > SAMPLE_CAP:  # keep the lowest priorities: a uniform sample of everything drawn so far
            lowest = held["priorities"].topk(SAMPLE_CAP, largest=False).indices
            held = {name: tensor[lowest] for name, tensor in held.items()}
        for name, tensor in held.items():
            stores[name][key] = tensor

    def _record_channels(self, key: tuple[str, int], values: torch.Tensor, channel_dim: int) -> None:
        others = [d for d in range(values.dim()) if d != channel_dim]
        lo, hi = values.amin(dim=others), values.amax(dim=others)
        if key in self.channel_extremes:
            old_lo, old_hi = self.channel_extremes[key]
            lo, hi = torch.minimum(lo, old_lo), torch.maximum(hi, old_hi)
        self.channel_extremes[key] = (lo, hi)

    def channel_absmax(self, site: str) -> torch.Tensor | None:
        """Each input channel's largest magnitude at ``site`` over every timestep group; None if not observed per
        channel."""
        peaks = [torch.maximum(lo.abs(), hi.abs()) for (s, _), (lo, hi) in self.channel_extremes.items() if s == site]
        return torch.stack(peaks).amax(0) if peaks else None

    def keep(self, site: str, values: torch.Tensor, every: int = 7) -> None:
        """Keep every ``every``-th input of a layer (first two batch items) until ``keep_inputs`` are held."""
        calls = self._calls[site]
        self._calls[site] += 1
        if self.keep_inputs and calls % every == 0 and len(self.inputs[site]) < self.keep_inputs:
            self.inputs[site].append(values[:2].detach().clone())

    def sites(self) -> set[str]:
        return {site for site, _ in self.extremes}

    def ranges(self, site: str, groups: int, spec: QuantSpec, divisor: torch.Tensor | None = None) -> torch.Tensor:
        """(groups, 2) ``[lo, hi]`` rows; groups never observed borrow the nearest observed one.

        With ``divisor`` (one positive factor per input channel), the ranges of the input with each channel
        divided by its factor: what a smoothed layer rounds.
        """
        found = {}
        for group in range(groups):
            key = (site, group)
            if key not in self.extremes:
                continue
            values, lo, hi = self._sample(key, divisor)
            best_lo, best_hi = search_range(torch.cat([values, values.new_tensor([lo, hi])]).reshape(1, -1), spec)
            found[group] = (float(best_lo), float(best_hi))
        if not found:
            raise KeyError(f"no calibration data for {site}")
        rows = [found[min(found, key=lambda g: abs(g - group))] for group in range(groups)]
        return torch.tensor(rows, dtype=torch.float32)

    def _sample(self, key: tuple[str, int], divisor: torch.Tensor | None) -> tuple[torch.Tensor, float, float]:
        """The sample and the true extremes (the range search starts from them), divided per channel by ``divisor``."""
        if divisor is None:
            return self.samples[key], *self.extremes[key]
        if key not in self.channel_extremes:
            raise KeyError(f"{key[0]} was not observed per channel: it cannot be smoothed")
        channel_lo, channel_hi = self.channel_extremes[key]
        values = self.samples[key] / divisor[self.sample_channels[key]]
        return values, float((channel_lo / divisor).min()), float((channel_hi / divisor).max())


class ActivationQuantizer:
    """Rounds an activation to the frozen range of the current timestep group (``hi`` is the log quantizer's peak)."""

    def __init__(self, spec: QuantSpec, ranges: torch.Tensor):
        self.spec = spec
        bounds = [(float(lo), float(hi)) for lo, hi in ranges.tolist()]
        self.grids = [AffineGrid.for_range(lo, hi, spec) for lo, hi in bounds] if spec.kind == "linear" else None
        if self.grids is not None:
            self._round_trips = [grid.round_trip for grid in self.grids]
        else:
            self._round_trips = [partial(log_round_trip, peak=torch.tensor(hi), spec=spec) for _, hi in bounds]

    def __call__(self, x: torch.Tensor, group: int) -> torch.Tensor:
        return self._round_trips[min(group, len(self._round_trips) - 1)](x)

    def grid(self, group: int) -> AffineGrid:
        """The affine grid of timestep group ``group`` (linear quantizers only): what integer kernels compute on."""
        if self.grids is None:
            raise ValueError("a log quantizer has no affine grid")
        return self.grids[min(group, len(self.grids) - 1)]
