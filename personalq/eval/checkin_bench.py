"""Running selection methods over a Repo-Prompts file and writing predictions in the DESIGN.md schema."""

from __future__ import annotations

import json
import time
from pathlib import Path

from tqdm import tqdm

from personalq.eval.checkin_metrics import RubricJudge, metrics
from personalq.rating.selection_methods import Method

ANNOTATIONS = ("scene", "drop", "answer_drop")


def _read_jsonl(path: Path) -> list[dict]:
    with Path(path).open(encoding="utf-8") as handle:
        return [json.loads(line) for line in handle if line.strip()]


def load_instances(path: Path, scenes: Path | None = None) -> list[dict]:
    """The instances of a Repo-Prompts file, with the ``scene`` / ``drop`` / ``answer_drop`` annotations of a side
    file (one object per instance, matched by ``instance_id``) merged in when one is given."""
    instances = _read_jsonl(path)
    for instance in instances:  # a composition's first checkpoint stands for it where one id is scored
        truth = instance["ground_truth"]
        if truth.get("checkpoints") and not truth.get("checkpoint_id"):
            truth["checkpoint_id"] = truth["checkpoints"][0]["checkpoint_id"]
    if scenes is not None:
        annotations = {a["instance_id"]: a for a in _read_jsonl(scenes)}
        for instance in instances:
            extra = annotations.get(instance["instance_id"], {})
            instance.update({key: extra[key] for key in ANNOTATIONS if key in extra})
    return instances


def run(method: Method, instances: list[dict], out: Path | None = None) -> list[dict]:
    predictions = []
    for instance in tqdm(instances, desc=method.name, unit=" requests", leave=False):
        started = time.perf_counter()
        prediction = {"instance_id": instance["instance_id"], **method.predict(instance)}
        prediction.setdefault("latency_ms", (time.perf_counter() - started) * 1000)
        predictions.append(prediction)
    if out:
        out.parent.mkdir(parents=True, exist_ok=True)
        with out.open("w", encoding="utf-8") as handle:
            for prediction in predictions:
                handle.write(json.dumps(prediction, default=str) + "\n")
    return predictions


def evaluate(method: Method, instances: list[dict], judge: RubricJudge, out: Path | None = None) -> dict:
    return metrics(instances, run(method, instances, out), judge)
