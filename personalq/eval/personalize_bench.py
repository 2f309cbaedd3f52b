"""``personalq bench personalize``: how the fine-tuning recipe of a personalized checkpoint moves its fidelity.

The same concepts are trained again on the zoo's shipped base for each recipe (same data and seed; only the
number of steps, textual inversion's included, the learning rates, the class-specific share of the prior
batch and the share of captions without the class noun differ), then generated with the
trigger at one seed. Three rates per recipe separate the two ways a checkpoint fails: the category is not
drawn (a base-model limit) or the variant's own marker is missing (tint, or glyph and scene for textual
inversion: a personalization limit).
"""

from __future__ import annotations

import logging
import tempfile
import time
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np
from tqdm import tqdm

from personalq.eval.image_metrics import recognised
from personalq.serving.checkpoints import load_base
from personalq.zoo.concepts import Concept
from personalq.zoo.evaluate import trigger_images
from personalq.zoo.evaluator import Evaluator
from personalq.zoo.personalize import TRAINERS, PersonalizeConfig, load_prior

log = logging.getLogger(__name__)


@dataclass
class RecipeResult:
    config: PersonalizeConfig
    category: float  # the class is recognised
    marker: float  # the variant's attributes other than the class are recognised
    variant: float  # both: what `zoo evaluate` counts as the variant reproduced
    train_seconds: float  # per checkpoint
    images: int


def recipes(
    step_counts: list[int],
    lr_scales: list[float],
    base: PersonalizeConfig | None = None,
    class_priors: list[float] | None = None,
    noun_dropouts: list[float] | None = None,
) -> list[PersonalizeConfig]:
    """Every combination of the axes. The learning-rate scale multiplies the UNet-side rates (LoRA and
    DreamBooth); textual inversion's rate moves a single embedding and keeps its own. Axes left out keep
    ``base``'s value."""
    base = base or PersonalizeConfig()
    return [
        replace(
            base,
            steps=steps,
            ti_steps=steps,
            lora_lr=base.lora_lr * k,
            dreambooth_lr=base.dreambooth_lr * k,
            class_prior=prior,
            class_noun_dropout=dropout,
        )
        for steps in step_counts
        for k in lr_scales
        for prior in (class_priors or [base.class_prior])
        for dropout in (noun_dropouts or [base.class_noun_dropout])
    ]


def table(results: list[RecipeResult], concepts: list[Concept]) -> str:
    head = (
        f"{len(concepts)} checkpoints ({', '.join(c.id for c in concepts)}), trained again for each recipe\n\n"
        "| steps | instance images | batch (instance + prior) | learning rate (LoRA / DreamBooth / TI) | class prior "
        "| no class noun | category recognised | variant marker recognised | variant (both) "
        "| training s / checkpoint | images |\n"
        "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |\n"
    )
    return head + "\n".join(
        f"| {r.config.steps} | {r.config.images} | {r.config.instance_batch} + {r.config.prior_batch} "
        f"| {r.config.lora_lr:.0e} / {r.config.dreambooth_lr:.0e} / {r.config.ti_lr:.0e} "
        f"| {r.config.class_prior:.0%} | {r.config.class_noun_dropout:.0%} "
        f"| {r.category:.1%} | {r.marker:.1%} | {r.variant:.1%} | {r.train_seconds:.0f} | {r.images} |"
        for r in results
    )


def run(
    zoo: Path,
    work: Path,
    concepts: list[Concept],
    configs: list[PersonalizeConfig],
    images: int = 8,
    seed: int = 7,
    device: str = "cpu",
) -> list[RecipeResult]:
    """``work`` is the zoo build's working folder: its base-set latents and captions are the prior-preservation data.
    Training and generation run on ``device``; the evaluator scores on the CPU."""
    pipe = load_base(Path(zoo) / "base", device)
    evaluator = Evaluator.load(Path(zoo) / "evaluator.safetensors")
    prior = load_prior(Path(work), device)
    results = []
    for config in configs:
        category, marker, seconds = [], [], []
        with tempfile.TemporaryDirectory(prefix="personalize-bench-") as scratch:
            for concept in tqdm(concepts, desc=f"{config.steps} steps, LoRA lr {config.lora_lr:.0e}", unit=" ckpt"):
                started = time.perf_counter()
                trained = TRAINERS[concept.kind](
                    concept, pipe, prior, Path(scratch) / concept.id, Path(scratch), config
                )
                seconds.append(time.perf_counter() - started)
                seen = evaluator.recognise(trigger_images(pipe, concept, trained, images, seed))
                category += recognised(seen, {"category": concept.category}).tolist()
                marker += recognised(seen, concept.marker).tolist()
        both = [a and b for a, b in zip(category, marker)]
        results.append(
            RecipeResult(
                config,
                float(np.mean(category)),
                float(np.mean(marker)),
                float(np.mean(both)),
                float(np.mean(seconds)),
                len(both),
            )
        )
        log.info("recipe done (a long run's partial results): %s", table(results[-1:], concepts).splitlines()[-1])
    return results
