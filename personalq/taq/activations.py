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
"""

from __future__ import annotations

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
    inputs: dict[str, list[torch.Tensor]] = field(default_factory=lambda: defaultdict(list))
    _calls: dict[str, int] = field(default_factory=lambda: defaultdict(int))

    def _generator(self, key: tuple[str, int]) -> torch.Generator:
        if key not in self._generators:
            site, group = key
            self._generators[key] = torch.Generator().manual_seed(self.seed * 1_000_003 + zlib.crc32(f"{site}#{group}".encode()))
        return self._generators[key]

    def record(self, site: str, group: int, values: torch.Tensor) -> None:
        flat = values.detach().reshape(-1).float()
        if flat.numel() == 0:
            return
        key = (site, group)
        lo, hi = float(flat.min()), float(flat.max())
        old = self.extremes.get(key)
        self.extremes[key] = (lo, hi) if old is None else (min(old[0], lo), max(old[1], hi))
        generator = self._generator(key)
        pick = torch.randint(0, flat.numel(), (min(SAMPLE_PER_CALL, flat.numel()),), generator=generator)
        values = torch.cat([self.samples.get(key, flat[:0]), flat[pick]])
        priorities = torch.cat([self._priorities.get(key, flat[:0]), torch.rand(len(pick), generator=generator)])
        if len(values) > SAMPLE_CAP:  # keep the lowest priorities: a uniform sample of everything drawn so far
            kept = priorities.topk(SAMPLE_CAP, largest=False).indices
            values, priorities = values[kept], priorities[kept]
        self.samples[key], self._priorities[key] = values, priorities

    def keep(self, site: str, values: torch.Tensor, every: int = 7) -> None:
        """Keep every ``every``-th input of a layer (first two batch items) until ``keep_inputs`` are held."""
        calls = self._calls[site]
        self._calls[site] += 1
        if self.keep_inputs and calls % every == 0 and len(self.inputs[site]) < self.keep_inputs:
            self.inputs[site].append(values[:2].detach().clone())

    def sites(self) -> set[str]:
        return {site for site, _ in self.extremes}

    def ranges(self, site: str, groups: int, spec: QuantSpec) -> torch.Tensor:
        """(groups, 2) ``[lo, hi]`` rows; groups never observed borrow the nearest observed one."""
        found = {}
        for group in range(groups):
            key = (site, group)
            if key not in self.extremes:
                continue
            lo, hi = self.extremes[key]
            sample = torch.cat([self.samples[key], torch.tensor([lo, hi])]).reshape(1, -1)
            best_lo, best_hi = search_range(sample, spec)
            found[group] = (float(best_lo), float(best_hi))
        if not found:
            raise KeyError(f"no calibration data for {site}")
        rows = [found[min(found, key=lambda g: abs(g - group))] for group in range(groups)]
        return torch.tensor(rows, dtype=torch.float32)


class ActivationQuantizer:
    """Rounds an activation to the frozen range of the current timestep group (``hi`` is the log quantizer's peak)."""

    def __init__(self, spec: QuantSpec, ranges: torch.Tensor):
        self.spec = spec
        bounds = [(float(lo), float(hi)) for lo, hi in ranges.tolist()]
        if spec.kind == "linear":
            self._round_trips = [AffineGrid.for_range(lo, hi, spec).round_trip for lo, hi in bounds]
        else:
            self._round_trips = [partial(log_round_trip, peak=torch.tensor(hi), spec=spec) for _, hi in bounds]

    def __call__(self, x: torch.Tensor, group: int) -> torch.Tensor:
        return self._round_trips[min(group, len(self._round_trips) - 1)](x)
