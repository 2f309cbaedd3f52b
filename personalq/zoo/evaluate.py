"""``personalq zoo evaluate``: the demo zoo's quality and speed figures, from generated images."""

from __future__ import annotations

import statistics
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
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
from personalq.zoo.data import render_set, through_vae, to_pixels
from personalq.zoo.evaluator import Evaluator

STEPS = 20
GUIDANCE = 5.0
TIMED_RUNS = 6  # the first is a warm-up


def generate(pipe, prompts: list[str], seed: int, guidance: float = GUIDANCE, batch: int = 16) -> list:
    images = []
    for start in range(0, len(prompts), batch):
        generator = torch.Generator().manual_seed(seed + start)
        images += pipe(
            prompts[start : start + batch],
            num_inference_steps=STEPS,
            guidance_scale=guidance,
            generator=generator,
            height=64,
            width=64,
        ).images
    return images


@dataclass
class ZooReport:
    base_category_rate: float
    base_alignment: float
    domain_fid: float
    real_vs_real_fid: float
    real_category_rate: float  # the evaluator on real renders of the same prompts: the most a generator can score
    variant_with_trigger: float | None  # None when the personalized checkpoints were not evaluated
    variant_without_trigger: float | None
    variant_real: float | None  # the evaluator on real renders of each checkpoint's variant
    variant_through_vae: float | None  # the same renders after the VAE's round trip: the most the decoder lets through
    per_kind: dict[str, float]
    # the two ways a trigger image fails, apart: the class is not drawn, or the variant's own marker is missing
    category_with_trigger: float | None
    marker_with_trigger: float | None
    per_marker: dict[str, float]  # the variant rate per marker: each tint, and textual inversion's glyph in its scene
    # per marker, the variant recognised in its real renders after the VAE's round trip: that marker's ceiling
    per_marker_through_vae: dict[str, float]
    seconds_per_image: float
    images: int
    guidance: float = GUIDANCE
    per_checkpoint: dict[str, tuple[float, float, float]] = field(
        default_factory=dict
    )  # id -> (category, marker, variant)

    def checkpoint_table(self) -> str:
        """One row per checkpoint: which ones lose the class, which the marker."""
        return (
            "| checkpoint | category recognised | marker recognised | variant (both) |\n| --- | --- | --- | --- |\n"
            + "\n".join(f"| {cid} | {c:.0%} | {m:.0%} | {v:.0%} |" for cid, (c, m, v) in self.per_checkpoint.items())
        )

    def table(self) -> str:
        rows = [
            ("base: category recognised in 'a photo of a {category}, {scene}'", f"{self.base_category_rate:.1%}"),
            ("base: prompt alignment (category + scene)", f"{self.base_alignment:.3f}"),
            ("base: domain FID, generated vs real renders", f"{self.domain_fid:.2f}"),
            ("reference: domain FID, real vs other real renders", f"{self.real_vs_real_fid:.2f}"),
            ("reference: category recognised in real renders of the same prompts", f"{self.real_category_rate:.1%}"),
            *self._personalized_rows(),
            ("one 64x64 image, 20 steps, CFG (median of 5)", f"{self.seconds_per_image:.2f} s"),
            ("classifier-free guidance scale of the generated images", f"{self.guidance:g}"),
            ("images generated for this table", str(self.images)),
        ]
        return "| measure | value |\n| --- | --- |\n" + "\n".join(f"| {a} | {b} |" for a, b in rows)

    def _personalized_rows(self) -> list[tuple[str, str]]:
        if self.variant_with_trigger is None or self.variant_without_trigger is None:
            return []
        return [
            ("personalized: variant recognised with the trigger", f"{self.variant_with_trigger:.1%}"),
            ("base without the trigger: variant recognised", f"{self.variant_without_trigger:.1%}"),
            ("reference: variant recognised in real renders of the variants", f"{self.variant_real:.1%}"),
            (
                "reference: the same renders after the VAE's round trip (encode, decode)",
                f"{self.variant_through_vae:.1%}",
            ),
            *[
                (f"personalized ({kind}): variant recognised with the trigger", f"{rate:.1%}")
                for kind, rate in sorted(self.per_kind.items())
            ],
            ("personalized: category recognised with the trigger", f"{self.category_with_trigger:.1%}"),
            (
                "personalized: variant marker (tint, or glyph and scene) recognised with the trigger",
                f"{self.marker_with_trigger:.1%}",
            ),
            *[
                (
                    f"personalized, marker {marker}: variant recognised with the trigger / "
                    "in real renders after the VAE's round trip",
                    f"{rate:.1%} / {self.per_marker_through_vae[marker]:.1%}",
                )
                for marker, rate in sorted(self.per_marker.items())
            ],
        ]


def evaluate_zoo(
    zoo: Path,
    per_prompt: int = 2,
    per_concept: int = 4,
    seed: int = 7,
    unet: Path | None = None,
    personalized: bool = True,
    categories: Sequence[str] = CATEGORIES,
    guidance: float = GUIDANCE,
) -> ZooReport:
    """The zoo's figures from freshly generated images, all at one seed so that two runs compare image for image.

    ``unet`` swaps in another base UNet (a folder from ``save_pretrained``, e.g. an earlier or later training
    step) with everything else fixed, so that base-model figures of two training steps compare side by side;
    ``personalized=False`` skips the checkpoints (they were trained on the shipped UNet, not on a swapped one).
    ``categories`` narrows both parts to a subset, for a quick look; ``guidance`` is the classifier-free guidance
    scale, which trades diversity for prompt adherence and so moves the recognition rates.
    """
    zoo = Path(zoo)
    pipe = load_base(zoo / "base")
    if unet is not None:
        pipe.unet = UNet2DConditionModel.from_pretrained(unet, torch_dtype=torch.float32)
    evaluator = Evaluator.load(zoo / "evaluator.safetensors")
    base = _base_figures(pipe, evaluator, categories, per_prompt, seed, guidance)
    built = (
        [c for c in concepts() if c.category in categories and (zoo / "repository" / f"{c.id}.yaml").exists()]
        if personalized
        else []
    )
    hits = _personalized_figures(pipe, evaluator, zoo, built, per_concept, seed, guidance)
    renders = variant_renders(built, per_concept, seed)
    through_vae_hits = variant_hits(evaluator, [(c, round_trip(pipe.vae, images)) for c, images in renders])

    def mean(values: list) -> float | None:
        return float(np.mean(values)) if values else None

    return ZooReport(
        *base,
        variant_with_trigger=mean(hits.variant),
        variant_without_trigger=mean(hits.without_trigger),
        variant_real=mean(variant_hits(evaluator, renders)),
        variant_through_vae=mean(through_vae_hits),
        per_kind={k: float(np.mean(v)) for k, v in hits.per_kind.items()},
        category_with_trigger=mean(hits.category),
        marker_with_trigger=mean(hits.marker),
        per_marker={k: float(np.mean(v)) for k, v in hits.per_marker.items()},
        per_marker_through_vae={k: float(np.mean(v)) for k, v in by_marker(renders, through_vae_hits).items()},
        seconds_per_image=seconds_per_image(pipe),
        images=len(categories) * len(SCENE_NAMES) * per_prompt + 2 * len(hits.variant) + TIMED_RUNS,
        guidance=guidance,
        per_checkpoint=hits.per_checkpoint,
    )


def _base_figures(
    pipe, evaluator: Evaluator, categories: Sequence[str], per_prompt: int, seed: int, guidance: float
) -> tuple[float, float, float, float, float]:
    """Category rate, alignment, domain FID of the base on every (category, scene); the two real-render references."""
    subjects = [(c, s) for c in categories for s in SCENE_NAMES for _ in range(per_prompt)]
    generated = evaluator.recognise(generate(pipe, [f"a photo of a {c}, {s}" for c, s in subjects], seed, guidance))

    def category_rate(recognition) -> float:
        return float(np.mean([recognition.labels["category"][i] == c for i, (c, _) in enumerate(subjects)]))

    alignment = float(
        np.mean(
            [
                (generated.labels["category"][i] == c) + (generated.labels["scene"][i] == s)
                for i, (c, s) in enumerate(subjects)
            ]
        )
        / 2
    )
    rng = np.random.default_rng(seed)
    real_subjects = [
        Subject(c, CATEGORY_GLYPHS[c][int(rng.integers(len(CATEGORY_GLYPHS[c])))], "natural", s, "daylight", "photo")
        for c, s in subjects
    ]
    real = evaluator.recognise(list(render_set(real_subjects, seed + 1).images))
    real_again = evaluator.recognise(list(render_set(real_subjects, seed + 2).images))
    return (
        category_rate(generated),
        alignment,
        frechet_distance(generated.features, real.features),
        frechet_distance(real_again.features, real.features),
        category_rate(real),
    )


@dataclass
class PersonalizedHits:
    """Per generated image, whether each thing was recognised; the variant also grouped by kind and by marker."""

    variant: list[bool] = field(default_factory=list)
    category: list[bool] = field(default_factory=list)
    marker: list[bool] = field(default_factory=list)
    without_trigger: list[bool] = field(default_factory=list)  # the variant, on the base without the trigger
    per_kind: dict[str, list[bool]] = field(default_factory=dict)
    per_marker: dict[str, list[bool]] = field(default_factory=dict)
    per_checkpoint: dict[str, tuple[float, float, float]] = field(
        default_factory=dict
    )  # (category, marker, variant) rates


def marker_name(concept: Concept) -> str:
    """The report's name for what sets a checkpoint's variant apart: its tint, or (textual inversion) its glyph and
    scene."""
    return "glyph in its scene" if concept.kind == "textual_inversion" else concept.tint


def _personalized_figures(
    pipe, evaluator: Evaluator, zoo: Path, built: list[Concept], per_concept: int, seed: int, guidance: float
) -> PersonalizedHits:
    hits = PersonalizedHits()
    for concept in tqdm(built, desc="personalized", unit=" ckpt"):
        seen = evaluator.recognise(
            trigger_images(pipe, concept, zoo / "repository" / "weights" / concept.id, per_concept, seed, guidance)
        )
        variant = recognised(seen, concept.variant).tolist()
        category = recognised(seen, {"category": concept.category}).tolist()
        marker = recognised(seen, concept.marker).tolist()
        hits.variant += variant
        hits.category += category
        hits.marker += marker
        hits.per_checkpoint[concept.id] = (float(np.mean(category)), float(np.mean(marker)), float(np.mean(variant)))
        hits.per_kind.setdefault(concept.kind, []).extend(variant)
        hits.per_marker.setdefault(marker_name(concept), []).extend(variant)
        plain = generate(
            pipe,
            [f"a photo of a {concept.category}, {s}" for s in concept_scenes(concept, per_concept)],
            seed,
            guidance,
        )
        hits.without_trigger += recognised(evaluator.recognise(plain), concept.variant).tolist()
    return hits


def variant_renders(built: list[Concept], per_concept: int, seed: int) -> list[tuple[Concept, np.ndarray]]:
    """Real renders of each checkpoint's variant (its glyph and tint, in its scenes)."""
    return [(c, render_set([c.subject(s) for s in concept_scenes(c, per_concept)], seed + 3).images) for c in built]


def variant_hits(evaluator: Evaluator, renders: list[tuple[Concept, np.ndarray]]) -> list[bool]:
    """Per image: is its checkpoint's variant recognised? On the real renders, what a generator that drew the
    variants perfectly would score; after the VAE's round trip, what its decoder lets through (every generated
    image is decoded by it, so a tint it cannot draw is lost whatever latent the UNet makes)."""
    return [
        hit
        for concept, images in renders
        for hit in recognised(evaluator.recognise(list(images)), concept.variant).tolist()
    ]


def by_marker(renders: list[tuple[Concept, np.ndarray]], hits: list[bool]) -> dict[str, list[bool]]:
    """Per-image ``hits`` over ``renders`` (in their order), grouped by each checkpoint's marker."""
    grouped: dict[str, list[bool]] = {}
    flat = iter(hits)
    for concept, images in renders:
        grouped.setdefault(marker_name(concept), []).extend(next(flat) for _ in range(len(images)))
    return grouped


def round_trip(vae, images: np.ndarray) -> np.ndarray:
    """uint8 images through the VAE and back, as uint8 again."""
    return ((through_vae(vae, to_pixels(images)) + 1) * 127.5).round().to(torch.uint8).permute(0, 2, 3, 1).numpy()


def concept_scenes(concept: Concept, n: int) -> list[str]:
    """The scenes a checkpoint is shown in: its habitual scene (textual inversion), else the scenes in turn."""
    return [concept.scene or SCENE_NAMES[i % len(SCENE_NAMES)] for i in range(n)]


def trigger_images(pipe, concept: Concept, weights: Path, n: int, seed: int, guidance: float = GUIDANCE) -> list:
    """``n`` images of the checkpoint at ``weights`` (full precision) prompted with its trigger and class word."""
    with applied(pipe, stored_checkpoint(concept, weights)) as p:
        return generate(p, [concept.prompt(s) for s in concept_scenes(concept, n)], seed, guidance)


def seconds_per_image(pipe) -> float:
    """Median wall time of one 64x64 image at the zoo's step count and guidance, after one warm-up."""
    timings = []
    for i in range(TIMED_RUNS):
        started = time.perf_counter()
        pipe(
            "a photo of a dog, sunny beach",
            num_inference_steps=STEPS,
            guidance_scale=GUIDANCE,
            height=64,
            width=64,
            generator=torch.Generator().manual_seed(i),
        )
        timings.append(time.perf_counter() - started)
    return statistics.median(timings[1:])
