"""``personalq bench``: benchmarks that print the figures benchmarks/README.md reports."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Optional

import typer

from personalq.bundled import zoo_dir
from personalq.cli.common import (
    FirstLastOption,
    HomeOption,
    SmoothingOption,
    comma_list,
    fail,
    recipe_overrides,
    settings_for,
    zoo_folder,
)

app = typer.Typer(help="Benchmarks.", no_args_is_help=True)


@app.command("import")
def import_(
    jsonl: Annotated[
        Path, typer.Argument(help="Civitai dump, one model per line (shared/data/civitai-models-2023-07.jsonl)")
    ],
) -> None:
    """Import every model version of a Civitai dump as card files; print the rate and the index rebuild time."""
    from personalq.eval.import_bench import run

    result = run(jsonl)
    typer.echo(result.table())


@app.command("repo-prompts")
def repo_prompts(
    out: Annotated[Path, typer.Option(help="folder for cards/ and repo-prompts.jsonl")],
    seed: Annotated[int, typer.Option(help="generator seed")] = 0,
) -> None:
    """Generate the Repo-Prompts repository (1,000 cards) and its 500 requests with ground truth."""
    from personalq.eval.repo_prompts import write

    cards, prompts = write(out, seed)
    typer.echo(f"cards: {cards}\nprompts: {prompts}")


@app.command("latency")
def latency(
    sizes: Annotated[
        str, typer.Option(help="repository sizes, comma-separated (the first 1,000 are Repo-Prompts)")
    ] = "1000,10000,100000",
    requests: Annotated[int, typer.Option(help="timed Check-in requests per size")] = 200,
) -> None:
    """Check-in latency (p50 / p95) against repository size, on the local engine."""
    from personalq.eval.latency_bench import run, table

    try:
        wanted = sorted({int(s) for s in comma_list(sizes)})
    except ValueError:
        fail(f"--sizes takes whole numbers separated by commas, not {sizes!r}")
    if not wanted or wanted[0] < 1000:
        fail("every size must be at least 1000 (the Repo-Prompts repository itself)")
    typer.echo(table(run(wanted, requests)))


@app.command("checkin")
def checkin(
    prompts: Annotated[Path, typer.Option(help="Repo-Prompts JSONL file")],
    method: Annotated[str, typer.Option(help="checkin | dense | random | reranker | all")] = "checkin",
    out: Annotated[
        Optional[Path], typer.Option(help="predictions JSONL (with --method all: one file per method, suffixed)")
    ] = None,
    misses: Annotated[bool, typer.Option(help="list every miss with its reason after the tables")] = True,
    scenes: Annotated[
        Optional[Path],
        typer.Option(
            help="side file of scene / drop / answer_drop annotations by instance_id (when the prompts lack them)"
        ),
    ] = None,
    home: HomeOption = None,
) -> None:
    """Run a selection method over every instance, write predictions, print the metrics table, a confusion table
    (truth status x predicted status) per method and every miss with the reason the method gave. Instances annotated
    with ``scene`` and ``drop`` phrases also score the image prompt: kept, clean, both, and end to end."""
    from personalq.checkin.backends import make_checkin
    from personalq.eval.checkin_bench import evaluate, load_instances
    from personalq.eval.checkin_metrics import (
        RubricJudge,
        confusion_table,
        misses_table,
        prompt_misses_table,
        table,
    )
    from personalq.rating.selection_methods import MethodUnavailable, make_method
    from personalq.repository.service import Repository

    settings = settings_for(home)
    repository = Repository(settings)
    instances = load_instances(prompts, scenes)
    names = ["checkin", "dense", "reranker", "random"] if method == "all" else [method]
    results: dict[str, dict | str] = {}
    for name in names:
        try:
            chosen = make_method(name, repository, make_checkin(settings, repository) if name == "checkin" else None)
        except MethodUnavailable as exc:
            results[name] = "unavailable"
            typer.echo(f"{name}: unavailable ({exc})", err=True)
            continue
        target = out if out is None or len(names) == 1 else out.with_name(f"{out.stem}.{name}{out.suffix}")
        results[name] = evaluate(chosen, instances, RubricJudge(repository), target)
    typer.echo(table(results))
    scored = {name: result for name, result in results.items() if isinstance(result, dict)}
    for name, result in scored.items():
        typer.echo("\n" + confusion_table(name, result))
    if misses:
        for name, result in scored.items():
            typer.echo("\n" + misses_table(name, result))
            if "prompt_misses" in result:
                typer.echo("\n" + prompt_misses_table(name, result))


@app.command("taq")
def taq(
    zoo: Annotated[Optional[Path], typer.Option(help="zoo folder; default assets/zoo")] = None,
    checkpoints: Annotated[int, typer.Option(help="personalized checkpoints to evaluate")] = 6,
    images: Annotated[int, typer.Option(help="images per checkpoint and configuration")] = 8,
    captions: Annotated[int, typer.Option(help="calibration captions per checkpoint")] = 64,
    calibration_steps: Annotated[int, typer.Option(help="denoising steps per calibration caption")] = 10,
    calibrations: Annotated[
        int,
        typer.Option(help="calibrations per checkpoint (other captions and samples); rows are generated under each"),
    ] = 1,
    sensitivity: Annotated[bool, typer.Option(help="also run the per-token sensitivity analysis")] = True,
    adaround: Annotated[
        bool, typer.Option(help="add W4A8 / W4A4 TAQ rows with AdaRound (slow: learned rounding per layer)")
    ] = False,
    quantizers: Annotated[
        str, typer.Option(help="comma-separated quantizers for the table: linear, log")
    ] = "linear,log",
    float_kv: Annotated[
        bool, typer.Option(help="add BOS / TAQ rows whose protected K/V rows use float K/V weights")
    ] = False,
    precisions: Annotated[
        str,
        typer.Option(
            help="comma-separated rows: W8A8, W4A8, W8A4, W4A4, and the ablation xattn-A8, "
            "xattn-A4 (float weights, only cross-attention activations quantized)"
        ),
    ] = "W8A8,W4A8,W8A4,W4A4",
    plot: Annotated[Path, typer.Option(help="where the sensitivity bar chart is written")] = Path(
        "benchmarks/taq-sensitivity.png"
    ),
    seed: Annotated[
        int, typer.Option(help="seed of the generated images (the same in every row): another seed, other images")
    ] = 11,
    smoothing: SmoothingOption = None,
    first_last_8bit: FirstLastOption = None,
    home: HomeOption = None,
) -> None:
    """Per-token sensitivity and the FP32 / W8A8 / W4A8 / W8A4 / W4A4 x plain / BOS / TAQ x linear / log table."""
    from personalq.eval.taq_bench import ALL_PRECISIONS, run_taq_bench

    chosen = tuple(comma_list(quantizers))
    if not chosen or set(chosen) - {"linear", "log"}:
        fail(f"--quantizers takes linear and/or log, not {quantizers!r}")
    if calibrations < 1:
        fail(f"--calibrations must be at least 1, not {calibrations}")
    rows = tuple(comma_list(precisions))
    if not rows or set(rows) - set(ALL_PRECISIONS):
        fail(f"--precisions takes some of {', '.join(ALL_PRECISIONS)}, not {precisions!r}")
    settings = settings_for(home)
    report = run_taq_bench(
        zoo or zoo_dir(settings),
        checkpoints,
        images,
        captions,
        calibration_steps,
        sensitivity,
        quantizers=chosen,
        adaround=adaround,
        float_kv=float_kv,
        calibrations=calibrations,
        precisions=rows,
        seed=seed,
        recipe=recipe_overrides(smoothing, first_last_8bit),
    )
    typer.echo(report.table())
    typer.echo("\nTAQ against each baseline, image by image:\n\n" + report.paired_table())
    typer.echo(
        "\nHow much each separation narrows the cross-attention ranges of the tokens it still rounds:\n\n"
        + report.headroom_table()
    )
    if report.tokens:
        typer.echo("\n" + report.sensitivity_table())
        typer.echo(f"\nplot: {report.plot(plot)}")


@app.command("taq-attribution")
def taq_attribution(
    zoo: Annotated[Optional[Path], typer.Option(help="zoo folder; default assets/zoo")] = None,
    checkpoints: Annotated[int, typer.Option(min=1, help="personalized checkpoints (the taq bench's first ones)")] = 2,
    images: Annotated[int, typer.Option(min=1, max=16, help="trigger prompts per checkpoint")] = 8,
    precisions: Annotated[str, typer.Option(help="comma-separated: W8A8, W4A8, W8A4, W4A4")] = "W8A8,W8A4",
    smoothing: SmoothingOption = None,
    first_last_8bit: FirstLastOption = None,
    home: HomeOption = None,
) -> None:
    """Step error with activation quantization left on in one part of the UNet at a time: where the error is."""
    from personalq.eval.taq_attribution import run_attribution
    from personalq.eval.taq_bench import pick_concepts
    from personalq.serving.variants import QUANTIZED_PRECISIONS

    rows = tuple(comma_list(precisions))
    if not rows or set(rows) - set(QUANTIZED_PRECISIONS):
        fail(f"--precisions takes some of {', '.join(QUANTIZED_PRECISIONS)}, not {precisions!r}")
    report = run_attribution(
        zoo_folder(zoo, settings_for(home)),
        pick_concepts(checkpoints),
        {p: QUANTIZED_PRECISIONS[p] for p in rows},
        images,
        recipe=recipe_overrides(smoothing, first_last_8bit),
    )
    typer.echo(report.table())


@app.command("personalize")
def personalize(
    steps: Annotated[
        Optional[str], typer.Option(help="fine-tuning step counts to compare, comma-separated; default the recipe's")
    ] = None,
    lr_scale: Annotated[
        str, typer.Option(help="multipliers of the LoRA and DreamBooth learning rates to compare, comma-separated")
    ] = "1,2.5",
    class_prior: Annotated[
        Optional[str],
        typer.Option(
            help="shares (0-1) of each prior batch drawn from the checkpoint's own category, comma-separated; "
            "default the recipe's"
        ),
    ] = None,
    noun_dropout: Annotated[
        Optional[str],
        typer.Option(
            help="shares (0-1) of instance captions without the class noun, comma-separated; default the recipe's"
        ),
    ] = None,
    recipe: Annotated[
        str, typer.Option(help="the recipe the axes vary: shipped or gpu (more images, bigger batches)")
    ] = "shipped",
    checkpoints: Annotated[str, typer.Option(help="concept ids to train again, comma-separated")] = (
        "biscuit-v1,mochi-v1,teddybear-v2,zoomy-v1,ticker-v1,skyline-v3"
    ),
    images: Annotated[int, typer.Option(help="images per checkpoint and recipe")] = 8,
    zoo: Annotated[Optional[Path], typer.Option(help="zoo folder; default assets/zoo")] = None,
    work: Annotated[Optional[Path], typer.Option(help="the zoo build's working folder; default HOME/zoo-work")] = None,
    home: HomeOption = None,
) -> None:
    """Train the same personalized checkpoints with each recipe (every combination of the axes); category, marker and \
variant rates."""
    from personalq.eval.personalize_bench import recipes, run, table
    from personalq.zoo.concepts import concepts
    from personalq.zoo.personalize import PersonalizeConfig

    settings = settings_for(home)
    work = work or settings.home / "zoo-work"
    if not (work / "latents.pt").is_file():
        fail(f"{work} holds no zoo build (latents.pt): run `personalq zoo build` first or pass --work")
    known = {c.id: c for c in concepts()}
    wanted = comma_list(checkpoints)
    if not wanted:
        fail("--checkpoints names no checkpoint")
    if unknown := [i for i in wanted if i not in known]:
        fail(f"unknown checkpoint ids {', '.join(unknown)}; the zoo's ids look like biscuit-v1")
    try:
        base = PersonalizeConfig.named(recipe)
    except ValueError as error:
        fail(str(error))
    steps = steps or str(base.steps)
    class_prior = class_prior or str(base.class_prior)
    noun_dropout = noun_dropout or str(base.class_noun_dropout)
    try:
        counts = [int(n) for n in comma_list(steps)]
        scales = [float(k) for k in comma_list(lr_scale)]
    except ValueError:
        fail(f"--steps takes whole numbers and --lr-scale numbers, comma-separated, not {steps!r} / {lr_scale!r}")
    if not counts or min(counts) < 1 or not scales or min(scales) <= 0:
        fail(f"--steps and --lr-scale take positive values, not {steps!r} / {lr_scale!r}")
    shares = {}
    for option, text in (("--class-prior", class_prior), ("--noun-dropout", noun_dropout)):
        try:
            shares[option] = [float(v) for v in comma_list(text)]
            if not shares[option] or not all(0 <= v <= 1 for v in shares[option]):
                raise ValueError(text)
        except ValueError:
            fail(f"{option} takes shares between 0 and 1, comma-separated, not {text!r}")
    chosen = [known[i] for i in wanted]
    configs = recipes(
        counts, scales, base, class_priors=shares["--class-prior"], noun_dropouts=shares["--noun-dropout"]
    )
    results = run(zoo or zoo_dir(settings), work, chosen, configs, images, device=settings.resolved_device())
    typer.echo(table(results, chosen))


@app.command("serve")
def serve_(
    rounds: Annotated[int, typer.Option(help="timed requests per measurement")] = 5,
    people: Annotated[int, typer.Option(help="simulated people at once (0 skips the concurrency run)")] = 8,
    requests_each: Annotated[int, typer.Option(help="requests per simulated person")] = 2,
    home: HomeOption = None,
) -> None:
    """First preview and full image after a message, precisions side by side, concurrent people (p50/p95)."""
    from personalq.eval.serve_bench import run_serve_bench

    report = run_serve_bench(settings_for(home), rounds, people, requests_each)
    typer.echo(report.table())
    for error in report.concurrent_errors:
        typer.secho(error, fg=typer.colors.RED, err=True)


@app.command("preference")
def preference(
    simulate: Annotated[int, typer.Option(help="simulated raters to add first (0: only the stored human votes)")] = 0,
    noise: Annotated[float, typer.Option(help="probability that a simulated rater answers at random")] = 0.1,
    csv: Annotated[Optional[Path], typer.Option(help="also write every vote to this CSV file")] = None,
    llm_judge: Annotated[
        bool, typer.Option(help="also score with the configured LLM (both orders); needs a key")
    ] = False,
    home: HomeOption = None,
) -> None:
    """Check-in's win rate against each baseline (95% bootstrap CI), Bradley-Terry scores, agreement, intent scores."""
    from personalq.checkin.backends import make_checkin
    from personalq.rating.analysis import results_table
    from personalq.rating.items import all_items
    from personalq.rating.pairs import PairMaker
    from personalq.rating.simulate import intent_scores
    from personalq.rating.simulate import simulate as run_simulation
    from personalq.rating.votes import VoteStore
    from personalq.runtime import start

    settings = settings_for(home)
    runtime = start(settings)
    maker = PairMaker(runtime.repository, make_checkin(settings, runtime.repository))
    store = VoteStore(runtime.repository)
    items = all_items(runtime.repository)
    if simulate:
        written = run_simulation(maker, store, items, raters=simulate, noise=noise)
        typer.echo(f"{written} simulated votes written")
    votes = store.all()
    if not votes:
        typer.echo("no votes yet: rate in the app's Rate tab, or pass --simulate N")
        raise typer.Exit(0)
    not_asked = (len(items) - len(maker.askable(items)), len(items))
    typer.echo(results_table(votes, intent_scores(maker, items), not_asked))
    if llm_judge:
        if settings.llm_backend == "local" or not (settings.llm_api_key or settings.llm_base_url):
            fail("--llm-judge needs PERSONALQ_LLM_BACKEND=gemini|openai and a key or endpoint")
        from personalq.checkin.llm import make_client
        from personalq.rating.llm_judge import LLMJudge, llm_intent_scores

        means, consistency = llm_intent_scores(LLMJudge(make_client(settings)), maker, items)
        typer.echo(
            "Intent score (LLM judge, both orders, 1-5): "
            + ", ".join(f"{m} {s:.2f}" for m, s in sorted(means.items()))
            + f"; consistent verdicts {consistency:.0%}"
        )
    if csv:
        csv.write_text(store.csv())
        typer.echo(f"votes written to {csv}")
