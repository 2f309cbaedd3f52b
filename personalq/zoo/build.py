"""``personalq zoo build``: data -> VAE -> UNet -> personalized checkpoints -> cards, previews -> evaluator.

Every stage leaves its result on disk and is skipped when the result exists, so an interrupted build
resumes; training loops inside a stage checkpoint themselves (see ``training.Run``).

Layout of the output (``assets/zoo`` by default)::

    base/                  the base pipeline (save_pretrained; text encoder weights declared in packaged.json)
    repository/            the import root: one card per checkpoint + weights/<id>/ + previews/<id>.png
    evaluator.safetensors  the domain classifier
"""

from __future__ import annotations

import logging
import multiprocessing
import shutil
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field, replace
from pathlib import Path

import torch
import yaml
from tqdm import tqdm

from personalq.repository.card import StoredCheckpoint
from personalq.serving.checkpoints import applied, load_base
from personalq.serving.packaged import declare
from personalq.zoo.base import BaseBuildConfig, build_base, prior_data
from personalq.zoo.concepts import Concept, concepts
from personalq.zoo.evaluator import train_evaluator
from personalq.zoo.models import TEXT_ENCODER
from personalq.zoo.personalize import TRAINERS, PersonalizeConfig, Prior, load_prior

log = logging.getLogger(__name__)
PREVIEW_STEPS = 20


@dataclass
class ZooBuildConfig:
    base: BaseBuildConfig = field(default_factory=BaseBuildConfig)
    personalize: PersonalizeConfig = field(default_factory=PersonalizeConfig)
    evaluator_images: int = 20000
    evaluator_steps: int = 2400
    # base-set images rendered for prior preservation when the base is ready-made (the shipped checkpoints drew
    # from the first 20,000; the full set's first images are the same)
    prior_images: int = 20000
    only: tuple[str, ...] | None = None  # build just these concept ids

    @classmethod
    def tiny(cls) -> "ZooBuildConfig":
        """A few steps on tiny data: exercises every stage in about a minute (tests)."""
        return cls(
            BaseBuildConfig(
                images=64,
                vae_steps=3,
                vae_batch=4,
                unet_steps=3,
                unet_batch=4,
                decoder_images=64,
                decoder_steps=3,
                decoder_batch=4,
            ),
            PersonalizeConfig(images=4, steps=2, ti_steps=2, instance_batch=2, prior_batch=2),
            evaluator_images=64,
            evaluator_steps=3,
            prior_images=64,
            only=("biscuit-v1", "biscuit-v3", "oakley-v1"),
        )  # a LoRA, a DreamBooth, a textual inversion


def card_for(concept: Concept, weights: str, preview: str) -> dict:
    return {
        "id": concept.id,
        "name": f"{concept.codename.title()} {concept.category} v{concept.version}",
        "family": concept.family,
        "version": f"v{concept.version}",
        "kind": concept.kind,
        "base_model": "personalq-demo",
        "triggers": [concept.trigger],
        "subjects": [concept.category],
        "styles": [concept.style],
        "tags": [concept.tint, concept.codename]
        if concept.tint != "natural"
        else [concept.scene or "", concept.codename],
        "description": concept.description(),
        "created_at": concept.created_at.isoformat(timespec="minutes"),
        "weights": weights,
        "preview": preview,
    }


def stored_checkpoint(concept: Concept, weights: Path) -> StoredCheckpoint:
    """The concept as the repository would hold it, for applying its weights before it is imported."""
    card = card_for(concept, str(weights), "")
    return StoredCheckpoint.model_validate({**card, "weights_path": str(weights)})


def preview_prompt(concept: Concept) -> str:
    return concept.prompt(concept.scene or "lush park")


def write_preview(pipe, concept: Concept, weights: Path, path: Path) -> Path:
    """The card's preview: the checkpoint in its preview prompt, at a fixed seed."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with applied(pipe, stored_checkpoint(concept, weights)) as p:
        image = p(
            preview_prompt(concept),
            num_inference_steps=PREVIEW_STEPS,
            guidance_scale=5.0,
            generator=torch.Generator().manual_seed(0),
            height=64,
            width=64,
        ).images[0]
    image.save(path)
    return path


def refresh_previews(out: Path, device: str = "cpu") -> list[Path]:
    """Draw every built checkpoint's preview again with the zoo's current base (after its VAE or UNet changed)."""
    out = Path(out)
    pipe = load_base(out / "base", device)
    repo = out / "repository"
    built = [c for c in concepts() if (repo / f"{c.id}.yaml").exists()]
    return [
        write_preview(pipe, c, repo / "weights" / c.id, repo / "previews" / f"{c.id}.png")
        for c in tqdm(built, desc="previews", unit=" ckpt")
    ]


def build_zoo(
    work: Path, out: Path, config: ZooBuildConfig | None = None, device: str = "cpu", workers: int = 1
) -> Path:
    """``workers`` > 1 trains that many checkpoints at once, each in its own process: one process keeps a GPU
    mostly idle (its small steps are bound by kernel launches, ~13 steps/s whatever the batch)."""
    config = config or ZooBuildConfig()
    work, out = Path(work), Path(out)
    work.mkdir(parents=True, exist_ok=True)
    base_dir = out / "base"
    if not (base_dir / "model_index.json").exists():
        staged = build_base(work, work / "base-pipeline", config.base, device)
        shutil.rmtree(base_dir, ignore_errors=True)
        shutil.copytree(
            staged, base_dir, ignore=shutil.ignore_patterns("model.safetensors")
        )  # text encoder: from the package
    declare(base_dir, {"text_encoder": TEXT_ENCODER})  # also for a base built before the manifest existed
    pipe = load_base(base_dir, device)
    if not (work / "latents.pt").exists():  # a ready-made base: its working folder stayed where it was built
        prior_data(work, pipe.vae, replace(config.base, images=config.prior_images), device)
    repo = out / "repository"
    todo = [
        c.id
        for c in concepts()
        if (config.only is None or c.id in config.only) and not (repo / f"{c.id}.yaml").exists()
    ]
    if workers > 1 and len(todo) > 1:
        shares = [todo[i::workers] for i in range(min(workers, len(todo)))]
        with ProcessPoolExecutor(len(shares), mp_context=multiprocessing.get_context("spawn")) as pool:
            list(pool.map(_personalize_in_process, [(work, out, config, device, share) for share in shares]))
    else:
        personalize_concepts(pipe, load_prior(work, device), work, out, config, todo)
    evaluator = out / "evaluator.safetensors"
    if not evaluator.exists():
        train_evaluator(pipe.vae, work, evaluator, config.evaluator_images, config.evaluator_steps, device=device)
    pack_for_shipping(out)
    return out


def personalize_concepts(pipe, prior: Prior, work: Path, out: Path, config: ZooBuildConfig, ids: list[str]) -> None:
    """Train each checkpoint in ``ids``, draw its preview and write its card (the card last: it marks it done)."""
    repo = out / "repository"
    for concept in tqdm([c for c in concepts() if c.id in ids], desc="personalized checkpoints", unit=" ckpt"):
        trained = TRAINERS[concept.kind](
            concept, pipe, prior, repo / "weights" / concept.id, work / "personalize", config.personalize
        )
        preview = write_preview(pipe, concept, trained, repo / "previews" / f"{concept.id}.png")
        card = card_for(concept, str(trained.relative_to(repo)), str(preview.relative_to(repo)))
        (repo / f"{concept.id}.yaml").write_text(yaml.safe_dump(card, sort_keys=False))
        (work / "personalize" / f"{concept.id}.state.pt").unlink(missing_ok=True)


def _personalize_in_process(job: tuple[Path, Path, ZooBuildConfig, str, list[str]]) -> None:
    work, out, config, device, ids = job
    personalize_concepts(load_base(out / "base", device), load_prior(work, device), work, out, config, ids)


def halve(path: Path) -> bool:
    """Store a safetensors file's float32 tensors as float16 (metadata kept); False when already halved.

    ``from_pretrained`` and ``load_lora_weights`` upcast to the pipeline's float32 on load, so this halves
    the repository's size without changing how anything is loaded.
    """
    from safetensors import safe_open
    from safetensors.torch import save_file

    with safe_open(str(path), framework="pt") as handle:
        metadata = handle.metadata()
        tensors = {k: handle.get_tensor(k) for k in handle.keys()}
    if not any(t.dtype == torch.float32 for t in tensors.values()):
        return False
    save_file(
        {k: t.half() if t.dtype == torch.float32 else t for k, t in tensors.items()}, str(path), metadata=metadata
    )
    return True


def pack_for_shipping(out: Path) -> None:
    """Fit the zoo in its size budget: base UNet and LoRA adapters in float16 (VAE and embeddings stay float32)."""
    targets = [
        out / "base" / "unet" / "diffusion_pytorch_model.safetensors",
        *sorted((out / "repository" / "weights").glob("*/pytorch_lora_weights.safetensors")),
    ]
    halved = sum(halve(path) for path in targets if path.exists())
    if halved:
        log.info("stored %d weight files in float16", halved)
