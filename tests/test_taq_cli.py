"""TAQ on the command line: the bench's option checks and the recipe options."""

from __future__ import annotations

from personalq.taq.quantize import TAQConfig


def test_taq_bench_cli_refuses_unknown_quantizers_and_no_calibration():
    from typer.testing import CliRunner

    from personalq.cli import app

    result = CliRunner().invoke(app, ["bench", "taq", "--quantizers", "linear,cubic"])
    assert result.exit_code != 0 and "--quantizers takes linear and/or log" in result.output
    result = CliRunner().invoke(app, ["bench", "taq", "--calibrations", "0"])
    assert result.exit_code != 0 and "--calibrations must be at least 1" in result.output
    result = CliRunner().invoke(app, ["bench", "taq", "--precisions", "W8A8,W2A2"])
    assert (
        result.exit_code != 0
        and "--precisions takes some of W8A8, W4A8, W8A4, W4A4, xattn-A8, xattn-A4" in result.output
    )
    for smoothing in ("1.5", "strong"):
        result = CliRunner().invoke(app, ["bench", "taq", "--smoothing", smoothing])
        assert result.exit_code != 0 and "--smoothing takes a number from 0 to 1 or 'none'" in result.output


def test_recipe_options_override_only_what_they_name():
    from personalq.cli.common import recipe_overrides

    assert recipe_overrides(None, None) == {}
    assert recipe_overrides("none", False) == {"smoothing": None, "first_last_8bit": False}
    config = TAQConfig(wbits=4, abits=4, **recipe_overrides("0.5", None))
    assert config.smoothing == 0.5 and config.first_last_8bit and config.tag == "w4a4-taq-linear-sq0.5-ends8"
    assert TAQConfig(**recipe_overrides("none", False)).tag == "w8a8-taq-linear"
