"""Personalized checkpoints of the demo base: DreamBooth-style LoRA, full DreamBooth and textual inversion.

All three use prior preservation: every batch mixes instance images of the variant (captioned with the
trigger) with base-set images under their own captions, so the plain class word keeps meaning the plain class.
"""

from __future__ import annotations

import copy
import json
import logging
import zlib
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import torch
from diffusers import StableDiffusionPipeline
from peft import LoraConfig
from peft.utils import get_peft_model_state_dict
from safetensors.torch import save_file

from personalq.zoo import models
from personalq.zoo.captions import caption
from personalq.zoo.catalog import LIGHTING_NAMES, SCENE_NAMES, STYLE_NAMES, Subject
from personalq.zoo.concepts import Concept
from personalq.zoo.data import to_pixels
from personalq.zoo.render import render
from personalq.zoo.training import Run, RunConfig, diffusion_loss

log = logging.getLogger(__name__)
LORA_TARGETS = ["to_q", "to_k", "to_v", "to_out.0"]


@dataclass
class PersonalizeConfig:
    images: int = 40
    steps: int = 200
    ti_steps: int = 150
    instance_batch: int = 6
    prior_batch: int = 2
    lora_rank: int = 8
    lora_lr: float = 2e-3
    dreambooth_lr: float = 2e-4
    ti_lr: float = 5e-3
    # share of instance captions that drop the class noun ("a photo of a <t>"), so the trigger alone carries
    # the subject
    class_noun_dropout: float = 0.5
    # share of each prior batch drawn from the concept's own category: DreamBooth's class-specific prior, which
    # keeps "dog" meaning the plain dog while "<t> dog" learns the variant; the rest is drawn from every category
    class_prior: float = 0.0
    seed: int = 0

    @classmethod
    def named(cls, recipe: str) -> "PersonalizeConfig":
        """``shipped``: what the bundled checkpoints were trained with, sized for a CPU.
        ``gpu``: five times the images, four times the batch and three times the steps, class noun always kept;
        sized for a GPU, and more of its trigger images show the variant than ``shipped``'s (training times and
        rates: benchmarks/README.md, demo zoo)."""
        if recipe == "shipped":
            return cls()
        if recipe == "gpu":
            return cls(images=200, steps=600, instance_batch=24, prior_batch=8, class_noun_dropout=0.0)
        raise ValueError(f"unknown personalization recipe {recipe!r}; choose one of {', '.join(RECIPES)}")


RECIPES = ("shipped", "gpu")


@dataclass
class Prior:
    """Base-set latents (mean, std), caption embeddings and categories, for prior preservation."""

    mean: torch.Tensor
    std: torch.Tensor
    text: torch.Tensor
    categories: tuple[str, ...]  # one per row
    _rows: dict[str, torch.Tensor] = field(default_factory=dict, repr=False)

    def rows_of(self, category: str) -> torch.Tensor:
        if category not in self._rows:
            self._rows[category] = torch.tensor(
                [i for i, c in enumerate(self.categories) if c == category], device=self.mean.device
            )
        return self._rows[category]

    def sample(
        self, n: int, gen: torch.Generator, within: torch.Tensor | None = None
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """``n`` noisy latents and their captions' embeddings, from every row or from the rows ``within``."""
        if within is None:
            idx = torch.randint(0, len(self.mean), (n,), generator=gen, device=gen.device)
        else:
            idx = within[torch.randint(0, len(within), (n,), generator=gen, device=gen.device)]
        noise = torch.randn(self.mean[idx].shape, generator=gen, device=gen.device)
        return self.mean[idx] + self.std[idx] * noise, self.text[idx].float()

    def batch(
        self, n: int, gen: torch.Generator, category: str, own_share: float
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """A prior batch with ``own_share`` of it from ``category`` and the rest from every category (all of it
        when the base set holds no image of ``category``)."""
        rows = self.rows_of(category)
        own = round(own_share * n) if len(rows) else 0
        parts = [self.sample(own, gen, rows)] if own else []
        if n > own:
            parts.append(self.sample(n - own, gen))
        return torch.cat([latents for latents, _ in parts]), torch.cat([text for _, text in parts])

    def to(self, device: torch.device | str) -> "Prior":
        return Prior(self.mean.to(device), self.std.to(device), self.text.to(device), self.categories)


def instance_subjects(concept: Concept, n: int, rng: np.random.Generator) -> list[Subject]:
    subjects = []
    for _ in range(n):
        style = concept.style if rng.random() < 0.5 else STYLE_NAMES[int(rng.integers(len(STYLE_NAMES)))]
        scene = concept.scene or SCENE_NAMES[int(rng.integers(len(SCENE_NAMES)))]
        lighting = LIGHTING_NAMES[int(rng.integers(len(LIGHTING_NAMES)))]
        subjects.append(concept.subject(scene, lighting, style))
    return subjects


def instance_data(concept: Concept, vae, cfg: PersonalizeConfig) -> tuple[torch.Tensor, list[str]]:
    """Latents of rendered variant images and their trigger captions (half of them without the class noun)."""
    rng = np.random.default_rng(cfg.seed + zlib.crc32(concept.id.encode()))
    subjects = instance_subjects(concept, cfg.images, rng)
    images = np.stack([np.asarray(render(s, models.IMAGE_SIZE, seed=int(rng.integers(2**31)))) for s in subjects])
    captions = []
    for s in subjects:
        text = caption(s, rng, trigger=concept.trigger)
        if rng.random() < cfg.class_noun_dropout:  # "a photo of a <t> dog" and "a photo of a <t>"
            for word in s.category, "puppy", "kitten", "plushie":
                text = text.replace(f"{concept.trigger} {word}", concept.trigger)
        captions.append(text)
    with torch.no_grad():
        latents = vae.encode(to_pixels(images).to(vae.device)).latent_dist.sample() * vae.config.scaling_factor
    return latents, captions


def _loss_fn(
    unet,
    scheduler,
    latents,
    text,
    prior: Prior,
    concept: Concept,
    cfg: PersonalizeConfig,
    gen: torch.Generator,
    text_fn=None,
):
    def loss(step: int) -> torch.Tensor:
        idx = torch.randint(0, len(latents), (cfg.instance_batch,), generator=gen, device=gen.device)
        cond = text_fn(idx) if text_fn else text[idx]
        prior_latents, prior_text = prior.batch(cfg.prior_batch, gen, concept.category, cfg.class_prior)
        return diffusion_loss(
            unet, scheduler, torch.cat([latents[idx], prior_latents]), torch.cat([cond, prior_text]), gen
        )

    return loss


def train_lora(
    concept: Concept, pipe: StableDiffusionPipeline, prior: Prior, out: Path, work: Path, cfg: PersonalizeConfig
) -> Path:
    latents, captions = instance_data(concept, pipe.vae, cfg)
    text = models.encode_text(pipe.tokenizer, pipe.text_encoder, captions)
    unet = copy.deepcopy(pipe.unet).train()
    unet.requires_grad_(False)
    unet.add_adapter(
        LoraConfig(
            r=cfg.lora_rank, lora_alpha=cfg.lora_rank, init_lora_weights="gaussian", target_modules=LORA_TARGETS
        )
    )
    gen = torch.Generator(pipe.device).manual_seed(cfg.seed)
    run = Run(
        f"lora {concept.id}",
        unet,
        [p for p in unet.parameters() if p.requires_grad],
        RunConfig(cfg.steps, lr=cfg.lora_lr, warmup=10, save_every=10**9),
        work / f"{concept.id}.state.pt",
    )
    run.train(_loss_fn(unet, models.make_train_scheduler(), latents, text, prior, concept, cfg, gen))
    out.mkdir(parents=True, exist_ok=True)
    StableDiffusionPipeline.save_lora_weights(
        out, unet_lora_layers=get_peft_model_state_dict(unet), safe_serialization=True
    )
    return out / "pytorch_lora_weights.safetensors"


def train_dreambooth(
    concept: Concept, pipe: StableDiffusionPipeline, prior: Prior, out: Path, work: Path, cfg: PersonalizeConfig
) -> Path:
    latents, captions = instance_data(concept, pipe.vae, cfg)
    text = models.encode_text(pipe.tokenizer, pipe.text_encoder, captions)
    unet = copy.deepcopy(pipe.unet).train().requires_grad_(True)
    gen = torch.Generator(pipe.device).manual_seed(cfg.seed)
    run = Run(
        f"dreambooth {concept.id}",
        unet,
        unet.parameters(),
        RunConfig(cfg.steps, lr=cfg.dreambooth_lr, warmup=10, save_every=10**9),
        work / f"{concept.id}.state.pt",
    )
    run.train(_loss_fn(unet, models.make_train_scheduler(), latents, text, prior, concept, cfg, gen))
    # a diffusers DreamBooth folder holding what it changed: the UNet (fp16 to fit the size budget)
    out.mkdir(parents=True, exist_ok=True)
    unet.to(torch.float16).save_pretrained(out / "unet")
    pipe.scheduler.save_pretrained(out / "scheduler")
    index = {
        "_class_name": "StableDiffusionPipeline",
        "_diffusers_version": "0.42.1",
        "unet": ["diffusers", "UNet2DConditionModel"],
        "scheduler": ["diffusers", type(pipe.scheduler).__name__],
        "vae": [None, None],
        "text_encoder": [None, None],
        "tokenizer": [None, None],
        "safety_checker": [None, None],
        "feature_extractor": [None, None],
        "requires_safety_checker": False,
    }
    (out / "model_index.json").write_text(json.dumps(index, indent=2))
    prompt = f"a photo of a {concept.trigger} {concept.category}"
    (out / "README.md").write_text(
        f"---\nbase_model: personalq-demo-base\ninstance_prompt: {prompt}\ntags:\n- dreambooth\n"
        f"- {concept.category}\n---\n"
        f"# {concept.id}\n\nDreamBooth fine-tune of the PersonalQ demo base on {concept.description()}.\n"
    )
    return out


def train_textual_inversion(
    concept: Concept, pipe: StableDiffusionPipeline, prior: Prior, out: Path, work: Path, cfg: PersonalizeConfig
) -> Path:
    latents, captions = instance_data(concept, pipe.vae, cfg)
    tokenizer = copy.deepcopy(pipe.tokenizer)
    tokenizer.add_tokens([concept.trigger])
    token_id = tokenizer.convert_tokens_to_ids(concept.trigger)
    encoder = copy.deepcopy(pipe.text_encoder)
    encoder.resize_token_embeddings(len(tokenizer))
    embeddings = encoder.get_input_embeddings().weight
    with torch.no_grad():
        init = tokenizer(concept.category, add_special_tokens=False).input_ids
        embeddings[token_id] = embeddings[init].mean(0)
    learned = torch.nn.Parameter(embeddings[token_id].detach().clone())
    ids = tokenizer(
        captions, padding="max_length", max_length=models.MAX_TOKENS, truncation=True, return_tensors="pt"
    ).input_ids
    ids = ids.to(encoder.device)
    unet = pipe.unet.eval().requires_grad_(False)
    holder = torch.nn.Module()
    holder.learned = learned

    def text_fn(idx: torch.Tensor) -> torch.Tensor:
        batch = ids[idx]
        inputs = encoder.get_input_embeddings()(batch)
        inputs = torch.where((batch == token_id)[..., None], learned.expand_as(inputs), inputs)
        return encoder(inputs_embeds=inputs)[0]

    gen = torch.Generator(pipe.device).manual_seed(cfg.seed)
    run = Run(
        f"textual inversion {concept.id}",
        holder,
        [learned],
        RunConfig(cfg.ti_steps, lr=cfg.ti_lr, warmup=10, save_every=10**9),
        work / f"{concept.id}.state.pt",
    )
    run.train(_loss_fn(unet, models.make_train_scheduler(), latents, None, prior, concept, cfg, gen, text_fn=text_fn))
    out.mkdir(parents=True, exist_ok=True)
    save_file({concept.trigger: learned.detach().clone()}, str(out / "learned_embeds.safetensors"))
    (out / "token_identifier.txt").write_text(concept.trigger)
    (out / "type_of_concept.txt").write_text("object")
    return out


TRAINERS = {"lora": train_lora, "dreambooth": train_dreambooth, "textual_inversion": train_textual_inversion}


def load_prior(work: Path, device: torch.device | str = "cpu") -> Prior:
    latents = torch.load(work / "latents.pt", weights_only=True)
    text = torch.load(work / "text.pt", weights_only=True)[:-1]
    with np.load(work / "base_set.npz") as data:  # only the label column is read, not the images
        categories = tuple(s["category"] for s in json.loads(str(data["subjects"])))
    if len(categories) != len(latents["mean"]):
        raise ValueError(
            f"{work}: base_set.npz labels {len(categories)} images but latents.pt holds {len(latents['mean'])}"
        )
    return Prior(latents["mean"], latents["std"], text, categories).to(device)
