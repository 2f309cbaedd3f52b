"""Scoring requests that combine several checkpoints: the right set, at the right weights.

A composition instance's ground truth lists ``checkpoints`` (``[{"checkpoint_id", "weight"}]``, weight null when the
request says none) instead of one ``checkpoint_id``; a clarification's list is the set after its follow-up answer,
and a refusal (mixed bases) is a no match. A prediction has the right *set* when its status is right and, for a
selection, it holds exactly those checkpoints (in any order); its *weights* are right when every weight the request
said is the one it carries.
"""

from __future__ import annotations

import numpy as np

WEIGHT_TOLERANCE = 0.01


def is_composition(instance: dict) -> bool:
    return "checkpoints" in instance["ground_truth"]


def final_ids(prediction: dict) -> list[str]:
    """The ids of every checkpoint the request ends with (one, for a single pick)."""
    return [c["checkpoint_id"] for c in _final(prediction) or []]


def _final(prediction: dict) -> list[dict] | None:
    """The checkpoints the request ends with: selected at once, or after the follow-up answer."""
    if prediction["status"] == "selected":
        return prediction.get("checkpoints") or []
    followup = prediction.get("followup") or {}
    return followup.get("checkpoints") if followup.get("status") == "selected" else None


def right_set(instance: dict, prediction: dict) -> bool:
    truth = instance["ground_truth"]
    if truth["status"] == "no_match":
        return prediction["status"] == "no_match"
    if prediction["status"] != truth["status"]:
        return False
    got = _final(prediction)
    return got is not None and {c["checkpoint_id"] for c in got} == {c["checkpoint_id"] for c in truth["checkpoints"]}


def right_weights(instance: dict, prediction: dict) -> bool:
    """Every weight the request said, carried by its checkpoint (only asked of a right set)."""
    said = {
        c["checkpoint_id"]: c["weight"] for c in instance["ground_truth"]["checkpoints"] if c.get("weight") is not None
    }
    got = {c["checkpoint_id"]: c["weight"] for c in _final(prediction) or []}
    return all(abs(got.get(cid, float("nan")) - weight) <= WEIGHT_TOLERANCE for cid, weight in said.items())


def composition_metrics(instances: list[dict], predictions: list[dict]) -> dict:
    """``right_set`` over the composition instances, ``right_weights`` over those with a right set and a weight
    said, and the right set per category."""
    pairs = [(i, p) for i, p in zip(instances, predictions) if is_composition(i)]
    if not pairs:
        return {}
    sets = [right_set(i, p) for i, p in pairs]
    weighted = [
        right_weights(i, p)
        for (i, p), ok in zip(pairs, sets)
        if ok and any(c.get("weight") is not None for c in i["ground_truth"]["checkpoints"])
    ]
    per_category: dict[str, list[bool]] = {}
    for (i, _), ok in zip(pairs, sets):
        per_category.setdefault(i.get("category", "all"), []).append(ok)
    return {
        "right_set": float(np.mean(sets)),
        "right_weights": float(np.mean(weighted)) if weighted else float("nan"),
        "set_per_category": {k: float(np.mean(v)) for k, v in sorted(per_category.items())},
    }


def set_miss(instance: dict, prediction: dict) -> dict:
    """One composition the prediction got wrong: the set it should have ended with and the one it did."""
    truth = instance["ground_truth"]
    return {
        "id": instance["instance_id"],
        "query": instance["query"],
        "truth": " + ".join(c["checkpoint_id"] for c in truth["checkpoints"]) or truth["status"],
        "got": " + ".join(final_ids(prediction)) or prediction["status"],
        "why": prediction.get("reason") or prediction.get("question") or "",
    }
