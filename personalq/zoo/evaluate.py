"""``personalq zoo evaluate``: the demo zoo's quality and speed figures, from generated images."""

from __future__ import annotations

import statistics
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch
from tqdm import tqdm

from personalq.eval.image_metrics import frechet_distance, recognised
from personalq.serving.checkpoints import applied, load_base
from personalq.zoo.build import stored_checkpoint
from personalq.zoo.catalog import CATEGORIES, CATEGORY_GLYPHS, SCENE_NAMES, Subject
from personalq.zoo.concepts import concepts
from personalq.zoo.data import render_set
from personalq.zoo.evaluator import Evaluator

STEPS = 20
GUIDANCE = 5.0


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
    variant_with_trigger: float
    variant_without_trigger: float
    per_kind: dict[str, float]
    seconds_per_image: float
    images: int

    def table(self) -> str:
        rows = [
            ("base: category recognised in 'a photo of a {category}, {scene}'", f"{self.base_category_rate:.1%}"),
            ("base: prompt alignment (category + scene)", f"{self.base_alignment:.3f}"),
            ("base: domain FID, generated vs real renders", f"{self.domain_fid:.2f}"),
            ("reference: domain FID, real vs other real renders", f"{self.real_vs_real_fid:.2f}"),
            ("personalized: variant recognised with the trigger", f"{self.variant_with_trigger:.1%}"),
            ("base without the trigger: variant recognised", f"{self.variant_without_trigger:.1%}"),
            *[(f"personalized ({kind}): variant recognised with the trigger", f"{rate:.1%}") for kind, rate in sorted(self.per_kind.items())],
            ("one 64x64 image, 20 steps, CFG (median of 5)", f"{self.seconds_per_image:.2f} s"),
            ("images generated for this table", str(self.images)),
        ]
        return "| measure | value |\n| --- | --- |\n" + "\n".join(f"| {a} | {b} |" for a, b in rows)


def evaluate_zoo(zoo: Path, per_prompt: int = 2, per_concept: int = 4, seed: int = 7) -> ZooReport:
    zoo = Path(zoo)
    pipe = load_base(zoo / "base")
    evaluator = Evaluator.load(zoo / "evaluator.safetensors")

    # base model: every category in every scene
    subjects = [(c, s) for c in CATEGORIES for s in SCENE_NAMES for _ in range(per_prompt)]
    prompts = [f"a photo of a {c}, {s}" for c, s in subjects]
    generated = evaluator.recognise(generate(pipe, prompts, seed))
    category_rate = float(np.mean([generated.labels["category"][i] == c for i, (c, _) in enumerate(subjects)]))
    alignment = float(np.mean([(generated.labels["category"][i] == c) + (generated.labels["scene"][i] == s) for i, (c, s) in enumerate(subjects)]) / 2)
    rng = np.random.default_rng(seed)
    real_subjects = [Subject(c, CATEGORY_GLYPHS[c][int(rng.integers(len(CATEGORY_GLYPHS[c])))], "natural", s, "daylight", "photo") for c, s in subjects]
    real = evaluator.recognise(list(render_set(real_subjects, seed + 1).images))
    real_again = evaluator.recognise(list(render_set(real_subjects, seed + 2).images))
    fid = frechet_distance(generated.features, real.features)
    fid_real = frechet_distance(real_again.features, real.features)

    # personalized checkpoints: the variant with the trigger, and the base without it
    with_trigger, without_trigger, per_kind = [], [], {}
    built = [c for c in concepts() if (zoo / "repository" / f"{c.id}.yaml").exists()]
    for concept in tqdm(built, desc="personalized", unit=" ckpt"):
        scenes = [concept.scene or SCENE_NAMES[i % len(SCENE_NAMES)] for i in range(per_concept)]
        card = stored_checkpoint(concept, zoo / "repository" / "weights" / concept.id)
        with applied(pipe, card) as p:
            images = generate(p, [f"a photo of a {concept.trigger} {concept.category}, {s}" for s in scenes], seed)
        hits = recognised(evaluator.recognise(images), concept.variant)
        with_trigger += hits.tolist()
        per_kind.setdefault(concept.kind, []).extend(hits.tolist())
        plain = generate(pipe, [f"a photo of a {concept.category}, {s}" for s in scenes], seed)
        without_trigger += recognised(evaluator.recognise(plain), concept.variant).tolist()

    timings = []
    for i in range(6):
        started = time.perf_counter()
        pipe("a photo of a dog, sunny beach", num_inference_steps=STEPS, guidance_scale=GUIDANCE, height=64, width=64,
             generator=torch.Generator().manual_seed(i))
        timings.append(time.perf_counter() - started)
    return ZooReport(category_rate, alignment, fid, fid_real, float(np.mean(with_trigger)), float(np.mean(without_trigger)),
                     {k: float(np.mean(v)) for k, v in per_kind.items()}, statistics.median(timings[1:]),
                     len(prompts) + 2 * len(with_trigger) + len(timings))
