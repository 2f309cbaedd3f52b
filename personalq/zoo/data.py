"""Rendered, captioned image sets stored as one ``.npz`` each (uint8 pixels + label columns + captions)."""

from __future__ import annotations

import json
import multiprocessing
import os
from concurrent.futures import ProcessPoolExecutor
from contextlib import nullcontext
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np
import torch
from tqdm import tqdm

from personalq.zoo.captions import caption
from personalq.zoo.catalog import CATEGORIES, CATEGORY_GLYPHS, LIGHTING_NAMES, SCENE_NAMES, STYLE_NAMES, Subject
from personalq.zoo.render import render


def to_pixels(images: np.ndarray) -> torch.Tensor:
    """uint8 (N, H, W, 3) images as the float (N, 3, H, W) tensors in [-1, 1] that the VAE and evaluator take."""
    return torch.from_numpy(np.ascontiguousarray(images)).permute(0, 3, 1, 2).float().div(127.5).sub(1.0)


@torch.no_grad()
def through_vae(vae, pixels: torch.Tensor) -> torch.Tensor:
    """``to_pixels`` tensors encoded to the posterior mean and decoded again, clamped to [-1, 1], on the CPU:
    what the VAE gives back of an image, as every generated image is decoded by it."""
    return vae.decode(vae.encode(pixels.to(vae.device, vae.dtype)).latent_dist.mean).sample.float().clamp(-1, 1).cpu()


@dataclass
class RenderedSet:
    images: np.ndarray  # (N, H, W, 3) uint8
    subjects: list[Subject]
    captions: list[str]

    def save(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(".tmp.npz")
        np.savez_compressed(
            tmp,
            images=self.images,
            subjects=np.array(json.dumps([asdict(s) for s in self.subjects])),
            captions=np.array(json.dumps(self.captions)),
        )
        tmp.replace(path)

    @classmethod
    def load(cls, path: Path) -> "RenderedSet":
        with np.load(path) as data:
            subjects = [Subject(**s) for s in json.loads(str(data["subjects"]))]
            return cls(data["images"], subjects, json.loads(str(data["captions"])))


def random_subject(rng: np.random.Generator, tint: str = "natural", category: str | None = None) -> Subject:
    category = category or CATEGORIES[int(rng.integers(len(CATEGORIES)))]
    glyphs = CATEGORY_GLYPHS[category]
    return Subject(
        category=category,
        glyph=glyphs[int(rng.integers(len(glyphs)))],
        tint=tint,
        scene=SCENE_NAMES[int(rng.integers(len(SCENE_NAMES)))],
        lighting=LIGHTING_NAMES[int(rng.integers(len(LIGHTING_NAMES)))],
        style=STYLE_NAMES[int(rng.integers(len(STYLE_NAMES)))],
    )


PARALLEL_FROM = 2000  # below this many images, worker start-up costs more than it saves


def _render_one(job: tuple[Subject, int, int]) -> np.ndarray:
    subject, size, seed = job
    return np.asarray(render(subject, size, seed=seed))


def render_set(
    subjects: list[Subject],
    seed: int,
    size: int = 64,
    trigger: str | None = None,
    desc: str = "render",
    workers: int | None = None,
) -> RenderedSet:
    """Render and caption ``subjects``; the same set for any number of ``workers`` (default: every CPU core).

    Every image's seed and caption are drawn in order first, so rendering in parallel changes nothing.
    """
    rng = np.random.default_rng(seed)
    jobs, captions = [], []
    for subject in subjects:
        jobs.append((subject, size, int(rng.integers(2**31))))
        captions.append(caption(subject, rng, trigger=trigger))
    parallel = (workers or os.cpu_count() or 1) > 1 and len(jobs) >= PARALLEL_FROM
    images = np.empty((len(subjects), size, size, 3), dtype=np.uint8)
    pool = ProcessPoolExecutor(workers, mp_context=multiprocessing.get_context("fork")) if parallel else nullcontext()
    with pool:
        rendered = pool.map(_render_one, jobs, chunksize=256) if parallel else map(_render_one, jobs)
        for i, image in enumerate(tqdm(rendered, total=len(jobs), desc=desc, leave=False, disable=len(jobs) < 500)):
            images[i] = image  # straight into the array: no second copy of the whole set
    return RenderedSet(images, subjects, captions)


def base_training_set(count: int, seed: int, size: int = 64) -> RenderedSet:
    """Natural-tint subjects, uniform over every category, glyph, scene, lighting and style."""
    rng = np.random.default_rng(seed)
    subjects = [random_subject(rng) for _ in range(count)]
    return render_set(subjects, seed + 1, size, desc="render base set")
