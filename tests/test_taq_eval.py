"""The TAQ bench's statistics: the paired comparison and its intervals, and the step error."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from taq_models import tiny_unet, unet_inputs

# --- the paired comparison ---------------------------------------------------------------------------------------


def test_paired_comparison_calls_a_difference_only_when_its_interval_excludes_zero():
    from personalq.eval.taq_bench import ConfigResult, TaqReport

    rng = torch.Generator().manual_seed(0)
    base = (torch.rand(40, generator=rng) * 1e-3).tolist()  # per-image error of plain PTQ, spread over prompts
    noise = ((torch.rand(40, generator=rng) - 0.5) * 1e-4).tolist()

    def report(taq_mse: list[float]) -> TaqReport:
        rows = {
            ("FP32", "-", "-"): ConfigResult("FP32", "-", "-", 4, mse=[0.0] * 40),
            ("W8A8", "plain", "linear"): ConfigResult("W8A8", "plain", "linear", 1, mse=base, fidelity=[True] * 40),
            ("W8A8", "taq", "linear"): ConfigResult(
                "W8A8", "taq", "linear", 1, mse=taq_mse, fidelity=[True] * 20 + [False] * 20
            ),
        }
        return TaqReport(rows, None, [], ["a"], 40)

    # 10% lower on every image: far inside the spread across images, yet certain when paired
    closer = report([b * 0.9 for b in base]).paired()[0]
    assert closer.verdict == "taq closer to FP32" and closer.closer == 1.0 and closer.mse.high < 0
    assert closer.fidelity is not None and closer.fidelity.mean == -0.5
    tied = report([b + n for b, n in zip(base, noise)]).paired()[0]
    assert tied.verdict == "no significant difference" and tied.mse.low < 0 < tied.mse.high
    worse = report([b + 2e-4 for b in base]).paired()[0]
    assert worse.verdict == "plain closer to FP32"
    assert report(base).paired("taq", "bos") == []  # no BOS row to compare with
    assert "| W8A8 | linear | taq - plain |" in report(base).paired_table()
    # the step error gets its own interval and verdict beside the image MSE's
    rows = report(base).results
    rows[("W8A8", "plain", "linear")].step_mse = [1e-4] * 40
    rows[("W8A8", "taq", "linear")].step_mse = [1e-4 - 1e-5 + n * 1e-3 for n in noise]
    (paired,) = TaqReport(rows, None, [], ["a"], 40).paired()
    assert paired.verdict == "no significant difference" and paired.step_verdict == "taq closer to FP32"
    assert paired.step.mean == pytest.approx(-1e-5 + 1e-3 * float(np.mean(noise)))
    assert "| taq closer to FP32 |" in TaqReport(rows, None, [], ["a"], 40).paired_table()
    assert report(base).paired()[0].step_verdict == "n/a"


def test_paired_comparison_averages_each_image_over_calibrations():
    """Two calibrations that disagree: one interval over the 10 images of their mean, each calibration's mean beside
    it."""
    from personalq.eval.taq_bench import ConfigResult, TaqReport

    plain = [1e-3 + i * 1e-5 for i in range(10)] * 2
    shift = [-2e-4] * 10 + [1e-4] * 10  # calibration 0 favours TAQ, calibration 1 plain
    images, calibration = [f"a/{i}" for i in range(10)] * 2, [0] * 10 + [1] * 10
    rows = {
        ("W8A4", "plain", "linear"): ConfigResult(
            "W8A4", "plain", "linear", 1, mse=plain, images=images, calibration=calibration
        ),
        ("W8A4", "taq", "linear"): ConfigResult(
            "W8A4",
            "taq",
            "linear",
            1,
            mse=[p + d for p, d in zip(plain, shift)],
            images=images,
            calibration=calibration,
        ),
    }
    (paired,) = TaqReport(rows, None, [], ["a"], 10, calibrations=2).paired()
    assert paired.per_calibration == pytest.approx((-2e-4, 1e-4))
    assert paired.mse.mean == pytest.approx(-5e-5) and paired.closer == 1.0
    assert "-2.0e-04 / +1.0e-04" in TaqReport(rows, None, [], ["a"], 10, calibrations=2).paired_table()


def test_mean_interval_brackets_the_mean_and_is_a_point_without_spread():
    from personalq.stats import mean_interval

    interval = mean_interval([0.0, 1.0] * 20)
    assert interval.low < interval.mean == 0.5 < interval.high
    assert mean_interval([3.0, 3.0]) == mean_interval([3.0]) and mean_interval([3.0]).low == 3.0
    with pytest.raises(ValueError):
        mean_interval([])


# --- the step error ----------------------------------------------------------------------------------------------


def test_step_error_replays_each_pipeline_call_and_is_zero_for_the_same_unet():
    """Two pipeline calls of two prompts each: every 2nd of 5 steps recorded per call (3 each), each call its own
    batch; the same UNet replayed gives exactly zero, a perturbed one a positive error per image, in generation
    order."""
    import copy

    from factories import tiny_sd_pipeline

    from personalq.eval.step_error import guided, recording_calls, step_error

    pipe = tiny_sd_pipeline()
    pipe.set_progress_bar_config(disable=True)
    with recording_calls(pipe.unet, every=2) as calls:
        for seed in (0, 1):
            pipe(
                ["a photo of a dog", "a cat"],
                num_inference_steps=5,
                guidance_scale=5.0,
                height=32,
                width=32,
                generator=torch.Generator().manual_seed(seed),
                output_type="latent",
            )
    assert [c.batch for c in calls] == [0, 0, 0, 1, 1, 1]
    assert all(c.sample.shape[0] == 4 for c in calls)  # classifier-free guidance: unconditional half first
    assert float(calls[0].timestep) > float(calls[1].timestep) > float(calls[2].timestep)

    same = step_error(pipe.unet, calls, 5.0)
    assert same.shape == (4,) and (same == 0).all()
    perturbed = copy.deepcopy(pipe.unet)
    with torch.no_grad():
        perturbed.conv_out.bias.add_(torch.tensor([0.0, 0.0, 0.0, 0.1]))
    # a constant shift of one output channel moves both halves alike, so guidance does not amplify it
    assert step_error(perturbed, calls, 5.0) == pytest.approx([0.1**2 / 4] * 4, rel=1e-4)
    with torch.no_grad():
        perturbed.conv_out.weight.mul_(1.1)
    assert (step_error(perturbed, calls, 5.0) > 0.1**2 / 4).all()

    # an SDXL UNet's extra conditioning is recorded and replayed with the call
    sdxl = tiny_unet(sdxl=True)
    with recording_calls(sdxl, every=1) as sdxl_calls, torch.no_grad():
        for t in (900, 500):
            sample, kwargs = unet_inputs(True, seed=t)
            sdxl(sample, t, **kwargs)
    assert [c.batch for c in sdxl_calls] == [0, 0] and set(sdxl_calls[0].added_cond_kwargs) == {
        "text_embeds",
        "time_ids",
    }
    assert (step_error(sdxl, sdxl_calls, 5.0) == 0).all()

    uncond, cond = torch.zeros(2, 4, 2, 2), torch.ones(2, 4, 2, 2)
    assert torch.equal(guided(torch.cat([uncond, cond]), 3.0), torch.full((2, 4, 2, 2), 3.0))
    with pytest.raises(ValueError):
        step_error(pipe.unet, [], 5.0)
