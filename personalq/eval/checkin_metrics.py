"""Scoring predictions against Repo-Prompts ground truth, and the paper's rubric judge."""

from __future__ import annotations

import re
import unicodedata

import numpy as np

from personalq.checkin.lexicon import canonical_subject
from personalq.eval.composition_metrics import composition_metrics, final_ids, is_composition, right_set, set_miss
from personalq.rating import rubric
from personalq.repository.service import Repository


def _f1(p: float, r: float) -> float:
    return 0.0 if p + r == 0 else 2 * p * r / (p + r)


def _pr(instances: list[dict], predictions: list[dict], status: str) -> tuple[float, float, float]:
    truth = [i["ground_truth"]["status"] == status for i in instances]
    predicted = [p["status"] == status for p in predictions]
    tp = sum(t and p for t, p in zip(truth, predicted))
    precision = tp / sum(predicted) if sum(predicted) else 0.0
    recall = tp / sum(truth) if sum(truth) else 0.0
    return precision, recall, _f1(precision, recall)


def final_choice(prediction: dict) -> str | None:
    if prediction["status"] == "selected":
        return prediction["checkpoint_id"]
    followup = prediction.get("followup") or {}
    return followup.get("checkpoint_id") if followup.get("status") == "selected" else None


def final_prompt(prediction: dict) -> str | None:
    if prediction["status"] == "selected":
        return prediction.get("prompt")
    return (prediction.get("followup") or {}).get("prompt")


def final_negative(prediction: dict) -> str:
    """The negative prompt that goes with :func:`final_prompt` (where a negative embedding's trigger goes)."""
    final = prediction if prediction["status"] == "selected" else prediction.get("followup") or {}
    return final.get("negative_prompt") or ""


class RubricJudge:
    """The paper's rubric (:mod:`personalq.rating.rubric`), applied from the structured constraints the generator
    recorded, so it needs no model and no key."""

    def __init__(self, repository: Repository):
        self.repository = repository

    def score(self, instance: dict, prediction: dict) -> float:
        truth = instance["ground_truth"]
        constraints = instance.get("constraints") or {}
        if truth["status"] == "no_match":
            return 5.0 if prediction["status"] == "no_match" else (2.0 if prediction["status"] == "clarify" else 1.0)
        chosen_id = final_choice(prediction)
        if chosen_id is None:
            return rubric.MISS
        card = self.repository.get(chosen_id)
        target = self.repository.get(truth["checkpoint_id"])
        parts = []
        wanted = constraints.get("subject")
        if wanted:
            parts.append(rubric.subject(canonical_subject(wanted) in {canonical_subject(s) for s in card.subjects}))
        if constraints.get("style"):
            parts.append(rubric.style(constraints["style"] in card.styles))
        if any(constraints.get(k) for k in ("created", "used", "order", "version")):
            parts.append(rubric.graded(card.id == target.id, card.created_at.date() == target.created_at.date()))
        context = rubric.context(card, target)
        if truth["status"] == "clarify" and prediction["status"] != "clarify":
            context = min(context, rubric.NEAR)  # guessed where it should have asked
        parts.append(context)
        return rubric.average(parts)


STATUSES = ("selected", "clarify", "no_match")


def prompt_metrics(instances: list[dict], predictions: list[dict], repository: Repository) -> dict:
    """The image prompt judged with the selection, over the instances annotated with ``scene``: of the right
    picks, the share whose prompt keeps the scene, leaks nothing, and both; and *end to end*, the share of requests
    served: the right checkpoint with a good prompt, or an honest no-match. Empty when nothing is annotated."""
    annotated = [(i, p) for i, p in zip(instances, predictions) if "scene" in i]
    if not annotated:
        return {}
    right = [(i, p) for i, p in annotated if i["ground_truth"]["status"] != "no_match" and _right_pick(i, p)]
    cards = {c.id: c for c in repository.get_many({cid for _, p in right for cid in final_ids(p)})}
    checks = [
        (i, prompt_check(i, final_prompt(p), [t for cid in final_ids(p) for t in cards[cid].trigger_words]))
        for i, p in right
    ]
    good = {i["instance_id"] for i, c in checks if c["kept"] and c["clean"]}
    served = [
        i["instance_id"] in good or (i["ground_truth"]["status"] == "no_match" and p["status"] == "no_match")
        for i, p in annotated
    ]
    rate = (lambda key: float(np.mean([c[key] for _, c in checks]))) if checks else (lambda key: float("nan"))
    return {
        "scene_kept": rate("kept"),
        "prompt_clean": rate("clean"),
        "prompt_good": float(len(good) / len(checks)) if checks else float("nan"),
        "end_to_end": float(np.mean(served)),
        "prompt_misses": [
            {"id": i["instance_id"], "query": i["query"], "prompt": final_prompt(p) or "", **c}
            for (i, c), (_, p) in zip(checks, right)
            if not (c["kept"] and c["clean"])
        ],
    }


def _normal(text: str) -> str:
    return " ".join(unicodedata.normalize("NFKC", text or "").casefold().split())


def phrase_in(phrase: str, text: str) -> bool:
    """Whether ``phrase`` stands in ``text`` as written (case and spacing aside), as whole words where it begins
    or ends with a letter or digit of a spaced script ("v3" is not in "v30"; "雨天" is in "雨天的街道")."""
    phrase, text = _normal(phrase), _normal(text)
    if not phrase:
        return True
    body = r"\s+".join(re.escape(part) for part in phrase.split())
    lead = r"(?<![a-z0-9])" if phrase[0].isascii() and phrase[0].isalnum() else ""
    tail = r"(?![a-z0-9])" if phrase[-1].isascii() and phrase[-1].isalnum() else ""
    return re.search(lead + body + tail, text) is not None


def prompt_check(instance: dict, prompt: str | None, triggers: list[str]) -> dict:
    """How the image prompt treats a request's annotations: ``kept`` every ``scene`` phrase, ``clean`` of every
    ``drop`` (and ``answer_drop``) phrase once the chosen card's own trigger words are taken out (a drop phrase may
    be the trigger the prompt must carry), with what was ``lost`` and what ``leaked``."""
    prompt = prompt or ""
    lost = [phrase for phrase in instance.get("scene") or [] if not phrase_in(phrase, prompt)]
    rest = _normal(prompt)
    for trigger in sorted(triggers, key=len, reverse=True):
        rest = rest.replace(_normal(trigger), " ")
    drops = [*(instance.get("drop") or []), *(instance.get("answer_drop") or [])]
    leaked = [phrase for phrase in drops if phrase_in(phrase, rest)]
    return {"kept": not lost, "clean": not leaked, "lost": lost, "leaked": leaked}


def _right_pick(instance: dict, prediction: dict) -> bool:
    """The checkpoint the request meant, at once or after the follow-up (the whole set, for a composition)."""
    if is_composition(instance):
        return right_set(instance, prediction)
    return final_choice(prediction) == instance["ground_truth"]["checkpoint_id"]


def _correct(instance: dict, prediction: dict) -> bool:
    """The right status, and for a single match the right checkpoint (what overall accuracy counts); for a
    composition, the right set."""
    if is_composition(instance):
        return right_set(instance, prediction)
    truth = instance["ground_truth"]
    return prediction["status"] == truth["status"] and (
        truth["status"] != "selected" or prediction["checkpoint_id"] == truth["checkpoint_id"]
    )


def _miss(instance: dict, prediction: dict) -> dict | None:
    """What went wrong on one instance, or None: a wrong status, a wrong pick, or a follow-up that missed."""
    truth = instance["ground_truth"]
    if is_composition(instance):
        return None if right_set(instance, prediction) else set_miss(instance, prediction)
    if _correct(instance, prediction):
        if (
            truth["status"] != "clarify"
            or not instance.get("followup")
            or final_choice(prediction) == truth["checkpoint_id"]
        ):
            return None
    followup = prediction.get("followup") or {}
    got = prediction["checkpoint_id"] or (
        f"after follow-up {followup.get('status')} {followup.get('checkpoint_id') or ''}".strip()
        if instance.get("followup") and prediction["status"] == "clarify"
        else ""
    )
    return {
        "id": instance["instance_id"],
        "query": instance["query"],
        "truth": f"{truth['status']} {truth.get('checkpoint_id') or ''}".strip(),
        "got": f"{prediction['status']} {got}".strip(),
        "why": prediction.get("reason") or prediction.get("question") or "",
    }


def metrics(instances: list[dict], predictions: list[dict], judge: RubricJudge) -> dict:
    single = [(i, p) for i, p in zip(instances, predictions) if i["ground_truth"]["status"] == "selected"]
    ambiguous = [(i, p) for i, p in zip(instances, predictions) if i["ground_truth"]["status"] == "clarify"]
    selection_accuracy = np.mean(
        [p["status"] == "selected" and p["checkpoint_id"] == i["ground_truth"]["checkpoint_id"] for i, p in single]
    )
    after_followup = (
        np.mean([final_choice(p) == i["ground_truth"]["checkpoint_id"] for i, p in ambiguous])
        if ambiguous
        else float("nan")
    )
    clarify = _pr(instances, predictions, "clarify")
    no_match = _pr(instances, predictions, "no_match")
    # a negative embedding's trigger is carried by the negative prompt
    finals = [(final_choice(p), " ".join(filter(None, (final_prompt(p), final_negative(p))))) for p in predictions]
    finals = [(c, pr) for c, pr in finals if c]
    cards = {c.id: c for c in judge.repository.get_many({c for c, _ in finals})}
    with_trigger = [(c, pr) for c, pr in finals if cards[c].prompt_triggers]  # a card without one cannot be rewritten
    trigger_rate = (
        np.mean([bool(pr) and any(t in pr for t in cards[c].prompt_triggers) for c, pr in with_trigger])
        if with_trigger
        else float("nan")
    )
    latencies = [p["latency_ms"] for p in predictions if p.get("latency_ms") is not None]
    per_category: dict[str, list[bool]] = {}
    for i, p in zip(instances, predictions):
        per_category.setdefault(i.get("category", "all"), []).append(_correct(i, p))
    confusion: dict[str, dict[str, int]] = {t: {p: 0 for p in STATUSES} for t in STATUSES}
    for i, p in zip(instances, predictions):
        confusion[i["ground_truth"]["status"]][p["status"]] += 1
    return {
        **prompt_metrics(instances, predictions, judge.repository),
        **composition_metrics(instances, predictions),
        "instances": len(instances),
        "confusion": confusion,
        "misses": [miss for i, p in zip(instances, predictions) if (miss := _miss(i, p))],
        "selection_accuracy": float(selection_accuracy),
        "clarify_precision": clarify[0],
        "clarify_recall": clarify[1],
        "clarify_f1": clarify[2],
        "no_match_precision": no_match[0],
        "no_match_recall": no_match[1],
        "no_match_f1": no_match[2],
        "accuracy_after_followup": float(after_followup),
        "trigger_in_prompt": float(trigger_rate),
        "intent_score": float(np.mean([judge.score(i, p) for i, p in zip(instances, predictions)])),
        "latency_p50_ms": float(np.percentile(latencies, 50)) if latencies else float("nan"),
        "latency_p95_ms": float(np.percentile(latencies, 95)) if latencies else float("nan"),
        "overall_accuracy": float(np.mean([c for cs in per_category.values() for c in cs])),
        "per_category": {k: float(np.mean(v)) for k, v in sorted(per_category.items())},
    }


ROWS = [
    ("selection accuracy (single-match)", "selection_accuracy"),
    ("clarification precision", "clarify_precision"),
    ("clarification recall", "clarify_recall"),
    ("clarification F1", "clarify_f1"),
    ("no-match precision", "no_match_precision"),
    ("no-match recall", "no_match_recall"),
    ("no-match F1", "no_match_f1"),
    ("accuracy after follow-up", "accuracy_after_followup"),
    ("trigger in prompt", "trigger_in_prompt"),
    ("intent score (rubric, 1-5)", "intent_score"),
    ("overall accuracy", "overall_accuracy"),
    ("right picks: prompt keeps the scene", "scene_kept"),
    ("right picks: prompt leaks no selection words", "prompt_clean"),
    ("right picks: good prompt (both)", "prompt_good"),
    ("end to end (right pick, good prompt; or no-match)", "end_to_end"),
    ("composition: right set (after follow-up)", "right_set"),
    ("composition: right weights, of right sets with a weight said", "right_weights"),
    ("latency p50 (ms)", "latency_p50_ms"),
    ("latency p95 (ms)", "latency_p95_ms"),
]


def table(results: dict[str, dict | str]) -> str:
    names = list(results)
    lines = ["| metric | " + " | ".join(names) + " |", "| --- |" + " --- |" * len(names)]
    for label, key in ROWS:
        if not any(isinstance(r, dict) and key in r for r in results.values()):
            continue  # prompt rows need scene annotations
        cells = []
        for name in names:
            value = results[name]
            cells.append(
                value
                if isinstance(value, str)
                else f"{value[key]:.3f}"
                if not key.startswith("latency")
                else f"{value[key]:.1f}"
            )
        lines.append(f"| {label} | " + " | ".join(cells) + " |")
    categories = sorted({c for r in results.values() if isinstance(r, dict) for c in r["per_category"]})
    for category in categories:
        cells = [
            r if isinstance(r, str) else f"{r['per_category'].get(category, float('nan')):.3f}"
            for r in results.values()
        ]
        lines.append(f"| accuracy: {category} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def confusion_table(name: str, result: dict) -> str:
    """Truth status (rows) against predicted status (columns)."""
    lines = [
        f"{name}, truth status x predicted status:",
        "",
        "| truth \\ predicted | " + " | ".join(STATUSES) + " |",
        "| --- |" + " --- |" * len(STATUSES),
    ]
    for truth in STATUSES:
        lines.append(f"| {truth} | " + " | ".join(str(result["confusion"][truth][p]) for p in STATUSES) + " |")
    return "\n".join(lines)


def prompt_misses_table(name: str, result: dict) -> str:
    """Every right pick whose prompt lost a scene phrase or leaked a selection phrase."""
    misses = result.get("prompt_misses") or []
    lines = [
        f"{name}: {len(misses)} prompt misses",
        "",
        "| id | request | prompt | lost | leaked |",
        "| --- | --- | --- | --- | --- |",
    ]
    for miss in misses:
        cells = [miss["id"], miss["query"], miss["prompt"], "; ".join(miss["lost"]), "; ".join(miss["leaked"])]
        lines.append("| " + " | ".join(c.replace("|", "\\|").replace("\n", " ") for c in cells) + " |")
    return "\n".join(lines)


def misses_table(name: str, result: dict) -> str:
    """Every instance a method got wrong, with what it did and why it said so."""
    lines = [
        f"{name}: {len(result['misses'])} misses",
        "",
        "| id | request | truth | got | reason or question |",
        "| --- | --- | --- | --- | --- |",
    ]
    for miss in result["misses"]:
        cells = [miss["id"], miss["query"], miss["truth"], miss["got"], miss["why"][:160]]
        lines.append("| " + " | ".join(c.replace("|", "\\|").replace("\n", " ") for c in cells) + " |")
    return "\n".join(lines)
