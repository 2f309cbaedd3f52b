"""What the chat draws: a prompt and the checkpoints it is drawn with, each at its strength, and the edits a person
makes to that set after Check-in chose it.

Check-in picks the set once per request; after that a person tunes it by hand (a strength slider, a chip removed,
a checkpoint added from the repository's search) and the chat draws again with the same prompt, without asking
Check-in again. Each edit here returns a new :class:`Composition`, so the one a drawing started from never changes
under it. A checkpoint's trigger words follow it: adding one puts its trigger into the prompt, removing one takes
its triggers out, or its adapter would have nothing to act on (or act on a word left behind).

The same set is what a finished image's PNG records (:meth:`Composition.parameters`, the WebUI's ``parameters``
chunk) and what one click on an earlier image restores (:func:`from_parameters`).
"""

from __future__ import annotations

import functools
import json
import logging
import re
import secrets
from dataclasses import dataclass, replace
from pathlib import Path

from pydantic import ValidationError

from personalq.repository.card import StoredCheckpoint
from personalq.repository.service import CheckpointFilter, CheckpointNotFound, Repository
from personalq.repository.weighted import MAX_WEIGHT, MIN_WEIGHT, ROLES, Weighted
from personalq.serving.allowance import Refused, params_from
from personalq.serving.generation import GenerationParams
from personalq.serving.png_parameters import ImageParameters, NetworkUse
from personalq.serving.sizes import parse_size

log = logging.getLogger(__name__)

RANDOM_SEED = -1  # what the seed box holds for "draw a new seed each time"
MAX_NEGATIVE_CHARS = 1000
MAX_USES = len(ROLES)  # at most one checkpoint per role: also what the chat shows chips for
WEIGHT_STEP = 0.05  # the strength slider's step
# diffusers names every adapter file alike; such a stem says nothing, so the image names the checkpoint instead
GENERIC_STEMS = {"pytorch_lora_weights", "learned_embeds", "diffusion_pytorch_model", "model", "adapter_model"}


class CompositionRefused(ValueError):
    """An edit that would make a set serving cannot draw; the message says why, in the visitor's terms."""


def clamp_weight(weight: float) -> float:
    """A strength from the page inside the WebUI's range, on the slider's step (NaN: the default strength)."""
    if weight != weight:  # NaN
        return 1.0
    bounded = min(MAX_WEIGHT, max(MIN_WEIGHT, float(weight)))
    return round(round(bounded / WEIGHT_STEP) * WEIGHT_STEP, 2)


def _without_word(prompt: str, word: str) -> str:
    """``prompt`` with every occurrence of ``word`` (case-insensitive, a whole word) taken out, and the commas and
    spaces it leaves tidied."""
    stripped = _word(word).sub("", prompt)
    parts = (re.sub(r"\s{2,}", " ", part).strip() for part in stripped.split(","))
    return ", ".join(part for part in parts if part)


def _word(word: str) -> re.Pattern:
    return re.compile(rf"(?<![\w<>-]){re.escape(word)}(?![\w<>-])", re.IGNORECASE)


def _mentions(prompt: str, word: str) -> bool:
    return _word(word).search(prompt) is not None


@dataclass(frozen=True)
class Composition:
    """A prompt, its negative prompt, and the checkpoints that draw it at their strengths (the first is the one the
    request is about)."""

    prompt: str
    uses: tuple[Weighted, ...]
    negative_prompt: str = ""

    @property
    def base_model(self) -> str | None:
        return self.uses[0].checkpoint.base_model if self.uses else None

    def reweighted(self, index: int, weight: float) -> "Composition":
        """The set with the checkpoint at ``index`` drawn at ``weight`` (held to the slider's range)."""
        self._check_index(index)
        uses = list(self.uses)
        uses[index] = Weighted(uses[index].checkpoint, clamp_weight(weight))
        return replace(self, uses=tuple(uses))

    def without(self, index: int) -> "Composition":
        """The set less the checkpoint at ``index``, and its trigger words out of the prompt. The last one cannot go:
        an image is drawn with at least one checkpoint."""
        self._check_index(index)
        if len(self.uses) == 1:
            raise CompositionRefused("an image needs at least one checkpoint: add another before removing this one")
        removed = self.uses[index].checkpoint
        prompt = self.prompt
        for trigger in removed.triggers:
            prompt = _without_word(prompt, trigger)
        return replace(self, prompt=prompt, uses=self.uses[:index] + self.uses[index + 1 :])

    def with_checkpoint(self, checkpoint: StoredCheckpoint, weight: float = 1.0) -> "Composition":
        """The set plus ``checkpoint`` (its trigger appended to the prompt when the prompt lacks it). Refused when it
        is already in the set, the set is full, it runs on another base, or it is a second full UNet."""
        if any(use.id == checkpoint.id for use in self.uses):
            raise CompositionRefused(f"{checkpoint.name} is already in the image")
        if len(self.uses) >= MAX_USES:
            raise CompositionRefused(f"an image takes at most {MAX_USES} checkpoints")
        if self.base_model is not None and checkpoint.base_model != self.base_model:
            raise CompositionRefused(
                f"{checkpoint.name} is for {checkpoint.base_model} and {self.uses[0].checkpoint.name} for "
                f"{self.base_model}: one image is drawn on one base"
            )
        if checkpoint.kind == "dreambooth" and any(use.checkpoint.kind == "dreambooth" for use in self.uses):
            raise CompositionRefused("two DreamBooth checkpoints are two whole UNets: an image is drawn on one")
        trigger = checkpoint.canonical_trigger
        prompt = self.prompt
        if trigger and not any(_mentions(prompt, t) for t in checkpoint.triggers):
            prompt = f"{prompt}, {trigger}" if prompt.strip() else trigger
        return replace(self, prompt=prompt, uses=self.uses + (Weighted(checkpoint, clamp_weight(weight)),))

    def _check_index(self, index: int) -> None:
        if not 0 <= index < len(self.uses):
            raise CompositionRefused("that checkpoint is no longer in the image")

    def parameters(self, params: GenerationParams, model: str, sampler: str = "") -> ImageParameters:
        """What the image's PNG says about how it was made (the WebUI's ``parameters`` chunk): the prompt, the
        settings, ``model`` (the base, or the DreamBooth checkpoint drawn on) and a network per adapter."""
        return ImageParameters(
            prompt=self.prompt,
            negative_prompt=params.negative_prompt,
            steps=params.steps,
            sampler=sampler,
            cfg_scale=params.guidance,
            seed=params.seed,
            width=params.width,
            height=params.height,
            model=model,
            networks=[
                NetworkUse(name=network_name(use.checkpoint), weight=use.weight, hash=_short_hash(use.checkpoint))
                for use in self.uses
                if use.checkpoint.kind != "dreambooth"
            ],
        )


def network_name(checkpoint: StoredCheckpoint) -> str:
    """How a prompt names the adapter, as the WebUI does (``<lora:NAME:weight>``): its file's stem, or the
    checkpoint id when the stem is one diffusers gives every adapter."""
    stem = Path(checkpoint.weights_path).stem if checkpoint.weights_path else ""
    return checkpoint.id if not stem or stem in GENERIC_STEMS else stem


def _short_hash(checkpoint: StoredCheckpoint) -> str:
    """The WebUI's AutoV2 hash (the first 10 hex digits of the file's SHA-256) for a single-file adapter; a folder's
    digest is not a file hash, so none then."""
    single_file = checkpoint.weights_path and Path(checkpoint.weights_path).suffix
    return (checkpoint.weights_sha256 or "")[:10] if single_file else ""


def model_name(uses: tuple[Weighted, ...], base_name: str) -> str:
    """The PNG's ``Model``: the DreamBooth checkpoint the image was drawn on, else the base."""
    return next((use.checkpoint.id for use in uses if use.checkpoint.kind == "dreambooth"), base_name)


def from_parameters(parameters: ImageParameters, repository: Repository) -> Composition:
    """The set an image's ``parameters`` chunk names, found in the repository: each network by checkpoint id, by
    file stem or by hash, and a DreamBooth ``Model`` by id. Names the repository no longer holds are left out (and
    logged); a set that keeps none is refused."""
    uses: list[Weighted] = []
    if parameters.model:
        try:
            model = repository.get(parameters.model)
            if model.kind == "dreambooth":
                uses.append(Weighted(model))
        except CheckpointNotFound:
            pass
    for network in parameters.networks[:MAX_USES]:
        checkpoint = _find_network(network, repository)
        if checkpoint is None:
            log.info("the image names %s, which the repository does not hold", network.name)
        elif all(use.id != checkpoint.id for use in uses):
            uses.append(Weighted(checkpoint, clamp_weight(network.weight)))
    if not uses:
        raise CompositionRefused("none of the checkpoints this image was drawn with is in the repository any more")
    return Composition(parameters.prompt, tuple(uses[:MAX_USES]), parameters.negative_prompt)


def _find_network(network: NetworkUse, repository: Repository) -> StoredCheckpoint | None:
    try:
        return repository.get(network.name)
    except CheckpointNotFound:
        pass
    candidates = repository.list(CheckpointFilter(text=network.name, limit=50))
    return next(
        (
            c
            for c in candidates
            if network_name(c) == network.name and (not network.hash or _short_hash(c) in ("", network.hash))
        ),
        None,
    )


def generation_params(seed: float, steps: float, guidance: float, size: str, negative: str) -> GenerationParams:
    """The settings a drawing asks for, checked (:class:`Refused` says what is wrong): ``seed`` -1 draws a new
    one, ``size`` reads ``"W x H"``."""
    if isinstance(seed, (int, float)) and seed == RANDOM_SEED:
        seed = secrets.randbelow(2**32)
    width, height = parse_size(size)
    negative = (negative or "").strip()
    if len(negative) > MAX_NEGATIVE_CHARS:
        raise Refused(f"the negative prompt is longer than {MAX_NEGATIVE_CHARS} characters")
    params = params_from(seed, steps, guidance, width)
    try:
        return GenerationParams(**{**params.model_dump(), "height": height, "negative_prompt": negative})
    except ValidationError:
        raise Refused("the size must be between 32 and 2048 pixels a side, in multiples of 8") from None


def generate(engine, composition: Composition, precision: str, trigger_aware: bool, params, float_kv: bool = False):
    """The engine's frames for ``composition``: the one place the chat calls serving with a set of checkpoints.
    Until serving applies several adapters at once, the image is drawn with the first of the set."""
    first = composition.uses[0].checkpoint
    return engine.generate(first, composition.prompt, precision, trigger_aware, params, float_kv=float_kv)


# diffusers' scheduler classes by the name the WebUI gives the same sampler
SAMPLERS = {
    "EulerAncestralDiscreteScheduler": "Euler a",
    "EulerDiscreteScheduler": "Euler",
    "DPMSolverMultistepScheduler": "DPM++ 2M",
    "DDIMScheduler": "DDIM",
    "PNDMScheduler": "PLMS",
    "LMSDiscreteScheduler": "LMS",
    "HeunDiscreteScheduler": "Heun",
    "UniPCMultistepScheduler": "UniPC",
    "DDPMScheduler": "DDPM",
    "LCMScheduler": "LCM",
}


@functools.lru_cache(maxsize=32)
def sampler_of(base_location: str) -> str:
    """The sampler a base pipeline folder draws with, by the WebUI's name ("" when it cannot be read here)."""
    config = Path(base_location) / "scheduler" / "scheduler_config.json"
    try:
        name = json.loads(config.read_text()).get("_class_name", "")
    except (OSError, ValueError):
        return ""
    return SAMPLERS.get(name, name.removesuffix("Scheduler"))


def search(repository: Repository, text: str, base_model: str | None, limit: int = 20) -> list[StoredCheckpoint]:
    """Checkpoints a person may add to the image: those whose card mentions ``text``, on the image's base."""
    text = (text or "").strip()[:100]
    if not text:
        return []
    return repository.list(CheckpointFilter(text=text, base_model=base_model, limit=limit))


__all__ = [
    "MAX_USES",
    "Composition",
    "CompositionRefused",
    "clamp_weight",
    "from_parameters",
    "generate",
    "generation_params",
    "model_name",
    "network_name",
    "sampler_of",
    "search",
]
