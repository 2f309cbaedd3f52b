"""Several checkpoints in one image: each at its own strength, as the WebUI writes ``<lora:name:0.8>``.

A person combines a character with a style, a subject with a background or a detail LoRA. Check-in selects the set
(:class:`WeightedId`, what its JSON carries), the conversation resolves it to stored cards (:class:`Weighted`), and
serving applies every adapter at its weight. The type lives at the repository layer because Check-in, serving and
the UI all read it and none of them may import another's.
"""

from __future__ import annotations

from dataclasses import dataclass

from pydantic import BaseModel, Field

from personalq.repository.card import StoredCheckpoint

# the WebUI's own slider range for a network's strength; negative weights subtract a concept and people use them
MIN_WEIGHT, MAX_WEIGHT = -2.0, 2.0
DEFAULT_WEIGHT = 1.0
# what a composed image is made of, by the role each checkpoint plays in it; at most one of each
ROLES = ("subject", "style", "concept", "background", "detail")
MAX_CHECKPOINTS = len(ROLES)  # in one image: what Check-in selects at most and the chat shows chips for


class WeightedId(BaseModel):
    """One checkpoint of a Check-in selection: its id, its strength and the role it plays in the picture."""

    checkpoint_id: str
    weight: float = Field(DEFAULT_WEIGHT, ge=MIN_WEIGHT, le=MAX_WEIGHT)
    role: str = "subject"


@dataclass(frozen=True)
class Weighted:
    """A stored checkpoint at a strength: what serving applies."""

    checkpoint: StoredCheckpoint
    weight: float = DEFAULT_WEIGHT

    @property
    def id(self) -> str:
        return self.checkpoint.id
