"""Quantized variants and cached LoRA tensors follow the checkpoint's weights, never its id.

A key by id serves stale weights twice over: after ``repo import --replace`` puts new weights under an old id,
and when two ids slugify to the same file name (``Corgi.v1`` and ``corgi-v1``).
"""

from __future__ import annotations

import torch
from factories import write_card, write_kohya_lora
from safetensors.torch import load_file

from personalq.serving.engine import Engine
from personalq.serving.variants import precision_config, variant_path


def lora_card(folder, card_id: str, weights_name: str, seed: int):
    weights = write_kohya_lora(folder / weights_name, seed=seed)
    write_card(folder, card_id, kind="lora", base_model="personalq-demo", weights=weights_name, subjects=["corgi"])
    return weights


def same_tensors(found: dict, expected: dict) -> bool:
    return found.keys() == expected.keys() and all(torch.equal(found[k], expected[k]) for k in expected)


def test_new_weights_under_an_old_id_get_their_own_variant_and_adapter(repository, settings, tmp_path):
    folder = tmp_path / "cards"
    weights = lora_card(folder, "corgi-v1", "corgi.safetensors", seed=0)
    assert repository.import_paths([folder]).ok
    engine, config, store = Engine(settings), precision_config("W8A8"), settings.home / "taq"
    old = repository.get("corgi-v1")
    assert same_tensors(engine.adapter(old).state_dict, load_file(weights))  # now warm in the cache

    write_kohya_lora(weights, seed=1)  # retrained, re-imported under the same id
    assert repository.import_paths([folder], replace=True).ok
    new = repository.get("corgi-v1")
    assert new.weights_sha256 != old.weights_sha256
    assert variant_path(new, config, store) != variant_path(old, config, store)
    assert same_tensors(engine.adapter(new).state_dict, load_file(weights))


def test_ids_that_slugify_alike_do_not_share_a_variant(repository, settings, tmp_path):
    folder = tmp_path / "cards"
    lora_card(folder, "Corgi.v1", "upper.safetensors", seed=0)
    lora_card(folder, "corgi-v1", "lower.safetensors", seed=1)
    assert repository.import_paths([folder]).ok
    config, store = precision_config("W4A8"), settings.home / "taq"
    upper, lower = repository.get("Corgi.v1"), repository.get("corgi-v1")
    assert variant_path(upper, config, store) != variant_path(lower, config, store)
    assert variant_path(upper, config, store) == variant_path(
        repository.get("Corgi.v1"), config, store
    )  # stable across reads
