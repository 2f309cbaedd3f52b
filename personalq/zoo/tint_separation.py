"""How far apart the zoo's VAE keeps the tints: a variant it encodes next to another one is lost after decoding.

A tinted checkpoint is judged by whether the evaluator sees its tint in the generated image, and every
generated image comes out of the VAE decoder. The decoder can only tell two tints apart if the encoder
kept them apart: the UNet learns to produce the encoder's latents. So for each tint this renders the same
subjects in the same scenes in every tint and measures the latent distance to its nearest neighbour (RMS
over latent elements, beside the pixel distance for scale) and the tint's own round-trip error. Candidate
colours can be weighed beside the catalog's before anything is retrained (``personalq zoo tints``).
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np
import torch

from personalq.zoo.catalog import SCENE_NAMES, TINTS
from personalq.zoo.concepts import concepts
from personalq.zoo.data import through_vae, to_pixels
from personalq.zoo.render import render


@dataclass(frozen=True)
class TintSeparation:
    tint: str
    colour: tuple[int, int, int]
    candidate: bool  # weighed beside the catalog's tints, not one of them
    nearest: str  # the other tint (or "natural") whose latents lie closest
    latent_distance: float  # RMS latent difference to ``nearest`` over the same subjects and scenes
    pixel_distance: float  # the same pair's RMS pixel difference on [-1, 1]
    round_trip_error: float  # RMS pixel error of encoding and decoding this tint's renders


@torch.no_grad()
def tint_separation(
    vae, candidates: dict[str, tuple[int, int, int]] | None = None, subjects: int = 40, seed: int = 5
) -> list[TintSeparation]:
    """One row per catalog tint and per candidate; a candidate is compared with the catalog's tints only."""
    palette = dict(TINTS) | (candidates or {})
    shown = [c.subject(SCENE_NAMES[i % len(SCENE_NAMES)]) for i, c in enumerate(concepts()[:subjects])]
    pixels, latents, errors = {}, {}, {}
    for tint in palette:
        images = np.stack(
            [np.asarray(render(replace(s, tint=tint), seed=seed + i, tints=palette)) for i, s in enumerate(shown)]
        )
        pixels[tint] = to_pixels(images)
        latents[tint] = vae.encode(pixels[tint].to(vae.device, vae.dtype)).latent_dist.mean.float().cpu()
        errors[tint] = float((through_vae(vae, pixels[tint]) - pixels[tint]).pow(2).mean().sqrt())

    def rms(a: torch.Tensor, b: torch.Tensor) -> float:
        return float((a - b).pow(2).mean().sqrt())

    rows = []
    for tint, colour in palette.items():
        if colour is None:  # "natural" is every other tint's neighbour, not a marker of its own
            continue
        nearest = min((t for t in TINTS if t != tint), key=lambda t: rms(latents[tint], latents[t]))
        rows.append(
            TintSeparation(
                tint,
                colour,
                tint not in TINTS,
                nearest,
                rms(latents[tint], latents[nearest]),
                rms(pixels[tint], pixels[nearest]),
                errors[tint],
            )
        )
    return rows


def separation_table(rows: list[TintSeparation]) -> str:
    lines = [
        "| tint | RGB | nearest in latent space | latent distance | pixel distance | round-trip error |",
        "|" + " --- |" * 6,
    ]
    for r in rows:
        name = f"{r.tint} (candidate)" if r.candidate else r.tint
        lines.append(
            f"| {name} | {', '.join(map(str, r.colour))} | {r.nearest} | {r.latent_distance:.3f} | "
            f"{r.pixel_distance:.3f} | {r.round_trip_error:.4f} |"
        )
    return "\n".join(lines)
