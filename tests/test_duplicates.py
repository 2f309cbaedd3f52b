"""Identical weights are one checkpoint, and a re-scan hashes only what changed (the stat cache)."""

import os
import shutil

from factories import write_kohya_lora
from typer.testing import CliRunner

from personalq.cli import app
from personalq.repository.duplicates import looks_like_a_copy


def test_a_byte_identical_copy_is_a_duplicate_and_the_original_keeps_its_id(repository, tmp_path):
    original = write_kohya_lora(tmp_path / "loras" / "mochiCorgi_v1.safetensors", output_name="mochiCorgi_v1")
    os.utime(original, ns=(1_700_000_000_000_000_000, 1_700_000_000_000_000_000))  # older than the copy
    copy = tmp_path / "loras" / "mochiCorgi_v1 (1).safetensors"  # sorts before the original
    shutil.copyfile(original, copy)
    report = repository.import_paths([tmp_path / "loras"])
    assert report.ok and report.count("imported") == 1 and report.count("duplicate") == 1
    (kept,) = repository.list()
    assert kept.id == "mochicorgi-v1" and kept.weights_path == str(original)
    (dup,) = [o for o in report.outcomes if o.status == "duplicate"]
    assert dup.path == str(copy) and dup.message.startswith("duplicate of mochicorgi-v1")

    again = repository.import_paths([tmp_path / "loras"])  # every re-scan: ok, nothing new
    assert again.ok and again.count("unchanged") == 1 and again.count("duplicate") == 1
    (listed,) = repository.duplicates()
    assert (listed.checkpoint_id, listed.copies) == ("mochicorgi-v1", [str(copy)])


def test_the_first_file_imported_keeps_its_id_across_imports(repository, tmp_path):
    first = write_kohya_lora(tmp_path / "b" / "zeta_v1.safetensors")
    assert repository.import_paths([first]).count("imported") == 1
    later = tmp_path / "a" / "alpha.safetensors"
    later.parent.mkdir()
    shutil.copyfile(first, later)
    report = repository.import_paths([tmp_path / "a", tmp_path / "b"])
    assert report.ok and {o.status for o in report.outcomes} == {"duplicate", "unchanged"}
    assert [c.id for c in repository.list()] == ["zeta-v1"]


def test_a_copy_that_changes_becomes_a_checkpoint_of_its_own(repository, tmp_path):
    original = write_kohya_lora(tmp_path / "m" / "bear_v2.safetensors", seed=1)
    copy = tmp_path / "m" / "bear_v2 copy.safetensors"
    shutil.copyfile(original, copy)
    repository.import_paths([tmp_path / "m"])
    assert len(repository.duplicates()) == 1
    write_kohya_lora(copy, output_name="bear_v3", seed=2)
    report = repository.import_paths([tmp_path / "m"])
    assert report.ok and report.count("imported") == 1
    assert repository.duplicates() == [] and repository.count() == 2


def test_cli_reports_duplicates_with_exit_code_0(tmp_path):
    home = str(tmp_path / "home")
    original = write_kohya_lora(tmp_path / "loras" / "ink_v1.safetensors")
    shutil.copyfile(original, tmp_path / "loras" / "ink_v1 - Copy.safetensors")
    runner = CliRunner()
    result = runner.invoke(app, ["repo", "import", str(tmp_path / "loras"), "--home", home])
    assert result.exit_code == 0, result.output
    assert "duplicate ink-v1" in result.output and "duplicate of ink-v1" in result.output
    listed = runner.invoke(app, ["repo", "duplicates", "--home", home]).output
    assert listed.splitlines()[0].startswith("ink-v1\t") and "ink_v1 - Copy.safetensors" in listed


def test_copy_names():
    from pathlib import Path

    copies = ["x (1).safetensors", "x copy.safetensors", "x - Copy.safetensors", "x_copy2.safetensors"]
    assert all(looks_like_a_copy(Path(n)) for n in copies)
    assert not any(looks_like_a_copy(Path(n)) for n in ["hardcopy.safetensors", "x_v2.safetensors", "x (v1).pt"])


def test_a_rescan_hashes_only_what_changed(repository, tmp_path):
    folder = tmp_path / "loras"
    files = [write_kohya_lora(folder / f"lora_{i}.safetensors", output_name=f"lora_{i}", seed=i) for i in range(4)]
    assert repository.import_paths([folder]).count("imported") == 4
    assert repository.last_hashed_bytes == sum(f.stat().st_size for f in files)

    assert repository.import_paths([folder]).count("unchanged") == 4
    assert repository.last_hashed_bytes == 0  # nothing read: the stat cache vouched for every file

    # same size, new bytes and a new modification time: caught and hashed again
    before = files[2].stat()
    data = bytearray(files[2].read_bytes())
    data[-1] ^= 0xFF
    files[2].write_bytes(bytes(data))
    os.utime(files[2], ns=(before.st_atime_ns, before.st_mtime_ns + 1_000_000))
    assert files[2].stat().st_size == before.st_size
    report = repository.import_paths([folder], replace=True)
    assert repository.last_hashed_bytes == before.st_size
    assert report.count("updated") == 1 and report.count("unchanged") == 3
    assert repository.get("lora-2").weights_sha256 != repository.get("lora-1").weights_sha256
    from personalq.repository.importers.base import sha256_file

    assert repository.get("lora-2").weights_sha256 == sha256_file(files[2])


def test_an_unreadable_weights_file_fails_alone(repository, tmp_path):
    folder = tmp_path / "loras"
    write_kohya_lora(folder / "good.safetensors", seed=1)
    bad = write_kohya_lora(folder / "locked.safetensors", seed=2)
    bad.chmod(0)
    try:
        if os.access(bad, os.R_OK):  # running as root: permissions do not stop reads
            return
        report = repository.import_paths([folder])
    finally:
        bad.chmod(0o644)
    assert report.count("imported") == 1 and report.count("error") == 1


def test_an_unchanged_rescan_does_not_open_the_files(repository, tmp_path):
    """The stat cache's promise and its limit: a file whose size, mtime and inode did not move is not read again
    (here its bytes were scrambled in place with the old mtime put back, and the re-scan does not notice); one
    whose mtime moved is read, and its damage reported."""
    folder = tmp_path / "loras"
    files = [write_kohya_lora(folder / f"lora_{i}.safetensors", output_name=f"lora_{i}", seed=i) for i in range(3)]
    assert repository.import_paths([folder]).count("imported") == 3
    before = files[0].stat()
    files[0].write_bytes(b"\0" * before.st_size)
    os.utime(files[0], ns=(before.st_atime_ns, before.st_mtime_ns))
    report = repository.import_paths([folder])
    assert report.ok and report.count("unchanged") == 3 and repository.last_hashed_bytes == 0

    os.utime(files[0], ns=(before.st_atime_ns, before.st_mtime_ns + 10**9))
    report = repository.import_paths([folder])
    assert report.count("error") == 1 and "corrupt safetensors header" in report.outcomes[0].message


def test_a_preview_added_beside_an_unchanged_file_is_picked_up(repository, tmp_path):
    from PIL import Image

    lora = write_kohya_lora(tmp_path / "loras" / "corgi.safetensors")
    repository.import_paths([tmp_path / "loras"])
    assert repository.get("corgi").preview_path is None
    Image.new("RGB", (4, 4)).save(tmp_path / "loras" / "corgi.preview.png")
    report = repository.import_paths([tmp_path / "loras"])
    assert report.ok and [(o.status, o.message) for o in report.outcomes] == [("updated", "new preview")]
    assert repository.get("corgi").preview_path == str(tmp_path / "loras" / "corgi.preview.png")
    assert lora.exists()
