"""What the chat draws: a prompt and the checkpoints it is drawn with, each at its strength, the edits a person
makes to that set after Check-in chose it, and the settings a page sends, checked.

Check-in picks the set once per request; after that a person tunes it by hand (a strength slider, a chip removed,
a checkpoint added from the repository's search) and the chat draws again with the same prompt, without asking
Check-in again. Each edit here returns a new :class:`Drawing`, so the one a drawing started from never changes
under it. A checkpoint's trigger words follow it: adding one puts its trigger into the prompt, removing one takes
its triggers out, or its adapter would have nothing to act on (or act on a word left behind).

The same set is what a finished image's PNG records (:meth:`Drawing.parameters`, the WebUI's ``parameters``
chunk) and what one click on an earlier image restores (:func:`from_parameters`).
"""

from __future__ import annotations

import logging
import re
import secrets
from dataclasses import dataclass, replace

from pydantic import ValidationError

from personalq.repository.card import StoredCheckpoint
from personalq.repository.service import CheckpointFilter, CheckpointNotFound, Repository
from personalq.repository.weighted import MAX_CHECKPOINTS, MAX_WEIGHT, MIN_WEIGHT, Weighted
from personalq.serving.allowance import Refused, params_from
from personalq.serving.checkpoints import replaces_unet
from personalq.serving.composition import Composition as ServedSet
from personalq.serving.composition import CompositionError
from personalq.serving.generation import GenerationParams
from personalq.serving.png_parameters import ImageParameters
from personalq.serving.sizes import parse_size
from personalq.serving.webui_parameters import autov2, file_stem, image_parameters, sampler_name, stored_scheduler

log = logging.getLogger(__name__)

RANDOM_SEED = -1  # what the seed box holds for "draw a new seed each time"
MAX_NEGATIVE_CHARS = 1000
MAX_USES = MAX_CHECKPOINTS  # also what the chat shows chips for
WEIGHT_STEP = 0.05  # the strength slider's step


class DrawingRefused(ValueError):
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
class Drawing:
    """A prompt and the checkpoints that draw it at their strengths (the first is the one the request is about). The
    negative prompt and the other settings are the page's, so a person changes them without changing the set."""

    prompt: str
    uses: tuple[Weighted, ...]

    def __hash__(self) -> int:
        """By the prompt and the set's ids and weights (cards are not hashable): what Gradio compares to tell that
        the drawing in a session's state changed."""
        return hash((self.prompt, tuple((use.id, use.weight) for use in self.uses)))

    @property
    def base_model(self) -> str | None:
        return self.uses[0].checkpoint.base_model if self.uses else None

    @property
    def anchor(self) -> StoredCheckpoint:
        """The checkpoint whose UNet the image runs on (serving's :attr:`Composition.anchor`)."""
        return ServedSet.of(self.uses).anchor

    def reweighted(self, index: int, weight: float) -> "Drawing":
        """The set with the checkpoint at ``index`` drawn at ``weight`` (held to the slider's range)."""
        self._check_index(index)
        uses = list(self.uses)
        uses[index] = Weighted(uses[index].checkpoint, clamp_weight(weight))
        return replace(self, uses=tuple(uses))

    def without(self, index: int) -> "Drawing":
        """The set less the checkpoint at ``index``, and its trigger words out of the prompt. The last one cannot go:
        an image is drawn with at least one checkpoint."""
        self._check_index(index)
        if len(self.uses) == 1:
            raise DrawingRefused("an image needs at least one checkpoint: add another before removing this one")
        removed = self.uses[index].checkpoint
        prompt = self.prompt
        for trigger in removed.triggers:
            prompt = _without_word(prompt, trigger)
        return replace(self, prompt=prompt, uses=self.uses[:index] + self.uses[index + 1 :])

    def with_checkpoint(self, checkpoint: StoredCheckpoint, weight: float = 1.0) -> "Drawing":
        """The set plus ``checkpoint`` (its trigger appended to the prompt when the prompt lacks it). Refused when the
        set is full or serving could not draw it (:class:`~personalq.serving.composition.Composition`: the
        checkpoint already in it, on another base, a second full UNet)."""
        if len(self.uses) >= MAX_USES:
            raise DrawingRefused(f"an image takes at most {MAX_USES} checkpoints")
        uses = self.uses + (Weighted(checkpoint, clamp_weight(weight)),)
        try:
            ServedSet.of(uses)
        except CompositionError as error:
            raise DrawingRefused(str(error)) from None
        trigger = checkpoint.canonical_trigger
        prompt = self.prompt
        if trigger and not any(_mentions(prompt, t) for t in checkpoint.triggers):
            prompt = f"{prompt}, {trigger}" if prompt.strip() else trigger
        return replace(self, prompt=prompt, uses=uses)

    def _check_index(self, index: int) -> None:
        if not 0 <= index < len(self.uses):
            raise DrawingRefused("that checkpoint is no longer in the image")

    def parameters(self, params: GenerationParams, base_location: str) -> ImageParameters:
        """What the image's PNG says about how it was made (the WebUI's ``parameters`` chunk, named as
        :mod:`~personalq.serving.webui_parameters` names things): the prompt, the settings, the model and sampler of
        ``base_location``, a network per LoRA in effect at its weight."""
        sampler = sampler_name(*stored_scheduler(base_location))
        return image_parameters(ServedSet.of(self.uses), self.prompt, params, sampler, base_location)


def from_parameters(parameters: ImageParameters, repository: Repository) -> Drawing:
    """The set an image's ``parameters`` chunk names, found in the repository: the ``Model`` when it is a full UNet
    held there, and each network, by checkpoint id or file stem (and hash, when both have one). Names the repository
    no longer holds are left out (and logged); a set that keeps none is refused."""
    model = _find(parameters.model, parameters.model_hash, repository) if parameters.model else None
    uses = [Weighted(model)] if model is not None and replaces_unet(model) else []
    for network in parameters.networks[:MAX_USES]:
        checkpoint = _find(network.name, network.hash, repository)
        if checkpoint is None:
            log.info("the image names %s, which the repository does not hold", network.name)
        elif all(use.id != checkpoint.id for use in uses):
            uses.append(Weighted(checkpoint, clamp_weight(network.weight)))
    if not uses:
        raise DrawingRefused("none of the checkpoints this image was drawn with is in the repository any more")
    return Drawing(parameters.prompt, tuple(uses[:MAX_USES]))


def _find(name: str, short_hash: str, repository: Repository) -> StoredCheckpoint | None:
    """The checkpoint a PNG names: by id, else by file stem among the cards that mention the name."""
    try:
        return repository.get(name[:200])
    except CheckpointNotFound:
        pass
    candidates = repository.list(CheckpointFilter(text=name[:200], limit=50))
    return next(
        (c for c in candidates if file_stem(c) == name and (not short_hash or autov2(c) in ("", short_hash))), None
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


def generate(engine, drawing: Drawing, precision: str, trigger_aware: bool, params, float_kv: bool = False):
    """The engine's frames for ``drawing``: every checkpoint of the set at its weight, in one image."""
    return engine.generate(list(drawing.uses), drawing.prompt, precision, trigger_aware, params, float_kv=float_kv)


def search(repository: Repository, text: str, base_model: str | None, limit: int = 20) -> list[StoredCheckpoint]:
    """Checkpoints a person may add to the image: those whose card mentions ``text``, on the image's base."""
    text = (text or "").strip()[:100]
    if not text:
        return []
    return repository.list(CheckpointFilter(text=text, base_model=base_model, limit=limit))


__all__ = [
    "MAX_USES",
    "Drawing",
    "DrawingRefused",
    "clamp_weight",
    "from_parameters",
    "generate",
    "generation_params",
    "search",
]
