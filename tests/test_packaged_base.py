"""Base folders that take some files from an installed package (the demo base's text encoder)."""

import shutil

import pytest

from personalq.config import DEFAULT_ASSETS
from personalq.serving.checkpoints import load_base
from personalq.serving.packaged import PackagedFiles, PackagedFilesError, declare, declared, materialize

SHIPPED_BASE = DEFAULT_ASSETS / "zoo" / "base"


@pytest.fixture
def package(tmp_path, monkeypatch):
    """An installed package ``fake_weights`` whose ``model/`` folder holds two files."""
    root = tmp_path / "site"
    (root / "fake_weights" / "model").mkdir(parents=True)
    (root / "fake_weights" / "__init__.py").write_text(
        "raise RuntimeError('locating the files must not run the package')\n"
    )
    (root / "fake_weights" / "model" / "config.json").write_text("{}")
    (root / "fake_weights" / "model" / "weights.bin").write_bytes(b"w" * 100)
    monkeypatch.syspath_prepend(str(root))
    return PackagedFiles("fake_weights", "model", ("config.json", "weights.bin"))


def test_materialize_copies_the_declared_files_once_without_running_the_package(tmp_path, package):
    base = tmp_path / "base"
    base.mkdir()
    declare(base, {"encoder": package})
    assert declared(base) == {"encoder": package}
    materialize(base)
    assert (base / "encoder" / "weights.bin").read_bytes() == b"w" * 100
    assert sorted(p.name for p in (base / "encoder").iterdir()) == [
        "config.json",
        "weights.bin",
    ]  # no partial copies left
    (base / "encoder" / "weights.bin").write_bytes(b"local")
    materialize(base)  # everything present: nothing is copied again
    assert (base / "encoder" / "weights.bin").read_bytes() == b"local"


def test_a_base_without_a_manifest_is_left_alone_and_a_missing_package_is_named(tmp_path):
    materialize(tmp_path)
    assert list(tmp_path.iterdir()) == []
    declare(tmp_path, {"encoder": PackagedFiles("no_such_package_here", "model", ("a.bin",))})
    with pytest.raises(PackagedFilesError, match="no_such_package_here"):
        materialize(tmp_path)


@pytest.mark.parametrize(
    "folder, files", [("../..", ("a",)), ("/etc", ("a",)), ("model", ("../a",)), ("model", ("sub/a",))]
)
def test_files_outside_the_package_folder_are_refused(folder, files):
    with pytest.raises(PackagedFilesError):
        PackagedFiles("fake_weights", folder, files)


def test_components_outside_the_base_are_refused(tmp_path, package):
    declare(tmp_path, {"../elsewhere": package})
    with pytest.raises(PackagedFilesError):
        materialize(tmp_path)


@pytest.mark.skipif(not (SHIPPED_BASE / "packaged.json").exists(), reason="the demo zoo is not built in this checkout")
def test_the_shipped_base_loads_from_a_fresh_copy_without_its_text_encoder(tmp_path):
    base = tmp_path / "base"
    shutil.copytree(SHIPPED_BASE, base, ignore=shutil.ignore_patterns("text_encoder"))
    pipe = load_base(base)
    assert (base / "text_encoder" / "model.safetensors").stat().st_size == (
        SHIPPED_BASE / "text_encoder" / "model.safetensors"
    ).stat().st_size
    assert type(pipe.text_encoder).__name__ == "BertModel"
