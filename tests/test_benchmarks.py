"""The generators behind the benchmarks: deterministic, and never colliding with the ground truth."""

from typer.testing import CliRunner

from personalq.cli import app
from personalq.eval.repo_prompts import build_repository, distractor_records


def test_distractors_are_deterministic_and_never_collide_with_repo_prompts():
    truth = build_repository(0)
    more = distractor_records(2_500, seed=0)
    assert [r.id for r in more] == [r.id for r in distractor_records(2_500, seed=0)]
    assert len({r.id for r in more}) == 2_500
    assert not {r.family for r in more} & {r.family for r in truth}
    assert not {r.trigger for r in more} & {r.trigger for r in truth}
    assert {len([r for r in more if r.family == f]) for f in {r.family for r in more[:1000]}} == {10}


def test_latency_bench_refuses_sizes_below_the_repo_prompts_repository():
    result = CliRunner().invoke(app, ["bench", "latency", "--sizes", "500"])
    assert result.exit_code != 0 and "at least 1000" in result.output
    result = CliRunner().invoke(app, ["bench", "latency", "--sizes", "1000,lots"])
    assert result.exit_code != 0 and "whole numbers" in result.output
