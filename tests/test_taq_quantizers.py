"""TAQ's building blocks: weight quantizers and their error bounds, int4 packing, smoothing, the activation
observer, AdaRound."""

from __future__ import annotations

import copy
import math

import pytest
import torch

from personalq.taq.activations import Observer
from personalq.taq.packing import pack, unpack
from personalq.taq.quantizers import QuantSpec, quantize_weight

# --- quantizers --------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("granularity", ["tensor", "channel", "group"])
@pytest.mark.parametrize("bits", [8, 4])
def test_linear_round_trip_is_within_half_a_step_inside_the_range(bits, granularity):
    weight = torch.randn(16, 64, generator=torch.Generator().manual_seed(bits))
    spec = QuantSpec(bits, "linear", granularity, group_size=32)
    q = quantize_weight(weight, spec)
    rows = weight.reshape(q.codes.shape[0], -1)
    step = q.scale
    lo, hi = q.offset, q.offset + step * (2**bits - 1)
    inside = (rows >= lo) & (rows <= hi)
    error = (q.dequantize().reshape(rows.shape) - rows).abs()
    assert bool((error[inside] <= (step / 2 + 1e-6).expand_as(rows)[inside]).all())
    assert int(q.codes.min()) >= 0 and int(q.codes.max()) <= 2**bits - 1
    relative = float((error**2).mean() / rows.pow(2).mean())
    assert relative < (1e-4 if bits == 8 else 2e-2)


@pytest.mark.parametrize("bits", [8, 4])
def test_log_round_trip_keeps_sign_and_bounded_relative_error(bits):
    weight = torch.randn(8, 128, generator=torch.Generator().manual_seed(3))
    spec = QuantSpec(bits, "log", "channel")
    q = quantize_weight(weight, spec)
    approx = q.dequantize()
    nonzero = approx != 0
    assert bool((torch.sign(approx[nonzero]) == torch.sign(weight[nonzero])).all())
    peak = q.scale.expand_as(weight)
    smallest = peak * spec.log_base ** -(spec.log_exponents - 1)
    resolved = (weight.abs() >= smallest) & (weight.abs() <= peak)
    relative = ((approx - weight).abs() / weight.abs())[resolved]
    assert float(relative.max()) <= math.sqrt(spec.log_base) - 1 + 1e-4
    assert int(q.codes.abs().max()) <= spec.log_exponents


def test_mse_search_clips_outliers_at_4_bits():
    weight = torch.randn(1, 4096, generator=torch.Generator().manual_seed(0))
    weight[0, 0] = 40.0
    q = quantize_weight(weight, QuantSpec(4, "linear", "tensor"))
    assert float(q.offset + q.scale * 15) < 40.0  # the range was clipped below the outlier


@pytest.mark.parametrize("length", [1, 7, 64, 65])
def test_int4_pack_unpack_is_exact(length):
    codes = torch.randint(0, 16, (5, length), generator=torch.Generator().manual_seed(length))
    packed = pack(codes, 4)
    assert packed.dtype == torch.uint8 and packed.shape == (5, (length + 1) // 2)
    assert torch.equal(unpack(packed, 4, length).to(torch.int64), codes)
    assert torch.equal(unpack(pack(codes * 16, 8), 8, length).to(torch.int64), codes * 16)


# --- smoothing ---------------------------------------------------------------------------------------------------


def outlier_channels(shape, channel_dim: int, seed: int = 0) -> torch.Tensor:
    """Activations whose channels 3 and 5 are 40x the others: the imbalance smoothing is for."""
    x = torch.randn(*shape, generator=torch.Generator().manual_seed(seed))
    scale = torch.ones(shape[channel_dim])
    scale[[3, 5]] = 40.0
    view = [1] * len(shape)
    view[channel_dim] = -1
    return x * scale.reshape(view)


def channel_peaks(x: torch.Tensor, channel_dim: int) -> torch.Tensor:
    return x.abs().amax(dim=[d for d in range(x.dim()) if d != channel_dim % x.dim()])


@pytest.mark.parametrize("kind", ["linear", "conv"])
def test_smoothing_keeps_the_float_output_and_evens_out_the_channels(kind):
    from personalq.taq.smoothing import fold_into_weight, per_input_channel, smoothing_factors

    torch.manual_seed(0)
    if kind == "linear":
        layer, x, channel_dim = torch.nn.Linear(16, 8), outlier_channels((2, 10, 16), -1), -1
    else:
        layer, x, channel_dim = torch.nn.Conv2d(16, 8, 3, padding=1), outlier_channels((2, 16, 6, 6), 1), 1
    factors = smoothing_factors(channel_peaks(x, channel_dim), layer.weight, alpha=0.75)
    smoothed = x / per_input_channel(factors, x.dim(), channel_dim)
    folded = copy.deepcopy(layer)
    with torch.no_grad():
        folded.weight.copy_(fold_into_weight(layer.weight, factors))
        assert torch.allclose(folded(smoothed), layer(x), rtol=1e-4, atol=1e-4)

    def imbalance(t: torch.Tensor) -> float:
        peaks = channel_peaks(t, channel_dim)
        return float(peaks.max() / peaks.median())

    assert imbalance(x) > 20 and imbalance(smoothed) < 0.5 * imbalance(x)


@pytest.mark.parametrize("channel_dim, shape", [(-1, (2, 10, 16)), (1, (2, 16, 6, 6))], ids=["linear", "conv"])
def test_observer_gives_the_smoothed_input_the_ranges_it_would_observe_after_the_division(channel_dim, shape):
    """One calibration pass serves any smoothing: per-channel extremes and the channel of each sample make the ranges
    of ``x / s`` exactly those of an observer that saw ``x / s`` itself."""
    from personalq.taq.smoothing import per_input_channel

    factors = torch.rand(16, generator=torch.Generator().manual_seed(1)) * 10 + 0.1
    direct, per_channel = Observer(seed=2), Observer(seed=2)
    for call in range(3):
        x = outlier_channels(shape, channel_dim, seed=call)
        per_channel.record("site", 0, x, channel_dim)
        direct.record("site", 0, x / per_input_channel(factors, x.dim(), channel_dim))
    spec = QuantSpec(4, "linear", "tensor")
    assert torch.equal(per_channel.ranges("site", 1, spec, divisor=factors), direct.ranges("site", 1, spec))
    peaks = per_channel.channel_absmax("site")
    assert peaks.shape == (16,) and peaks[[3, 5]].min() > 10 * peaks[:3].max()
    with pytest.raises(KeyError, match="per channel"):
        direct.ranges("site", 1, spec, divisor=factors)


# --- the observer ------------------------------------------------------------------------------------------------


def test_observer_samples_the_whole_run_and_each_site_on_its_own():
    """Late calls reach the sample once it is full, and a site's sample does not depend on the other sites."""
    calls = 64
    alone, crowded, reseeded = Observer(seed=3), Observer(seed=3), Observer(seed=4)
    for call in range(calls):
        values = torch.full((4096,), float(call))
        alone.record("attn2:k", 0, values)
        reseeded.record("attn2:k", 0, values)
        crowded.record("attn2:q", 0, torch.randn(4096))  # another site recorded in between
        crowded.record("attn2:k", 0, values)
    sample = alone.samples[("attn2:k", 0)]
    assert len(sample) < calls * 1024 and float(sample.max()) >= calls - 4  # bounded, yet the last calls are in it
    assert abs(float(sample.mean()) - (calls - 1) / 2) < 2  # every call about equally represented
    assert torch.equal(sample, crowded.samples[("attn2:k", 0)])
    assert not torch.equal(sample, reseeded.samples[("attn2:k", 0)])


# --- AdaRound ----------------------------------------------------------------------------------------------------


def test_adaround_moves_the_layer_output_less_than_rounding_to_nearest():
    from personalq.taq.adaround import adaround_weight

    torch.manual_seed(0)
    layer = torch.nn.Linear(64, 32)
    inputs = [torch.randn(2, 16, 64) for _ in range(4)]
    spec = QuantSpec(4, "linear", "channel")
    x = torch.cat(inputs)
    reference = torch.nn.functional.linear(x, layer.weight)

    def error(quantized):
        return float((torch.nn.functional.linear(x, quantized.dequantize()) - reference).pow(2).mean())

    with torch.no_grad():
        learned = adaround_weight(layer, inputs, spec, iterations=300)
    nearest = quantize_weight(layer.weight, spec)
    assert error(learned) < 0.9 * error(nearest)
    assert int(learned.codes.min()) >= 0 and int(learned.codes.max()) <= 15
    with pytest.raises(ValueError):
        adaround_weight(layer, [], spec)
