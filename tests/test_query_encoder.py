"""The ONNX query encoder must embed exactly like the model the index was built with, and heal its cache."""

import numpy as np
import pytest

from personalq.repository.embedding import embed
from personalq.repository.query_encoder import QueryEncoder, _graph_name

TEXTS = ["the april dog model on a beach", "my latest anime sketch", "x", "a very long request " * 30]


@pytest.fixture(scope="module")
def encoder(tmp_path_factory):
    return QueryEncoder(tmp_path_factory.mktemp("model-cache"))


def test_onnx_queries_match_the_index_embeddings(encoder):
    assert encoder.backend == "onnxruntime"
    for text in TEXTS:
        vector = encoder(text)
        assert vector.shape == (384,) and abs(float(np.linalg.norm(vector)) - 1) < 1e-4
        assert float(vector @ embed([text])[0]) > 0.995  # the index side runs bf16 where the CPU has it


def test_the_exported_graph_is_reused_and_a_damaged_one_is_replaced(encoder, tmp_path):
    graph = encoder.cache_dir / _graph_name()
    stamp = graph.stat().st_mtime_ns
    QueryEncoder(encoder.cache_dir)("a dog")
    assert graph.stat().st_mtime_ns == stamp  # a second process loads the file, it does not export again
    damaged = tmp_path / "cache"
    damaged.mkdir()
    (damaged / _graph_name()).write_bytes(b"not an onnx graph" * 10)
    healed = QueryEncoder(damaged)
    assert healed.backend == "onnxruntime"
    assert float(healed("a dog") @ encoder("a dog")) > 0.9999


def test_an_unusable_cache_falls_back_to_pytorch(tmp_path, caplog):
    not_a_folder = tmp_path / "cache"
    not_a_folder.write_text("a file where the cache folder should be")
    encoder = QueryEncoder(not_a_folder)
    assert encoder.backend == "torch"
    assert "embedding queries with PyTorch" in caplog.text
    assert float(encoder("a dog") @ embed(["a dog"])[0]) > 0.995
