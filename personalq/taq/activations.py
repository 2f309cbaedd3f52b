"""Static activation ranges: observed at calibration, per site and timestep group, then frozen.

A *site* is a named place where an activation is quantized: the input of a Linear or Conv2d
(``down_blocks.0.resnets.0.conv1``), or a cross-attention tensor (``...attn2:q``, ``:k``, ``:v``, ``:p``).
Activations of a diffusion UNet drift with the timestep, so each site keeps one range per group of
timesteps (as Q-Diffusion and TFMQ-DM do); cross-attention K and V depend only on the prompt and share one.

The observer keeps the true extremes and a bounded random sample of values per (site, group); ranges are
then searched on the sample for the smallest round-trip error at the target bit width.
"""

from __future__ import annotations

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
    samples: dict[tuple[str, int], list[torch.Tensor]] = field(default_factory=lambda: defaultdict(list))
    extremes: dict[tuple[str, int], tuple[float, float]] = field(default_factory=dict)
    inputs: dict[str, list[torch.Tensor]] = field(default_factory=lambda: defaultdict(list))
    _calls: dict[str, int] = field(default_factory=lambda: defaultdict(int))

    def __post_init__(self):
        self._generator = torch.Generator().manual_seed(self.seed)

    def record(self, site: str, group: int, values: torch.Tensor) -> None:
        flat = values.detach().reshape(-1).float()
        if flat.numel() == 0:
            return
        key = (site, group)
        lo, hi = float(flat.min()), float(flat.max())
        old = self.extremes.get(key)
        self.extremes[key] = (lo, hi) if old is None else (min(old[0], lo), max(old[1], hi))
        if sum(s.numel() for s in self.samples[key]) < SAMPLE_CAP:
            pick = torch.randint(0, flat.numel(), (min(SAMPLE_PER_CALL, flat.numel()),), generator=self._generator)
            self.samples[key].append(flat[pick])

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
            sample = torch.cat(self.samples[key] + [torch.tensor([lo, hi])]).reshape(1, -1)
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
