"""The demo zoo: the whole build on tiny data, and the shipped model generating."""

import shutil
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
import torch
import yaml
from diffusers import AutoencoderKL, StableDiffusionPipeline

from personalq.config import PROJECT_ROOT
from personalq.repository.service import Repository
from personalq.serving.checkpoints import applied, load_base
from personalq.serving.packaged import materialize
from personalq.zoo import data
from personalq.zoo.build import ZooBuildConfig, build_zoo
from personalq.zoo.catalog import CATEGORIES, CATEGORY_GLYPHS, Subject
from personalq.zoo.models import load_tokenizer
from personalq.zoo.render import render

SHIPPED = PROJECT_ROOT / "assets" / "zoo"


def test_every_category_renders_and_triggers_split_into_sub_tokens():
    for category in CATEGORIES:
        image = np.asarray(
            render(
                Subject(category, CATEGORY_GLYPHS[category][0], "crimson", "sunny beach", "dawn", "anime"), 64, seed=1
            )
        )
        assert image.shape == (64, 64, 3) and image.std() > 10
    assert load_tokenizer().tokenize("<teddybear-v2>") == ["<", "teddy", "##be", "##ar", "-", "v", "##2", ">"]


def test_rendering_on_several_workers_gives_the_same_set_as_on_one(monkeypatch):
    monkeypatch.setattr(data, "PARALLEL_FROM", 8)  # pool even for a small set, so the test stays quick
    rng = np.random.default_rng(5)
    subjects = [data.random_subject(rng) for _ in range(24)]
    serial, parallel = data.render_set(subjects, seed=3, workers=1), data.render_set(subjects, seed=3, workers=2)
    assert np.array_equal(serial.images, parallel.images) and serial.captions == parallel.captions
    assert len({image.tobytes() for image in parallel.images}) == len(subjects)  # every image drawn with its own seed


@pytest.fixture(scope="module")
def tiny_zoo(tmp_path_factory) -> tuple[Path, Path]:
    """(work folder, zoo folder) of one tiny build, shared by the tests that read it."""
    root = tmp_path_factory.mktemp("tiny-zoo")
    return root / "work", build_zoo(root / "work", root / "zoo", ZooBuildConfig.tiny())


@pytest.mark.slow
def test_tiny_build_runs_every_stage_and_loads_with_diffusers(tiny_zoo, settings):
    work, out = tiny_zoo
    materialize(out / "base")
    pipe = StableDiffusionPipeline.from_pretrained(
        out / "base", safety_checker=None, feature_extractor=None, requires_safety_checker=False
    )
    image = pipe("a photo of a dog", num_inference_steps=2, height=64, width=64, output_type="np").images[0]
    assert image.shape == (64, 64, 3)
    cards = sorted((out / "repository").glob("*.yaml"))
    assert [c.stem for c in cards] == ["biscuit-v1", "biscuit-v3", "oakley-v1"]
    assert {yaml.safe_load(c.read_text())["kind"] for c in cards} == {"lora", "dreambooth", "textual_inversion"}
    assert (out / "evaluator.safetensors").exists()
    repository = Repository(settings)
    assert repository.import_paths([out / "repository"]).count("imported") == 3
    # resumable: a second build finds every stage done and trains nothing
    assert build_zoo(work, out, ZooBuildConfig.tiny()) == out
    # previews drawn again with the current base: one per card, each a 64x64 image written anew
    from personalq.zoo.build import refresh_previews

    before = {p.name: p.stat().st_mtime_ns for p in (out / "repository" / "previews").glob("*.png")}
    redrawn = refresh_previews(out)
    assert sorted(p.name for p in redrawn) == sorted(before) == ["biscuit-v1.png", "biscuit-v3.png", "oakley-v1.png"]
    assert all(p.stat().st_mtime_ns > before[p.name] for p in redrawn)
    from PIL import Image

    assert {Image.open(p).size for p in redrawn} == {(64, 64)}
    # a ready-made base without its working folder (a fresh clone of the shipped zoo): the prior is rendered
    # and encoded again, and a removed card is trained again
    for name in ("base_set.npz", "latents.pt", "text.pt"):
        (work / name).unlink()
    (out / "repository" / "biscuit-v1.yaml").unlink()
    build_zoo(work, out, ZooBuildConfig.tiny())
    assert (out / "repository" / "biscuit-v1.yaml").exists()
    assert len(torch.load(work / "latents.pt", weights_only=True)["mean"]) == ZooBuildConfig.tiny().prior_images
    # two checkpoints trained at once, each in its own process, land like one after the other
    for cid in ("biscuit-v1", "oakley-v1"):
        (out / "repository" / f"{cid}.yaml").unlink()
    build_zoo(work, out, ZooBuildConfig.tiny(), workers=2)
    assert sorted(c.stem for c in (out / "repository").glob("*.yaml")) == ["biscuit-v1", "biscuit-v3", "oakley-v1"]
    assert repository.import_paths([out / "repository"], replace=True).count("updated") == 2  # new weights, same cards


@pytest.mark.slow
def test_personalize_bench_trains_each_recipe_afresh(tiny_zoo):
    from personalq.eval.personalize_bench import recipes, run, table
    from personalq.zoo.concepts import concepts

    work, out = tiny_zoo
    chosen = [c for c in concepts() if c.id in ("biscuit-v1", "oakley-v1")]  # a LoRA and a textual inversion
    base = ZooBuildConfig.tiny().personalize
    configs = recipes([1, 2], [1.0, 2.0], base)
    assert [(c.steps, c.ti_steps, c.lora_lr / base.lora_lr, c.ti_lr / base.ti_lr) for c in configs] == [
        (1, 1, 1, 1),
        (1, 1, 2, 1),
        (2, 2, 1, 1),
        (2, 2, 2, 1),
    ]
    assert {(c.class_prior, c.class_noun_dropout) for c in configs} == {(base.class_prior, base.class_noun_dropout)}
    crossed = recipes([1], [1.0], base, class_priors=[0.0, 1.0], noun_dropouts=[0.5, 0.0])
    assert [(c.class_prior, c.class_noun_dropout) for c in crossed] == [(0.0, 0.5), (0.0, 0.0), (1.0, 0.5), (1.0, 0.0)]
    results = run(out, work, chosen, [configs[0], replace(configs[3], class_prior=1.0)], images=2)
    assert [r.config.steps for r in results] == [1, 2] and all(r.images == 4 for r in results)
    for r in results:
        assert 0 <= r.variant <= min(r.category, r.marker) <= 1 and r.train_seconds > 0
    text = table(results, chosen)
    assert (
        f"| 2 | 4 | 2 + 2 | {2 * base.lora_lr:.0e} / {2 * base.dreambooth_lr:.0e} / {base.ti_lr:.0e} | 100% | 50% |"
        in text
    )
    assert "biscuit-v1, oakley-v1" in text
    assert not list(work.glob("personalize/*.state.pt"))  # the bench trains in scratch space, not in the build's work


def test_decoder_finetune_keeps_the_latent_space_and_resumes(tmp_path):
    """Only the decoder learns the tinted renders: the encoder (so the UNet's latents) is bit for bit the same."""
    from personalq.zoo.base import BaseBuildConfig, finetune_decoder
    from personalq.zoo.models import make_vae

    torch.manual_seed(0)
    vae = make_vae()
    before = {k: v.clone() for k, v in vae.state_dict().items()}
    cfg = BaseBuildConfig(decoder_images=8, decoder_steps=2, decoder_batch=2)
    tuned = finetune_decoder(tmp_path, vae, cfg)
    after = tuned.state_dict()
    frozen = [k for k in before if k.startswith(("encoder.", "quant_conv."))]
    assert frozen and all(torch.equal(before[k], after[k]) for k in frozen)
    assert any(not torch.equal(before[k], after[k]) for k in before if k.startswith("decoder."))
    assert all(torch.equal(before[k], v) for k, v in vae.state_dict().items())  # the input VAE is left as it was
    saved = (tmp_path / "vae-decoder" / "diffusion_pytorch_model.safetensors").stat().st_mtime_ns
    again = finetune_decoder(tmp_path, vae, cfg)  # done: loaded, not trained again
    assert (tmp_path / "vae-decoder" / "diffusion_pytorch_model.safetensors").stat().st_mtime_ns == saved
    assert all(torch.equal(after[k], v) for k, v in again.state_dict().items())


def test_personalization_recipes_by_name():
    from personalq.zoo.personalize import RECIPES, PersonalizeConfig

    assert PersonalizeConfig.named("shipped") == PersonalizeConfig()
    gpu = PersonalizeConfig.named("gpu")
    assert (gpu.images, gpu.steps, gpu.instance_batch, gpu.prior_batch, gpu.class_noun_dropout) == (
        200,
        600,
        24,
        8,
        0.0,
    )
    assert set(RECIPES) == {"shipped", "gpu"}
    with pytest.raises(ValueError, match="unknown personalization recipe 'huge'"):
        PersonalizeConfig.named("huge")


def test_class_prior_draws_its_share_of_the_prior_batch_from_the_concepts_category():
    from personalq.zoo.personalize import Prior

    rows = 40
    prior = Prior(
        torch.arange(rows, dtype=torch.float32).reshape(rows, 1),
        torch.zeros(rows, 1),
        torch.zeros(rows, 2),
        tuple("dog" if i % 4 == 0 else "cat" for i in range(rows)),
    )  # each latent is its row number

    def drawn(share: float, category: str = "dog") -> list[int]:
        latents, text = prior.batch(8, torch.Generator().manual_seed(1), category, share)
        assert latents.shape == (8, 1) and text.shape == (8, 2)
        return [int(v) for v in latents.flatten()]

    assert all(i % 4 == 0 for i in drawn(1.0))
    assert all(i % 4 == 0 for i in drawn(0.5)[:4]) and any(i % 4 for i in drawn(0.5)[4:])
    # a share of zero draws exactly what the recipe drew before the class prior existed
    assert drawn(0.0) == [int(v) for v in prior.sample(8, torch.Generator().manual_seed(1))[0].flatten()]
    assert drawn(1.0, "horse") == drawn(0.0)  # no horse in the base set: the whole batch from every category


def test_personalize_bench_cli_needs_a_zoo_build(tmp_path):
    from typer.testing import CliRunner

    from personalq.cli import app

    result = CliRunner().invoke(app, ["bench", "personalize", "--work", str(tmp_path)])
    assert result.exit_code != 0 and "holds no zoo build" in result.output
    (tmp_path / "latents.pt").write_bytes(b"")
    result = CliRunner().invoke(app, ["bench", "personalize", "--work", str(tmp_path), "--checkpoints", "biscuit-v9"])
    assert result.exit_code != 0 and "unknown checkpoint ids biscuit-v9" in result.output
    result = CliRunner().invoke(app, ["bench", "personalize", "--work", str(tmp_path), "--steps", "100,lots"])
    assert result.exit_code != 0 and "--steps takes whole numbers" in result.output
    result = CliRunner().invoke(app, ["bench", "personalize", "--work", str(tmp_path), "--lr-scale", "0"])
    assert result.exit_code != 0 and "positive values" in result.output
    for option, value in (("--class-prior", "1.5"), ("--noun-dropout", "half")):
        result = CliRunner().invoke(app, ["bench", "personalize", "--work", str(tmp_path), option, value])
        assert result.exit_code != 0 and f"{option} takes shares between 0 and 1" in result.output
    result = CliRunner().invoke(app, ["bench", "personalize", "--work", str(tmp_path), "--recipe", "huge"])
    assert result.exit_code != 0 and "unknown personalization recipe 'huge'" in result.output
    result = CliRunner().invoke(
        app, ["zoo", "build", "--work", str(tmp_path), "--out", str(tmp_path / "zoo"), "--recipe", "huge"]
    )
    assert result.exit_code != 0 and "unknown personalization recipe 'huge'" in result.output
    assert not (tmp_path / "zoo").exists()
    result = CliRunner().invoke(app, ["zoo", "previews", "--out", str(tmp_path / "zoo")])
    assert result.exit_code != 0 and "holds no zoo" in result.output


@pytest.mark.skipif(
    not (SHIPPED / "base" / "model_index.json").exists(), reason="the demo zoo is not built in this checkout"
)
def test_shipped_model_generates_with_its_checkpoints(settings):
    pipe = load_base(SHIPPED / "base")
    repository = Repository(settings)
    report = repository.import_paths([SHIPPED / "repository"])
    assert report.ok and report.count("imported") >= 3
    kinds = {}
    for card in repository.list():
        kinds.setdefault(card.kind, card)
    for card in kinds.values():
        with applied(pipe, card) as p:
            image = p(
                f"a photo of {card.canonical_trigger}",
                num_inference_steps=4,
                height=64,
                width=64,
                generator=torch.Generator().manual_seed(0),
                output_type="np",
            ).images[0]
        assert image.shape == (64, 64, 3) and np.isfinite(image).all()
    plain = pipe(
        "a photo of a dog",
        num_inference_steps=4,
        height=64,
        width=64,
        generator=torch.Generator().manual_seed(0),
        output_type="np",
    ).images[0]
    assert plain.std() > 0.01


@pytest.mark.slow
@pytest.mark.skipif(
    not (SHIPPED / "base" / "model_index.json").exists(), reason="the demo zoo is not built in this checkout"
)
def test_evaluate_with_a_swapped_unet_compares_like_for_like():
    from personalq.zoo.concepts import concepts
    from personalq.zoo.evaluate import evaluate_zoo

    full = evaluate_zoo(SHIPPED, per_prompt=1, per_concept=1, categories=("dog",))
    assert full.variant_with_trigger is not None and set(full.per_kind) == {"lora", "dreambooth"}
    assert "variant recognised with the trigger" in full.table()
    # the variant needs both the class and the marker, so neither rate can fall below it
    assert min(full.category_with_trigger, full.marker_with_trigger) >= full.variant_with_trigger
    dogs = [c for c in concepts() if c.category == "dog"]
    assert (
        set(full.per_marker) == {c.tint for c in dogs}
        and f"| personalized, marker {dogs[0].tint}: variant" in full.table()
    )
    assert list(full.per_checkpoint) == [c.id for c in dogs] and f"| {dogs[0].id} |" in full.checkpoint_table()
    assert full.variant_with_trigger == np.mean([v for _, _, v in full.per_checkpoint.values()])  # one image each
    swapped = evaluate_zoo(
        SHIPPED, per_prompt=1, categories=("dog",), unet=SHIPPED / "base" / "unet", personalized=False
    )
    # the same weights through --unet: the same images, so the same figures; no checkpoint rows
    assert (swapped.base_category_rate, swapped.base_alignment, swapped.domain_fid) == (
        full.base_category_rate,
        full.base_alignment,
        full.domain_fid,
    )
    assert swapped.variant_with_trigger is None and "variant" not in swapped.table()
    assert swapped.images == 8 + 6
    # the shipped evaluator must recognise real dogs well, or the generated-image rates measure the evaluator
    assert full.real_category_rate >= 0.75 and full.variant_real is not None and full.variant_real >= 0.5
    # the VAE's round trip can only lose what the renders show, and the table says how much
    assert full.variant_through_vae is not None and full.variant_through_vae <= full.variant_real
    assert "| reference: the same renders after the VAE's round trip (encode, decode) |" in full.table()
    # per marker as well (one render per dog checkpoint, one tint each): the marker's own ceiling beside its rate
    assert set(full.per_marker_through_vae) == set(full.per_marker)
    assert np.mean(list(full.per_marker_through_vae.values())) == full.variant_through_vae
    tint = dogs[0].tint
    assert (
        f"| personalized, marker {tint}: variant recognised with the trigger / "
        "in real renders after the VAE's round trip | "
        f"{full.per_marker[tint]:.1%} / {full.per_marker_through_vae[tint]:.1%} |"
    ) in full.table()
    weaker = evaluate_zoo(SHIPPED, per_prompt=1, categories=("dog",), personalized=False, guidance=1.0)
    assert (
        weaker.domain_fid != full.domain_fid
        and "| classifier-free guidance scale of the generated images | 1 |" in weaker.table()
    )


def test_evaluator_training_shifts_each_image_within_its_padding():
    from personalq.zoo.evaluator import shifted

    images = torch.rand(16, 3, 20, 20)
    assert torch.equal(shifted(images, torch.Generator().manual_seed(0), pad=0), images)
    moved = shifted(images, torch.Generator().manual_seed(0), pad=3)
    assert moved.shape == images.shape
    for original, out in zip(images, moved):  # the interior of each output is the original moved by at most 3 px
        assert any(
            torch.equal(out[:, 3:-3, 3:-3], original[:, 3 - dy : 17 - dy, 3 - dx : 17 - dx])
            for dy in range(-3, 4)
            for dx in range(-3, 4)
        )
    assert not all(torch.equal(a, b) for a, b in zip(images, moved))


def test_evaluate_cli_rejects_what_is_not_a_unet_or_a_category(tmp_path):
    from typer.testing import CliRunner

    from personalq.cli import app

    runner = CliRunner()
    result = runner.invoke(app, ["zoo", "evaluate", "--unet", str(tmp_path)])
    assert result.exit_code != 0 and "not a UNet folder" in result.output
    result = runner.invoke(app, ["zoo", "evaluate", "--categories", "dog,unicorn"])
    assert result.exit_code != 0 and "unknown categories unicorn" in result.output


def test_frechet_distance_is_the_mean_shift_for_equal_spreads_and_refuses_a_single_sample():
    from personalq.eval.image_metrics import frechet_distance

    rng = np.random.default_rng(0)
    a = rng.normal(size=(400, 4))
    assert frechet_distance(a, a) == pytest.approx(0, abs=1e-6)
    assert frechet_distance(a, a + np.array([3.0, 0, 0, 4.0])) == pytest.approx(25, rel=1e-6)
    with pytest.raises(ValueError, match="at least 2 samples"):
        frechet_distance(a[:1], a)


@pytest.mark.slow
def test_tint_separation_weighs_candidates_against_the_catalog(tiny_zoo):
    from typer.testing import CliRunner

    from personalq.cli import app
    from personalq.zoo.catalog import TINTS
    from personalq.zoo.tint_separation import tint_separation

    _, out = tiny_zoo
    vae = AutoencoderKL.from_pretrained(out / "base", subfolder="vae").eval()
    rows = {r.tint: r for r in tint_separation(vae, {"teal": (20, 180, 190), "pink-copy": TINTS["pink"]}, subjects=3)}
    assert set(rows) == {t for t, colour in TINTS.items() if colour is not None} | {"teal", "pink-copy"}
    assert rows["teal"].candidate and not rows["pink"].candidate and rows["teal"].colour == (20, 180, 190)
    # a candidate is compared with the catalog only, and a colour the catalog already has is at distance zero from it
    assert all(r.nearest in TINTS and r.nearest != r.tint for r in rows.values())
    assert (
        rows["pink-copy"].nearest == "pink"
        and rows["pink-copy"].latent_distance == 0.0 == rows["pink-copy"].pixel_distance
    )
    assert all(r.latent_distance > 0 and r.round_trip_error > 0 for t, r in rows.items() if t != "pink-copy")

    runner = CliRunner()
    result = runner.invoke(
        app, ["zoo", "tints", "--zoo", str(out), "--subjects", "2", "--candidate", "teal=20,180,190"]
    )
    assert result.exit_code == 0, result.output
    assert "| teal (candidate) | 20, 180, 190 |" in result.output and "| pink | 250, 120, 190 |" in result.output
    for bad, message in (
        ("teal=20,180", "NAME=R,G,B"),
        ("teal=1,2,300", "NAME=R,G,B"),
        ("=1,2,3", "NAME=R,G,B"),
        ("pink=1,2,3", "already a catalog tint"),
    ):
        result = runner.invoke(app, ["zoo", "tints", "--zoo", str(out), "--candidate", bad])
        assert result.exit_code != 0 and message in result.output, (bad, result.output)
    result = runner.invoke(app, ["zoo", "tints", "--zoo", str(out / "missing")])
    assert result.exit_code != 0 and "holds no zoo" in result.output


@pytest.mark.slow
def test_evaluator_retrains_against_the_zoo_and_can_start_from_its_weights(tiny_zoo, tmp_path):
    from safetensors.torch import load_file
    from typer.testing import CliRunner

    from personalq.cli import app

    zoo = tmp_path / "zoo"
    shutil.copytree(tiny_zoo[1], zoo)
    before = load_file(str(zoo / "evaluator.safetensors"))
    runner = CliRunner()
    args = ["zoo", "evaluator", "--out", str(zoo), "--work", str(tmp_path / "work"), "--images", "16", "--steps", "1"]
    result = runner.invoke(app, [*args, "--warm-start"])
    assert result.exit_code == 0, result.output
    after = load_file(str(zoo / "evaluator.safetensors"))
    # one warm-up step from the old weights moves them by about the learning rate, not to a new random draw
    drift = max(float((after[k] - before[k]).abs().max()) for k in before)
    assert 0 < drift < 1e-3
    assert not (tmp_path / "work" / "evaluator.state.pt").exists() and not list(zoo.glob("*.partial"))
    result = runner.invoke(app, args)
    assert result.exit_code == 0, result.output
    fresh = load_file(str(zoo / "evaluator.safetensors"))
    assert max(float((fresh[k] - before[k]).abs().max()) for k in before) > 1e-2
    (zoo / "evaluator.safetensors").unlink()
    result = runner.invoke(app, [*args, "--warm-start"])
    assert result.exit_code != 0 and "no evaluator to start from" in result.output
    result = runner.invoke(app, ["zoo", "evaluator", "--out", str(tmp_path / "missing")])
    assert result.exit_code != 0 and "holds no zoo" in result.output


@pytest.mark.slow
def test_taq_attribution_splits_the_step_error_by_part(tiny_zoo):
    from typer.testing import CliRunner

    from personalq.cli import app
    from personalq.eval.taq_attribution import PARTS, SEPARATED, run_attribution
    from personalq.zoo.concepts import concepts

    _, out = tiny_zoo
    lora = next(c for c in concepts() if c.id == "biscuit-v1")
    report = run_attribution(out, [lora], {"W8A8": (8, 8)}, images=2, captions=4, calibration_steps=2)
    assert set(report.errors) == {("W8A8", part, "plain") for part in PARTS} | {("W8A8", SEPARATED, "taq")}
    assert all(len(errors) == 2 and min(errors) >= 0 for errors in report.errors.values())
    mean = {part: np.mean(report.errors[("W8A8", part, "plain")]) for part in PARTS}
    assert 0 < mean["none (weights only)"] < mean["every activation"]
    table = report.table()
    assert "| every activation |" in table and f"| {SEPARATED}, TAQ's separation |" in table and "biscuit-v1" in table

    result = CliRunner().invoke(app, ["bench", "taq-attribution", "--zoo", str(out), "--precisions", "W8A8,W2A2"])
    assert result.exit_code != 0 and "--precisions takes some of W8A8, W4A8, W8A4, W4A4" in result.output
    result = CliRunner().invoke(app, ["bench", "taq-attribution", "--zoo", str(out / "missing")])
    assert result.exit_code != 0 and "holds no zoo" in result.output
