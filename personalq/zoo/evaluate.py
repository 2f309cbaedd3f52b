"""``personalq zoo evaluate``: the demo zoo's quality and speed figures, from generated images."""

from __future__ import annotations

import statistics
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch
from diffusers import UNet2DConditionModel
from tqdm import tqdm

from personalq.eval.image_metrics import frechet_distance, recognised
from personalq.serving.checkpoints import applied, load_base
from personalq.zoo.build import stored_checkpoint
from personalq.zoo.catalog import CATEGORIES, CATEGORY_GLYPHS, SCENE_NAMES, Subject
from personalq.zoo.concepts import Concept, concepts
from personalq.zoo.data import render_set
from personalq.zoo.evaluator import Evaluator

STEPS = 20
GUIDANCE = 5.0
TIMED_RUNS = 6  # the first is a warm-up


def generate(pipe, prompts: list[str], seed: int, batch: int = 16) -> list:
    images = []
    for start in range(0, len(prompts), batch):
        generator = torch.Generator().manual_seed(seed + start)
        images += pipe(prompts[start : start + batch], num_inference_steps=STEPS, guidance_scale=GUIDANCE, generator=generator,
                       height=64, width=64).images
    return images


@dataclass
class ZooReport:
    base_category_rate: float
    base_alignment: float
    domain_fid: float
    real_vs_real_fid: float
    variant_with_trigger: float | None  # None when the personalized checkpoints were not evaluated
    variant_without_trigger: float | None
    per_kind: dict[str, float]
    seconds_per_image: float
    images: int

    def table(self) -> str:
        rows = [
            ("base: category recognised in 'a photo of a {category}, {scene}'", f"{self.base_category_rate:.1%}"),
            ("base: prompt alignment (category + scene)", f"{self.base_alignment:.3f}"),
            ("base: domain FID, generated vs real renders", f"{self.domain_fid:.2f}"),
            ("reference: domain FID, real vs other real renders", f"{self.real_vs_real_fid:.2f}"),
            *self._personalized_rows(),
            ("one 64x64 image, 20 steps, CFG (median of 5)", f"{self.seconds_per_image:.2f} s"),
            ("images generated for this table", str(self.images)),
        ]
        return "| measure | value |\n| --- | --- |\n" + "\n".join(f"| {a} | {b} |" for a, b in rows)

    def _personalized_rows(self) -> list[tuple[str, str]]:
        if self.variant_with_trigger is None or self.variant_without_trigger is None:
            return []
        return [
            ("personalized: variant recognised with the trigger", f"{self.variant_with_trigger:.1%}"),
            ("base without the trigger: variant recognised", f"{self.variant_without_trigger:.1%}"),
            *[(f"personalized ({kind}): variant recognised with the trigger", f"{rate:.1%}") for kind, rate in sorted(self.per_kind.items())],
        ]


def evaluate_zoo(zoo: Path, per_prompt: int = 2, per_concept: int = 4, seed: int = 7, unet: Path | None = None,
                 personalized: bool = True, categories: Sequence[str] = CATEGORIES) -> ZooReport:
    """The zoo's figures from freshly generated images, all at one seed so that two runs compare image for image.

    ``unet`` swaps in another base UNet (a folder from ``save_pretrained``, e.g. an earlier or later training
    step) with everything else fixed, so that base-model figures of two training steps compare side by side;
    ``personalized=False`` skips the checkpoints (they were trained on the shipped UNet, not on a swapped one).
    ``categories`` narrows both parts to a subset, for a quick look.
    """
    zoo = Path(zoo)
    pipe = load_base(zoo / "base")
    if unet is not None:
        pipe.unet = UNet2DConditionModel.from_pretrained(unet, torch_dtype=torch.float32)
    evaluator = Evaluator.load(zoo / "evaluator.safetensors")
    base = _base_figures(pipe, evaluator, categories, per_prompt, seed)
    built = [c for c in concepts() if c.category in categories and (zoo / "repository" / f"{c.id}.yaml").exists()] if personalized else []
    with_trigger, without_trigger, per_kind = _personalized_figures(pipe, evaluator, zoo, built, per_concept, seed)
    return ZooReport(*base, float(np.mean(with_trigger)) if with_trigger else None, float(np.mean(without_trigger)) if without_trigger else None,
                     {k: float(np.mean(v)) for k, v in per_kind.items()}, seconds_per_image(pipe),
                     len(categories) * len(SCENE_NAMES) * per_prompt + 2 * len(with_trigger) + TIMED_RUNS)


def _base_figures(pipe, evaluator: Evaluator, categories: Sequence[str], per_prompt: int, seed: int) -> tuple[float, float, float, float]:
    """Category rate, alignment, domain FID and the real-vs-real reference FID of the base on every (category, scene)."""
    subjects = [(c, s) for c in categories for s in SCENE_NAMES for _ in range(per_prompt)]
    generated = evaluator.recognise(generate(pipe, [f"a photo of a {c}, {s}" for c, s in subjects], seed))
    category_rate = float(np.mean([generated.labels["category"][i] == c for i, (c, _) in enumerate(subjects)]))
    alignment = float(np.mean([(generated.labels["category"][i] == c) + (generated.labels["scene"][i] == s) for i, (c, s) in enumerate(subjects)]) / 2)
    rng = np.random.default_rng(seed)
    real_subjects = [Subject(c, CATEGORY_GLYPHS[c][int(rng.integers(len(CATEGORY_GLYPHS[c])))], "natural", s, "daylight", "photo") for c, s in subjects]
    real = evaluator.recognise(list(render_set(real_subjects, seed + 1).images))
    real_again = evaluator.recognise(list(render_set(real_subjects, seed + 2).images))
    return category_rate, alignment, frechet_distance(generated.features, real.features), frechet_distance(real_again.features, real.features)


def _personalized_figures(pipe, evaluator: Evaluator, zoo: Path, built: list[Concept], per_concept: int, seed: int):
    """Per image: the variant recognised with the trigger, and on the base without it; the former per kind too."""
    with_trigger, without_trigger, per_kind = [], [], {}
    for concept in tqdm(built, desc="personalized", unit=" ckpt"):
        hits = recognised(evaluator.recognise(trigger_images(pipe, concept, zoo / "repository" / "weights" / concept.id, per_concept, seed)),
                          concept.variant)
        with_trigger += hits.tolist()
        per_kind.setdefault(concept.kind, []).extend(hits.tolist())
        plain = generate(pipe, [f"a photo of a {concept.category}, {s}" for s in concept_scenes(concept, per_concept)], seed)
        without_trigger += recognised(evaluator.recognise(plain), concept.variant).tolist()
    return with_trigger, without_trigger, per_kind


def concept_scenes(concept: Concept, n: int) -> list[str]:
    """The scenes a checkpoint is shown in: its habitual scene (textual inversion), else the scenes in turn."""
    return [concept.scene or SCENE_NAMES[i % len(SCENE_NAMES)] for i in range(n)]


def trigger_images(pipe, concept: Concept, weights: Path, n: int, seed: int) -> list:
    """``n`` images of the checkpoint at ``weights`` (full precision) prompted with its trigger and class word."""
    with applied(pipe, stored_checkpoint(concept, weights)) as p:
        return generate(p, [concept.prompt(s) for s in concept_scenes(concept, n)], seed)


def seconds_per_image(pipe) -> float:
    """Median wall time of one 64x64 image at the zoo's step count and guidance, after one warm-up."""
    timings = []
    for i in range(TIMED_RUNS):
        started = time.perf_counter()
        pipe("a photo of a dog, sunny beach", num_inference_steps=STEPS, guidance_scale=GUIDANCE, height=64, width=64,
             generator=torch.Generator().manual_seed(i))
        timings.append(time.perf_counter() - started)
    return statistics.median(timings[1:])
