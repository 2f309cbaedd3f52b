"""The person's corrections: kept across re-imports, shown as edited, and used by Check-in at once."""

import json

from factories import write_card, write_kohya_lora
from typer.testing import CliRunner

from personalq.checkin.agent import CheckIn
from personalq.cli import app
from personalq.repository.overrides import CardEdit
from personalq.repository.service import CheckpointFilter


def test_an_edit_changes_the_card_everywhere_it_is_read(repository, tmp_path):
    write_kohya_lora(tmp_path / "mochi_corgi_v2.safetensors", output_name="mochi_corgi_v2")
    repository.import_paths([tmp_path])
    edited = repository.edit(
        "mochi-corgi-v2",
        CardEdit(
            name="Mochi the corgi",
            triggers=["mochidog", "corgi plush"],
            styles=["ink wash painting"],
            base_model="SDXL 1.0",
        ),
    )
    assert edited.edited == ["base_model", "name", "styles", "triggers"]
    stored = repository.get("mochi-corgi-v2")
    assert (stored.name, stored.triggers, stored.styles, stored.base_model) == (
        "Mochi the corgi",
        ["mochidog", "corgi plush"],
        ["ink wash painting"],
        "sdxl",
    )
    assert repository.ids_with_terms(["mochidog"], ["trigger"]) == ["mochi-corgi-v2"]
    assert [c.id for c in repository.list(CheckpointFilter(style="Ink wash painting"))] == ["mochi-corgi-v2"]
    assert [c.id for c in repository.list(CheckpointFilter(base_model="sdxl"))] == ["mochi-corgi-v2"]
    assert repository.search_sparse("mochidog", k=1)[0][0] == "mochi-corgi-v2"
    assert repository.search_dense("Mochi the corgi", k=1)[0][0] == "mochi-corgi-v2"


def test_add_remove_and_order_triggers():
    from personalq.repository.card import Card

    card = Card(id="x", name="x", created_at="2025-01-01", triggers=["a", "b", "c"])
    assert CardEdit(add_triggers=["d"], remove_triggers=["B"]).changes(card) == {"triggers": ["a", "c", "d"]}
    assert CardEdit(triggers=["c", "a"]).changes(card) == {"triggers": ["c", "a"]}
    assert CardEdit(triggers=["c"], add_triggers=["a"]).changes(card) == {"triggers": ["c", "a"]}
    assert CardEdit(styles=[]).changes(card) == {"styles": []}


def test_an_override_survives_a_reimport_of_the_same_file(repository, tmp_path):
    lora = write_kohya_lora(tmp_path / "loras" / "bear_v2.safetensors")
    repository.import_paths([tmp_path / "loras"])
    assert repository.get("bear-v2").triggers == ["brnbear"]  # kohya's most frequent tag
    repository.edit("bear-v2", CardEdit(triggers=["brown teddy"], styles=["plush photo"]))

    again = repository.import_paths([tmp_path / "loras"])
    assert again.ok and again.count("unchanged") == 1
    assert repository.get("bear-v2").triggers == ["brown teddy"]

    # the file itself changes (new training metadata): the new import lands, the correction stays on top
    write_kohya_lora(lora, seed=3, **{"modelspec.description": "retrained with more pictures"})
    report = repository.import_paths([tmp_path / "loras"], replace=True)
    assert report.count("updated") == 1, report.outcomes
    bear = repository.get("bear-v2")
    assert bear.description == "retrained with more pictures"
    assert (bear.triggers, bear.styles, bear.edited) == (["brown teddy"], ["plush photo"], ["styles", "triggers"])
    assert repository.ids_with_terms(["brnbear"], ["trigger"]) == []

    reset = repository.edit("bear-v2", CardEdit(reset=True))
    assert (reset.triggers, reset.edited) == (["brnbear"], [])


def test_check_in_finds_the_checkpoint_by_its_new_trigger_at_once(repository, tmp_path):
    write_card(tmp_path, "fox-v1", name="Glass fox v1", triggers=["<glassfox>"], subjects=["fox"])
    write_card(tmp_path, "owl-v1", name="Paper owl v1", triggers=["<paperowl>"], subjects=["owl"])
    repository.import_paths([tmp_path])
    checkin = CheckIn(repository)
    before = checkin.ask("zorblax on a beach")
    assert before.checkpoint_id != "owl-v1"
    repository.edit("owl-v1", CardEdit(add_triggers=["zorblax"]))
    after = checkin.ask("zorblax on a beach")  # the same Check-in: its cached cards follow the revision
    assert after.status == "selected" and after.checkpoint_id == "owl-v1", after
    assert "zorblax" in after.prompt


def test_cli_edit(tmp_path):
    home = str(tmp_path / "home")
    write_kohya_lora(tmp_path / "loras" / "ink_wash_v1.safetensors", output_name="ink_wash_v1")
    runner = CliRunner()
    assert runner.invoke(app, ["repo", "import", str(tmp_path / "loras"), "--home", home]).exit_code == 0
    result = runner.invoke(
        app,
        [
            "repo",
            "edit",
            "ink-wash-v1",
            "--trigger",
            "inkwash",
            "--trigger",
            "sumi-e",
            "--style",
            "ink wash painting",
            "--name",
            "Sumi-e mountains",
            "--base",
            "sdxl",
            "--home",
            home,
        ],
    )
    assert result.exit_code == 0, result.output
    assert "edited ink-wash-v1 (Sumi-e mountains): base_model, name, styles, triggers" in result.output
    result = runner.invoke(
        app, ["repo", "edit", "ink-wash-v1", "--remove-trigger", "inkwash", "--add-trigger", "brush", "--home", home]
    )
    shown = json.loads(runner.invoke(app, ["repo", "show", "ink-wash-v1", "--home", home]).output)
    assert shown["triggers"] == ["sumi-e", "brush"] and shown["edited"] == ["base_model", "name", "styles", "triggers"]
    missing = runner.invoke(app, ["repo", "edit", "nope", "--name", "x", "--home", home])
    assert missing.exit_code == 1 and "no checkpoint with id 'nope'" in missing.output
    empty = runner.invoke(app, ["repo", "edit", "ink-wash-v1", "--name", "", "--home", home])
    assert empty.exit_code == 1 and "name" in empty.output


def test_a_refused_reimport_leaves_the_override_alone(repository, tmp_path):
    write_card(tmp_path / "a", "bear-v4", description="tan plush bear")
    repository.import_paths([tmp_path / "a"])
    repository.edit("bear-v4", CardEdit(styles=["felt"]))
    write_card(tmp_path / "b", "bear-v4", description="something else entirely")
    assert repository.import_paths([tmp_path / "b"]).count("error") == 1  # another card under the same id
    assert repository.edit("bear-v4", CardEdit(reset=True)).description == "tan plush bear"
