"""Query embeddings through ONNX Runtime: the same all-MiniLM-L6-v2 as the import, cheaper for one text.

A Check-in request embeds one short text. In PyTorch eager that time goes mostly to per-operator dispatch rather
than arithmetic; ONNX Runtime runs the same graph (transformer, mean pooling, normalization) with far less of it
(timings: docs/libraries.md and benchmarks/README.md). The graph is exported once from the packaged weights
and kept in a per-user cache named by the weights it came from, so every repository home on the machine shares
one file. Should the export be impossible (no ``onnx`` package, an exporter error) queries fall back to
PyTorch, with a warning.
"""

from __future__ import annotations

import hashlib
import logging
import os
import threading
from pathlib import Path

import numpy as np

from personalq import compute
from personalq.repository.embedding import MAX_TOKENS, embed_query, model_path

log = logging.getLogger(__name__)
EXPORT_FORMAT = 1  # bump when the exported graph changes, so old cache files are not reused


def _graph_name() -> str:
    folder = model_path()
    digest = hashlib.sha256()
    digest.update((folder / "config.json").read_bytes())
    digest.update(str((folder / "model.safetensors").stat().st_size).encode())
    digest.update(f"format {EXPORT_FORMAT}".encode())
    return f"all-MiniLM-L6-v2-query-{digest.hexdigest()[:16]}.onnx"


def export_graph(target: Path) -> None:
    """Trace the fp32 model with pooling and normalization into ``target`` (written atomically)."""
    import torch
    from transformers import AutoModel

    class Pooled(torch.nn.Module):
        def __init__(self, bert):
            super().__init__()
            self.bert = bert

        def forward(self, input_ids, attention_mask):
            hidden = self.bert(input_ids=input_ids, attention_mask=attention_mask).last_hidden_state
            mask = attention_mask.unsqueeze(-1).to(hidden.dtype)
            mean = (hidden * mask).sum(1) / mask.sum(1).clamp(min=1e-9)
            return torch.nn.functional.normalize(mean, dim=-1)

    model = Pooled(AutoModel.from_pretrained(str(model_path())).eval())
    example = (torch.ones(1, 8, dtype=torch.long), torch.ones(1, 8, dtype=torch.long))
    target.parent.mkdir(parents=True, exist_ok=True)
    partial = target.with_suffix(f".{os.getpid()}.partial")
    try:
        with torch.no_grad():
            torch.onnx.export(
                model,
                example,
                str(partial),
                input_names=["input_ids", "attention_mask"],
                output_names=["embedding"],
                dynamic_axes={"input_ids": {0: "batch", 1: "tokens"}, "attention_mask": {0: "batch", 1: "tokens"}},
                opset_version=17,
                dynamo=False,
            )
        os.replace(partial, target)  # two processes exporting at once both end with a whole file
    finally:
        partial.unlink(missing_ok=True)


class QueryEncoder:
    """``encoder(text)`` -> unit-length 384-d vector; loads (or first exports) the ONNX graph on first use."""

    def __init__(self, cache_dir: Path):
        self.cache_dir = Path(cache_dir)
        self._lock = threading.Lock()
        self._session = None
        self._tokenizer = None
        self._fallback = False

    def _load(self) -> None:
        import onnxruntime
        from transformers import AutoTokenizer

        path = self.cache_dir / _graph_name()
        options = onnxruntime.SessionOptions()
        options.log_severity_level = 3
        for attempt in range(2):
            if not path.is_file():
                log.info("exporting the query encoder to %s (once per machine)", path)
                compute.run_apart(export_graph, path)  # once per machine: not queued behind generation
            try:
                self._session = onnxruntime.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])
                break
            except Exception:  # a damaged cache file: export again
                if attempt:
                    raise
                log.warning("cached query encoder %s is unreadable; exporting it again", path)
                path.unlink(missing_ok=True)
        self._tokenizer = AutoTokenizer.from_pretrained(str(model_path()))

    def _ready(self) -> bool:
        with self._lock:
            if self._session is None and not self._fallback:
                try:
                    self._load()
                except Exception as exc:
                    log.warning("ONNX query encoder unavailable (%s); embedding queries with PyTorch", exc)
                    self._fallback = True
        return not self._fallback

    @property
    def backend(self) -> str:
        return "onnxruntime" if self._ready() else "torch"

    def __call__(self, text: str) -> np.ndarray:
        if not self._ready():
            return embed_query(text)
        tokens = self._tokenizer([text], return_tensors="np", truncation=True, max_length=MAX_TOKENS)
        feed = {
            "input_ids": tokens["input_ids"].astype(np.int64),
            "attention_mask": tokens["attention_mask"].astype(np.int64),
        }
        return self._session.run(None, feed)[0][0].astype(np.float32)
