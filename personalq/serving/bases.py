"""Which base pipeline serves a checkpoint, and the refusal when its weights do not fit that base.

A card names its base by key (``sd-1.5``, ``sdxl``, ``pony``: :mod:`personalq.repository.base_models`);
settings map keys to a pipeline folder or a Hub id, and the bundled demo base serves ``personalq-demo``. A card
whose key maps to nothing, or whose weights were made for another architecture than the base's (an SDXL LoRA
on an SD 1.5 base), is refused before anything loads, with a message that names both bases: diffusers would
otherwise fail deep inside with a shape error, or worse, skip the keys it cannot place and draw the base alone.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from personalq.bundled import base_dir
from personalq.config import Settings
from personalq.repository.base_models import ARCHITECTURES, DEMO_BASE, architecture_of, describe, normalise_base_model
from personalq.repository.card import StoredCheckpoint
from personalq.repository.importers.architecture import weights_architecture
from personalq.serving.checkpoints import CheckpointLoadError


class BaseMismatch(CheckpointLoadError):
    """The checkpoint cannot run on any configured base: its base is unknown, or its weights do not fit."""


@dataclass(frozen=True)
class ServedBase:
    key: str  # the card's base key
    location: str  # a pipeline folder or a Hub id
    architecture: str | None  # of the pipeline at ``location``; None when it cannot be told


def configured_bases(settings: Settings) -> dict[str, str]:
    """Base key -> pipeline location: the demo base, then the settings (whose keys are normalized the same way as
    the cards', so ``{"SD 1.5": ...}`` maps ``sd-1.5``)."""
    bases = {DEMO_BASE: str(base_dir(settings))}
    bases.update({normalise_base_model(key): location for key, location in settings.base_models.items()})
    return bases


def pipeline_architecture(location: str) -> str | None:
    """The architecture of a base pipeline folder, from its model index and configs: SDXL by its pipeline class,
    the demo by its BERT text encoder, SD 2.x by a 1024-wide CLIP text encoder (OpenCLIP-H), SD 1.x by any other
    CLIP; a Hub id (nothing to read offline) is taken at its key's word by the caller.

    The model index names the text encoder's class, so this holds before a base's packaged files are copied in.
    """
    folder = Path(location)
    index_file, encoder_file = folder / "model_index.json", folder / "text_encoder" / "config.json"
    if not index_file.is_file():
        return None
    index = json.loads(index_file.read_text())
    if "XL" in str(index.get("_class_name", "")):
        return "sdxl"
    encoder_class = str((index.get("text_encoder") or [None, None])[-1])
    if encoder_class.startswith("Bert"):
        return "demo"
    if not encoder_class.startswith("CLIP"):
        return None
    encoder = json.loads(encoder_file.read_text()) if encoder_file.is_file() else {}
    return "sd2" if encoder.get("hidden_size") == 1024 else "sd1"


def _label(architecture: str | None) -> str:
    return ARCHITECTURES.get(architecture or "", "an architecture this program cannot tell")


def served_base(settings: Settings, checkpoint: StoredCheckpoint | None = None) -> ServedBase:
    """The base ``checkpoint`` runs on (the demo base for no checkpoint), after checking that it fits.

    Raises :class:`BaseMismatch` naming the card's base and the one configured for it.
    """
    bases = configured_bases(settings)
    key = checkpoint.base_model if checkpoint is not None else DEMO_BASE
    if key not in bases:
        configured = ", ".join(f"{k} -> {v}" for k, v in sorted(bases.items()))
        raise BaseMismatch(
            f"{checkpoint.id} is for {describe(key)}, and no base is configured for {key}. Configured bases: "
            f'{configured}. Map it in PERSONALQ_BASE_MODELS, e.g. \'{{"{key}": "/path/to/pipeline"}}\'.'
        )
    location = bases[key]
    found = pipeline_architecture(location) if Path(location).exists() else architecture_of(key)
    base = ServedBase(key, location, found)
    if checkpoint is not None and checkpoint.weights_path:
        made_for = weights_architecture(Path(checkpoint.weights_path))
        if made_for is not None and found is not None and made_for != found:
            raise BaseMismatch(
                f"{checkpoint.id} holds weights for {_label(made_for)}, but its base {key} is served by {location}, "
                f"{'the demo base' if found == 'demo' else 'an ' + _label(found) + ' pipeline'}: "
                f"import it with the base it was trained on, or map {key} to a {_label(made_for)} pipeline."
            )
    return base
