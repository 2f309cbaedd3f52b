"""What raters judge: requests from three lists, each with a stable id.

* Repo-Prompts style: requests about the repository's own checkpoints (by family, version, date, style),
  written from the cards, with the checkpoint they mean as ground truth for the rubric judge.
* MS-COCO style: plain scene captions that name one of the paper's 20 categories.
* PartiPrompts style: longer compositional prompts with a style and a setting.

The lists are written here (nothing is downloaded); the two caption lists are this project's own text.
"""

from __future__ import annotations

import hashlib
import random
from dataclasses import dataclass

from personalq.repository.service import Repository

COCO_STYLE = [
    "a dog sitting on a sunny beach",
    "a cat sleeping on a sofa in a living room",
    "a person walking down a city street at night",
    "a brown bear standing by a forest lake",
    "a horse grazing in a lush park",
    "a red car parked on a snowy mountain road",
    "a toy left on a wooden floor",
    "a watch lying on a table",
    "a bag hanging on a chair",
    "a chair next to a window",
    "a small house in a meadow",
    "a tall building in a city at dusk",
    "a stone bridge over a river",
    "a flower in a garden",
    "a tree on a hill",
    "a mountain covered in snow",
    "a painting hanging on a wall",
    "a drawing of a cat on paper",
    "a logo printed on a shirt",
    "a pair of shoes by the door",
]
PARTI_STYLE = [
    "a watercolor painting of a teddy bear reading under a tree at dawn",
    "a pixel art dog wearing sunglasses on a beach at golden hour",
    "an anime illustration of a cat on a city street under neon lights",
    "a vintage polaroid of a horse in a snowy field on an overcast day",
    "a pencil sketch of a bridge across a forest lake at blue hour",
    "a flat vector logo of a mountain with a sun behind it",
    "an oil painting of a house in a lush park in spring",
    "a photo of a sports car driving along a sunny beach road",
    "a sketch of a chair in a living room with morning light",
    "a watercolor of flowers in a vase next to a window",
    "a pixel art tree on a hill at night",
    "a realistic photo of a leather bag on a cafe table",
    "a drawing of a shoe in the style of a fashion sketch",
    "a watch on a wrist, close-up, vintage polaroid",
    "a person hiking a snowy mountain at golden hour, anime style",
    "a painting of a building at blue hour in a city",
]


@dataclass(frozen=True)
class RatingItem:
    id: str
    source: str  # repo | coco | parti
    request: str
    target_id: str | None = None  # the checkpoint a repo request means (rubric ground truth)


def _item_id(source: str, request: str) -> str:
    return f"{source}-{hashlib.sha1(request.encode()).hexdigest()[:10]}"


def repo_items(repository: Repository, count: int = 24, seed: int = 0) -> list[RatingItem]:
    """Requests about the repository's checkpoints: family + version, month + subject, latest of a family."""
    rng = random.Random(seed)
    cards = sorted(repository.list(), key=lambda c: c.id)
    items = []
    for card in rng.sample(cards, min(count, len(cards))):
        subject = card.subjects[0] if card.subjects else card.name
        template = rng.choice(["{name}", "the {subject} model from {month}", "{subject} {version} on a beach"])
        request = template.format(
            name=card.name, subject=subject, month=f"{card.created_at:%B %Y}", version=card.version or ""
        )
        items.append(RatingItem(_item_id("repo", request), "repo", request.strip(), card.id))
    return items


def all_items(repository: Repository, repo_count: int = 24, seed: int = 0) -> list[RatingItem]:
    return (
        repo_items(repository, repo_count, seed)
        + [RatingItem(_item_id("coco", r), "coco", r) for r in COCO_STYLE]
        + [RatingItem(_item_id("parti", r), "parti", r) for r in PARTI_STYLE]
    )
