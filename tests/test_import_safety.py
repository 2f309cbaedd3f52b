"""Import on the internet (issue 24): malformed metadata, YAML bombs, links out of the folder, refused rows.

Each case sits next to a good card: the bad file gets an error naming it, the good one still imports, and
nothing of the bad file stays behind.
"""

import json
import re
import time
from pathlib import Path

import pytest
from factories import write_card
from hostile_files import (
    SECRET,
    ReadWatch,
    civitai_version,
    write_diffusers_folder,
    write_outside_secrets,
    write_safetensors,
    write_textual_inversion,
    yaml_alias_bomb,
)
from sqlalchemy import select

from personalq.repository.orm import Checkpoint, CheckpointTerm, Family

PACKAGE = Path(__file__).resolve().parent.parent / "personalq"


def _outcome(report, name):
    return next(o for o in report.outcomes if Path(o.path).name == name)


def _families(repository):
    with repository.sessions() as session:
        return sorted(session.scalars(select(Family.id)))


def _import_next_to_a_good_card(repository, folder):
    write_card(folder, "good-neighbour")
    report = repository.import_paths([folder])
    assert _outcome(report, "good-neighbour.yaml").status == "imported", report.outcomes
    return report


# -- 5: malformed metadata is that file's error --------------------------------------------------------


def _civitai(folder: Path, name: str, **fields) -> None:
    (folder / name).write_text(json.dumps({**civitai_version(4242), **fields}))


MALFORMED = {
    "offsets.safetensors": (
        lambda f: write_safetensors(f / "offsets.safetensors", offsets=["0", "64"]),
        "points outside the file",
    ),
    "deep.civitai.info": (lambda f: (f / "deep.civitai.info").write_text("[" * 100_000), "nested too deeply"),
    "deep-header.safetensors": (
        lambda f: write_safetensors(f / "deep-header.safetensors", raw_header=b"[" * 100_000),
        "nested too deeply",
    ),
    "huge-number.civitai.info": (
        lambda f: (f / "huge-number.civitai.info").write_text('{"id": ' + "9" * 5000 + "}"),
        "malformed JSON",
    ),
    "int-name.safetensors": (
        lambda f: write_safetensors(f / "int-name.safetensors", {"ss_output_name": 5}),
        "__metadata__ must be a JSON object of strings",
    ),
    "words.civitai.info": (lambda f: _civitai(f, "words.civitai.info", trainedWords=5), "trainedWords"),
    "model.civitai.info": (lambda f: _civitai(f, "model.civitai.info", model="not an object"), "model"),
    "base.civitai.info": (lambda f: _civitai(f, "base.civitai.info", baseModel=15), "baseModel"),
    "tags.civitai.info": (lambda f: _civitai(f, "tags.civitai.info", model={"name": "x", "tags": [5, None]}), "tags"),
    "versions.json": (
        lambda f: (f / "versions.json").write_text(json.dumps({"id": 1, "name": "m", "modelVersions": 5})),
        "modelVersions",
    ),
    "future.json": (
        lambda f: (f / "future.json").write_text('{"id": "future", "name": "f", "created_at": 1.0e+20}'),
        "created_at",
    ),
    "future.civitai.info": (lambda f: _civitai(f, "future.civitai.info", createdAt=1e20), "created_at"),
    "far.yaml": (
        lambda f: (f / "far.yaml").write_text("id: far\nname: far\ncreated_at: 0001-01-01T00:00:00+05:00\n"),
        "created_at",
    ),
    "long-version.json": (
        lambda f: (f / "long-version.json").write_text(
            json.dumps({"id": "lv", "name": "lv", "created_at": "2025-01-01", "version": "v" + "9" * 5000})
        ),
        "version",
    ),
    "nul.json": (
        lambda f: (f / "nul.json").write_text(
            json.dumps({"id": "nul", "name": "nul", "created_at": "2025-01-01", "weights": "a\u0000b.safetensors"})
        ),
        "weights",
    ),
    "month.yaml": (
        lambda f: (f / "month.yaml").write_text("id: month\nname: month\ncreated_at: 2025-13-45\n"),
        "month.yaml",
    ),
    "pipeline": (
        lambda f: write_diffusers_folder(f / "pipeline", "instance_prompt: a photo of sks dog\ntags: 5"),
        "tags",
    ),
}


@pytest.mark.parametrize("name", sorted(MALFORMED))
def test_malformed_metadata_is_that_files_error(repository, tmp_path, name):
    write, message = MALFORMED[name]
    write(tmp_path)
    report = _import_next_to_a_good_card(repository, tmp_path)
    outcome = _outcome(report, name)
    assert outcome.status == "error" and message in outcome.message, outcome
    assert repository.count() == 1


@pytest.mark.parametrize("times", [("nan", "1e20"), ("1e20", "inf"), ("-1e20", "not a time")])
def test_kohya_training_times_out_of_range_fall_back_to_the_file_date(repository, tmp_path, times):
    path = write_safetensors(
        tmp_path / "bear_v2.safetensors",
        {"ss_output_name": "bear_v2", "ss_training_started_at": times[0], "ss_training_finished_at": times[1]},
    )
    report = _import_next_to_a_good_card(repository, tmp_path)
    assert _outcome(report, "bear_v2.safetensors").status == "imported"
    assert repository.get("bear-v2").created_at.year == time.gmtime(path.stat().st_mtime).tm_year


def test_kohya_tag_counts_that_are_not_numbers_are_ignored(repository, tmp_path):
    counts = {
        "10_bear": {"brnbear": 24, "plush": "many", "toy": [1], "huge": "9" * 5000, "nan": float("nan"), "yes": True}
    }
    write_safetensors(
        tmp_path / "bear.safetensors", {"ss_output_name": "bear", "ss_tag_frequency": json.dumps(counts)}
    )
    report = _import_next_to_a_good_card(repository, tmp_path)
    assert _outcome(report, "bear.safetensors").status == "imported"
    assert repository.get("bear").triggers == ["brnbear"]


def test_deeply_nested_card_json_and_yaml_are_refused_not_crashed_on(repository, tmp_path):
    (tmp_path / "deep.json").write_text('{"id": "deep", "x": ' + "[" * 100_000)
    (tmp_path / "deep.yaml").write_text("id: deep\nx: " + "[" * 100_000)
    report = _import_next_to_a_good_card(repository, tmp_path)
    for name in ("deep.json", "deep.yaml"):
        outcome = _outcome(report, name)
        # our composer's limit ("nested deeper than 64 levels"), or PyYAML's own from 6.0.4 on, which its scanner
        # reaches first ("exceeded maximum nesting depth")
        assert outcome.status == "error" and "nest" in outcome.message, outcome


# -- 6: every YAML read refuses aliases -----------------------------------------------------------------


def test_readme_alias_bomb_is_refused(repository, tmp_path):
    write_diffusers_folder(tmp_path / "bomb-pipeline", yaml_alias_bomb(5))
    started = time.perf_counter()
    report = _import_next_to_a_good_card(repository, tmp_path)
    assert time.perf_counter() - started < 10
    outcome = _outcome(report, "bomb-pipeline")
    assert (
        outcome.status == "error" and "README.md" in outcome.message and "aliases are not allowed" in outcome.message
    )
    assert repository.count() == 1


def test_every_yaml_read_in_the_package_goes_through_the_safe_loader():
    unguarded = re.compile(r"yaml\.(safe_load|load|full_load|unsafe_load|load_all|safe_load_all|compose)\(")
    offenders = [
        str(p.relative_to(PACKAGE))
        for p in PACKAGE.rglob("*.py")
        if p.name != "safe_yaml.py" and unguarded.search(p.read_text(encoding="utf-8"))
    ]
    assert offenders == []


# -- 7: links out of a folder unit are refused, and never read ---------------------------------------------


def _link(path: Path, target: Path) -> None:
    path.unlink(missing_ok=True)
    path.symlink_to(target)


LINKED = {
    "token": lambda f, s: _link(write_textual_inversion(f / "token") / "token_identifier.txt", s["text"]),
    "concept": lambda f, s: _link(write_textual_inversion(f / "concept") / "type_of_concept.txt", s["text"]),
    "embeds": lambda f, s: _link(write_textual_inversion(f / "embeds") / "learned_embeds.safetensors", s["weights"]),
    "unet": lambda f, s: _link(
        write_diffusers_folder(f / "unet") / "unet" / "diffusion_pytorch_model.safetensors", s["weights"]
    ),
    "text-encoder": lambda f, s: (
        (write_diffusers_folder(f / "text-encoder") / "text_encoder").mkdir()
        or _link(f / "text-encoder" / "text_encoder" / "model.safetensors", s["weights"])
    ),
    "readme": lambda f, s: _link(write_diffusers_folder(f / "readme") / "README.md", s["card"]),
    "index": lambda f, s: _link(write_diffusers_folder(f / "index") / "model_index.json", s["json"]),
    "lora.civitai.info": lambda f, s: (
        _link(f / "lora.safetensors", s["weights"])
        or (f / "lora.civitai.info").write_text(json.dumps(civitai_version(77)))
    ),
}


@pytest.mark.parametrize("name", sorted(LINKED))
def test_links_out_of_the_imported_folder_are_refused_and_never_read(repository, tmp_path, name):
    secrets = write_outside_secrets(tmp_path / "outside")
    folder = tmp_path / "import"
    folder.mkdir()
    LINKED[name](folder, secrets)
    with ReadWatch.instance().watch(tmp_path / "outside") as watch:
        report = _import_next_to_a_good_card(repository, folder)
    outcome = _outcome(report, name)
    assert outcome.status == "error" and "outside the imported folder" in outcome.message, outcome
    assert watch.opened == []
    assert repository.count() == 1 and SECRET not in json.dumps([c.model_dump(mode="json") for c in repository.list()])


# -- 8: a refused entry leaves nothing behind ------------------------------------------------------------


def test_an_entry_the_database_refuses_leaves_nothing_behind(repository, tmp_path):
    with repository.engine.begin() as connection:  # a real constraint of the database, not a stand-in for our code
        connection.exec_driver_sql(
            "CREATE TRIGGER veto BEFORE INSERT ON checkpoints WHEN NEW.id = 'vetoed' "
            "BEGIN SELECT RAISE(ABORT, 'vetoed by the database'); END"
        )
    write_card(tmp_path, "vetoed", family="shared bears", triggers=["<vetoed>", "plush"])
    write_card(tmp_path, "w-kept", family="shared bears")
    write_card(tmp_path, "x-kept", family="lonely cats")
    report = repository.import_paths([tmp_path])
    assert "vetoed by the database" in _outcome(report, "vetoed.yaml").message
    assert [_outcome(report, f"{i}.yaml").status for i in ("w-kept", "x-kept")] == ["imported", "imported"]
    assert _families(repository) == ["lonely-cats", "shared-bears"]
    with repository.sessions() as session:
        assert sorted(set(session.scalars(select(CheckpointTerm.checkpoint_id)))) == ["w-kept", "x-kept"]
        assert sorted(session.scalars(select(Checkpoint.id))) == ["w-kept", "x-kept"]
    assert sorted(repository.dense.fingerprints()) == ["w-kept", "x-kept"]


def test_a_link_to_a_sibling_folder_sharing_the_name_prefix_is_refused(repository, tmp_path):
    """``repo-private`` starts with the text of ``repo``: the inside check compares whole folder names."""
    from factories import write_kohya_lora

    secret = write_kohya_lora(tmp_path / "repo-private" / "secret.safetensors")
    (tmp_path / "repo").mkdir()
    (tmp_path / "repo" / "looks_local.safetensors").symlink_to(secret)
    report = repository.import_paths([tmp_path / "repo"])
    (outcome,) = report.outcomes
    assert outcome.status == "error" and "outside the imported folder" in outcome.message, outcome
    assert repository.count() == 0
