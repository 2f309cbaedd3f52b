"""The domain evaluator: a small CNN that recognises category, glyph, tint, style and scene in 64x64 images.

It stands in for CLIP and Inception, which cannot be downloaded here. Half of its training images are
passed through the zoo's VAE first, so it judges decoded (slightly soft) generations fairly. Its penultimate
layer is the feature space of the domain FID.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch
from safetensors.torch import load_file, save_file
from torch import nn

from personalq.hardware import native_bf16
from personalq.zoo.catalog import (
    CATEGORIES,
    CATEGORY_GLYPHS,
    GLYPHS,
    LIGHTING_NAMES,
    SCENE_NAMES,
    STYLE_NAMES,
    TINT_NAMES,
    Subject,
)
from personalq.zoo.data import render_set, through_vae, to_pixels
from personalq.zoo.training import Run, RunConfig

log = logging.getLogger(__name__)
HEADS = {"category": CATEGORIES, "glyph": GLYPHS, "tint": TINT_NAMES, "style": STYLE_NAMES, "scene": SCENE_NAMES}
FEATURE_DIM = 128


class DomainClassifier(nn.Module):
    def __init__(self):
        super().__init__()

        def block(cin: int, cout: int) -> nn.Sequential:
            return nn.Sequential(
                nn.Conv2d(cin, cout, 3, padding=1),
                nn.GroupNorm(8, cout),
                nn.SiLU(),
                nn.Conv2d(cout, cout, 3, padding=1),
                nn.GroupNorm(8, cout),
                nn.SiLU(),
                nn.MaxPool2d(2),
            )

        self.body = nn.Sequential(
            block(3, 32),
            block(32, 64),
            block(64, 128),
            block(128, 128),
            nn.AdaptiveAvgPool2d(1),
            nn.Flatten(),
            nn.Linear(128, FEATURE_DIM),
            nn.SiLU(),
        )
        self.heads = nn.ModuleDict({name: nn.Linear(FEATURE_DIM, len(labels)) for name, labels in HEADS.items()})

    def forward(self, pixels: torch.Tensor) -> tuple[torch.Tensor, dict[str, torch.Tensor]]:
        features = self.body(pixels)
        return features, {name: head(features) for name, head in self.heads.items()}


@dataclass
class Recognition:
    features: np.ndarray
    labels: dict[str, list[str]]


class Evaluator:
    def __init__(self, model: DomainClassifier):
        self.model = model.eval()

    @classmethod
    def load(cls, path: Path) -> "Evaluator":
        model = DomainClassifier()
        model.load_state_dict(load_file(str(path)))
        return cls(model)

    @torch.no_grad()
    def recognise(self, images: np.ndarray | list) -> Recognition:
        """``images``: uint8 (N, 64, 64, 3) or PIL images."""
        array = np.stack([np.asarray(i.convert("RGB")) if hasattr(i, "convert") else i for i in images])
        features, labels = [], {name: [] for name in HEADS}
        for start in range(0, len(array), 256):
            f, logits = self.model(to_pixels(array[start : start + 256]))
            features.append(f.numpy())
            for name, values in logits.items():
                labels[name] += [HEADS[name][i] for i in values.argmax(1).tolist()]
        return Recognition(np.concatenate(features), labels)


def evaluator_subjects(count: int, rng: np.random.Generator) -> list[Subject]:
    out = []
    for _ in range(count):
        category = CATEGORIES[int(rng.integers(len(CATEGORIES)))]
        glyphs = CATEGORY_GLYPHS[category]
        out.append(
            Subject(
                category,
                glyphs[int(rng.integers(len(glyphs)))],
                TINT_NAMES[int(rng.integers(len(TINT_NAMES)))],
                SCENE_NAMES[int(rng.integers(len(SCENE_NAMES)))],
                LIGHTING_NAMES[int(rng.integers(len(LIGHTING_NAMES)))],
                STYLE_NAMES[int(rng.integers(len(STYLE_NAMES)))],
            )
        )
    return out


def shifted(batch: torch.Tensor, generator: torch.Generator, pad: int = 4) -> torch.Tensor:
    """Each image moved by up to ``pad`` pixels each way (edges repeated): the glyph's place must not matter."""
    size = batch.shape[-1]
    padded = nn.functional.pad(batch, (pad,) * 4, mode="replicate")
    offsets = torch.randint(0, 2 * pad + 1, (len(batch), 2), generator=generator, device=generator.device).tolist()
    return torch.stack([padded[i, :, y : y + size, x : x + size] for i, (y, x) in enumerate(offsets)])


def train_evaluator(
    vae,
    work: Path,
    out: Path,
    images: int = 20000,
    steps: int = 2400,
    seed: int = 1234,
    device: str = "cpu",
    init: Path | None = None,
) -> Path:
    """Held-out renders (a seed the generator's training data never used), every tint included.

    Trained on ``device`` with channels-last tensors, in bfloat16 autocast where the hardware has bf16 units
    (a GPU, or a CPU with AVX512-BF16/AMX: faster there, and slower where it is emulated; see ``native_bf16``);
    the saved weights stay float32. Random shifts and flips keep it from memorising where a glyph sits.
    ``init`` starts from an evaluator's weights instead of random ones: after the catalog renames a tint the
    heads keep their sizes, so the evaluator relearns that row without paying for the whole run again.
    """
    rng = np.random.default_rng(seed)
    data = render_set(evaluator_subjects(images, rng), seed + 1, desc="render evaluator set")
    pixels = to_pixels(data.images)
    with torch.no_grad():  # half the set as the VAE gives it back: generations are decoded by that VAE
        half = len(pixels) // 2
        for start in range(0, half, 256):
            chunk = pixels[start : min(start + 256, half)]
            pixels[start : start + len(chunk)] = through_vae(vae, chunk)
    pixels = pixels.to(device)
    targets = {
        name: torch.tensor([labels.index(getattr(s, name)) for s in data.subjects], device=device)
        for name, labels in HEADS.items()
    }
    model = DomainClassifier()
    if init is not None:
        model.load_state_dict(load_file(str(init)))
    model = model.train().to(device, memory_format=torch.channels_last)
    bf16 = torch.device(device).type == "cuda" or native_bf16()
    gen = torch.Generator(device).manual_seed(seed)

    def loss(step: int) -> torch.Tensor:
        idx = torch.randint(0, len(pixels), (128,), generator=gen, device=device)
        batch = shifted(pixels[idx], gen)
        if step % 2:
            batch = batch.flip(3)
        with torch.autocast(torch.device(device).type, dtype=torch.bfloat16, enabled=bf16):
            _, logits = model(batch.contiguous(memory_format=torch.channels_last))
        return sum(nn.functional.cross_entropy(logits[name].float(), targets[name][idx]) for name in HEADS)

    state = work / "evaluator.state.pt"
    Run("evaluator", model, model.parameters(), RunConfig(steps, lr=2e-3, warmup=50, save_every=200), state).train(
        loss
    )
    out.parent.mkdir(parents=True, exist_ok=True)
    partial = out.with_suffix(".partial")
    save_file({k: v.contiguous().cpu() for k, v in model.state_dict().items()}, str(partial))
    partial.replace(out)  # the evaluator in use is replaced whole or not at all
    state.unlink()  # finished: a later training starts afresh instead of resuming this one
    return out


__all__ = ["DomainClassifier", "Evaluator", "HEADS", "train_evaluator"]
