"""Hostile and broken input: each gets a clear per-file error, the rest imports, nothing half-written stays."""

import os
import pickle
import struct
import time

import pytest
import yaml
from factories import write_card, write_kohya_lora


def _state(repository):
    return repository.count(), sorted(repository.dense.fingerprints())


def _error_for(report, name):
    return next(o.message for o in report.outcomes if o.path.endswith(name) and o.status == "error")


def test_broken_files_are_reported_and_the_rest_imports(repository, tmp_path):
    folder = tmp_path / "mixed"
    write_card(folder, "good-one")
    (folder / "malformed.yaml").write_text("id: [unclosed\nname: x\n")
    (folder / "missing.yaml").write_text(yaml.safe_dump({"id": "no-date", "name": "no date"}))
    (folder / "truncated.safetensors").write_bytes(struct.pack("<Q", 5000) + b'{"a": ')
    (folder / "garbage.safetensors").write_bytes(struct.pack("<Q", 10) + b"\xff" * 10)
    (folder / "tiny.safetensors").write_bytes(b"\x01\x02")
    (folder / "model.ckpt").write_bytes(pickle.dumps({"state_dict": {}}))
    (folder / "embedding.pt").write_bytes(pickle.dumps([1, 2]))
    (folder / "adapter.bin").write_bytes(b"PK\x03\x04")
    (folder / "renamed.safetensors").write_bytes(pickle.dumps({"x": 1}, protocol=4))
    (folder / "notes.xyz").write_text("hello")
    report = repository.import_paths([folder])
    assert report.count("imported") == 1 and repository.get("good-one")
    assert "malformed YAML" in _error_for(report, "malformed.yaml") and "line 2" in _error_for(
        report, "malformed.yaml"
    )
    assert "missing required field 'created_at'" in _error_for(report, "missing.yaml")
    assert "corrupt safetensors header" in _error_for(report, "truncated.safetensors")
    assert "corrupt safetensors header" in _error_for(report, "garbage.safetensors")
    assert "truncated" in _error_for(report, "tiny.safetensors")
    for name in ("model.ckpt", "embedding.pt", "adapter.bin"):
        message = _error_for(report, name)
        assert "pickle" in message and "safetensors" in message
    assert "pickle" in _error_for(report, "renamed.safetensors")
    assert any(o.status == "skipped" and o.path.endswith("notes.xyz") for o in report.outcomes)
    assert report.count("error") == 9
    assert _state(repository) == (1, ["good-one"])


def test_id_that_exists_with_different_content_is_refused(repository, tmp_path):
    write_card(tmp_path / "a", "bear-v4", description="tan plush bear")
    repository.import_paths([tmp_path / "a"])
    before = _state(repository)
    write_card(tmp_path / "b", "bear-v4", description="something else entirely")
    report = repository.import_paths([tmp_path / "b"])
    assert "already exists" in _error_for(report, "bear-v4.yaml") and "--replace" in _error_for(report, "bear-v4.yaml")
    assert _state(repository) == before
    assert repository.get("bear-v4").description == "tan plush bear"


def test_paths_that_leave_the_imported_folder(repository, tmp_path):
    outside = tmp_path / "outside"
    secret = write_kohya_lora(outside / "secret.safetensors")
    folder = tmp_path / "repo"
    write_card(folder, "dotdot", weights="../outside/secret.safetensors")
    write_card(folder, "absolute", weights=str(secret))
    (folder / "link.safetensors").symlink_to(secret)
    (folder / "linkdir").symlink_to(outside, target_is_directory=True)
    write_card(folder, "via-link", weights="link.safetensors")
    report = repository.import_paths([folder])
    assert "outside the imported folder" in _error_for(report, "dotdot.yaml")
    assert "relative" in _error_for(report, "absolute.yaml")
    assert "outside the imported folder" in _error_for(report, "via-link.yaml")
    assert "outside the imported folder" in _error_for(report, "linkdir")
    assert "outside the imported folder" in _error_for(report, "link.safetensors")
    assert _state(repository) == (0, [])


def test_yaml_alias_bomb_and_non_mapping(repository, tmp_path):
    bomb = "a: &a [x, x, x, x, x, x, x, x, x]\n" + "".join(
        f"{c}: &{c} [*{p}, *{p}, *{p}, *{p}, *{p}, *{p}, *{p}, *{p}, *{p}]\n" for p, c in zip("abcdefgh", "bcdefghi")
    )
    (tmp_path / "bomb.yaml").write_text("id: bomb\nname: bomb\ncreated_at: 2025-01-01\n" + bomb)
    (tmp_path / "list.yaml").write_text("- just\n- a list\n")
    report = repository.import_paths([tmp_path])
    assert "aliases are not allowed" in _error_for(report, "bomb.yaml")
    assert "mapping" in _error_for(report, "list.yaml")
    assert repository.count() == 0


def test_huge_files_are_never_read_whole(repository, tmp_path):
    size = 10 * 1024**3
    huge_model = tmp_path / "huge.safetensors"
    with huge_model.open("wb") as handle:  # sparse: 10 GB on paper, a few bytes on disk
        handle.write(struct.pack("<Q", 2**40))
        handle.truncate(size)
    huge_pickle = tmp_path / "huge.ckpt"
    with huge_pickle.open("wb") as handle:
        handle.truncate(size)
    huge_card = tmp_path / "huge.yaml"
    with huge_card.open("wb") as handle:
        handle.truncate(size)
    started = time.perf_counter()
    report = repository.import_paths([tmp_path])
    assert time.perf_counter() - started < 30
    assert "corrupt safetensors header" in _error_for(report, "huge.safetensors")
    assert "pickle" in _error_for(report, "huge.ckpt")
    assert "more than the" in _error_for(report, "huge.yaml")
    assert repository.count() == 0


def test_missing_path_and_missing_weights(repository, tmp_path):
    write_card(tmp_path, "ghost", weights="nowhere.safetensors")
    report = repository.import_paths([tmp_path, tmp_path / "does-not-exist"])
    assert "does not exist" in _error_for(report, "ghost.yaml")
    assert "does not exist" in _error_for(report, "does-not-exist")


def test_indexing_failure_keeps_the_rows_and_the_next_sync_patches_the_index(repository, tmp_path, monkeypatch):
    """SQLite decides: rows committed before Chroma failed stay, and the fingerprints show what to index."""
    write_card(tmp_path / "first", "kept")
    repository.import_paths([tmp_path / "first"])
    write_card(tmp_path / "second", "late-1")
    write_card(tmp_path / "second", "late-2")

    def broken_upsert(docs, vectors=None, batch=512):
        raise RuntimeError("disk full")

    monkeypatch.setattr(repository.dense, "upsert", broken_upsert)
    report = repository.import_paths([tmp_path / "second"])
    monkeypatch.undo()
    assert report.count("imported") == 2
    assert _state(repository) == (3, ["kept"])
    assert repository.sync_index().added == 2
    assert _state(repository) == (3, ["kept", "late-1", "late-2"])


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads unreadable files")
def test_unreadable_file(repository, tmp_path):
    path = write_card(tmp_path, "locked")
    path.chmod(0)
    report = repository.import_paths([tmp_path])
    assert report.count("error") == 1
    assert _error_for(report, "locked.yaml") == "cannot read locked.yaml: Permission denied"


def test_a_safetensors_file_whose_header_length_looks_like_a_pickle_imports(repository, tmp_path):
    """A header length with 0x80 as its low byte starts the file with pickle's magic byte; found on 31 of 200
    generated LoRAs before the check looked past the length."""
    import struct

    from factories import write_kohya_lora

    for pad in range(0, 4096, 8):
        path = write_kohya_lora(tmp_path / "lora" / "padded.safetensors", ss_training_comment="x" * pad)
        if path.read_bytes()[:1] == b"\x80":
            break
    else:
        raise AssertionError("no padding gave a header length ending in 0x80")
    assert struct.unpack("<Q", path.read_bytes()[:8])[0] % 256 == 0x80
    report = repository.import_paths([tmp_path / "lora"])
    assert report.ok and report.count("imported") == 1, report.outcomes
