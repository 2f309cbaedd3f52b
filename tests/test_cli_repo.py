import json

from factories import write_card, write_kohya_lora
from typer.testing import CliRunner

from personalq.cli import app

runner = CliRunner()


def _run(*args):
    return runner.invoke(app, list(args), catch_exceptions=False)


def test_repo_commands_end_to_end(tmp_path):
    home = str(tmp_path / "home")
    write_card(
        tmp_path / "cards", "bear-v1", family="teddy-bear", version=1, styles=["realistic"], created_at="2024-03-01"
    )
    write_card(
        tmp_path / "cards", "bear-v2", family="teddy-bear", version=2, styles=["anime"], created_at="2025-04-11"
    )
    write_card(tmp_path / "cards", "dog-v1", family="dog", version=1, styles=["sketch"], created_at="2025-05-02")
    write_kohya_lora(tmp_path / "cards" / "loose_v3.safetensors")
    result = _run("repo", "import", str(tmp_path / "cards"), "--home", home)
    assert result.exit_code == 0, result.output
    assert "4 imported" in result.output and "checkpoints/s" in result.output

    listed = _run("repo", "list", "--home", home).output.strip().splitlines()
    assert [line.split("\t")[0] for line in listed] == [
        "loose-v3",
        "dog-v1",
        "bear-v1",
        "bear-v2",
    ]  # by family, then version
    assert listed[0].split("\t")[3] == "v3"
    assert [
        c["id"] for c in json.loads(_run("repo", "list", "--family", "teddy-bear", "--json", "--home", home).output)
    ] == ["bear-v1", "bear-v2"]
    assert [
        c["id"] for c in json.loads(_run("repo", "list", "--style", "anime", "--json", "--home", home).output)
    ] == ["bear-v2"]
    dated = json.loads(
        _run("repo", "list", "--since", "2025-01-01", "--until", "2025-04-30", "--json", "--home", home).output
    )
    assert [c["id"] for c in dated] == ["bear-v2"]

    shown = json.loads(_run("repo", "show", "dog-v1", "--home", home).output)
    assert shown["triggers"] == ["<dog-v1>"] and shown["created_at"].startswith("2025-05-02")

    assert "unchanged" in _run("repo", "import", str(tmp_path / "cards"), "--home", home).output
    assert _run("repo", "remove", "dog-v1", "--home", home).exit_code == 0
    missing = _run("repo", "show", "dog-v1", "--home", home)
    assert missing.exit_code == 1 and "no checkpoint with id 'dog-v1'" in missing.output
    assert "added 0" in _run("repo", "reindex", "--home", home).output
    assert "added 3" in _run("repo", "reindex", "--rebuild", "--home", home).output


def test_import_exit_code_reports_failures(tmp_path):
    (tmp_path / "bad.yaml").write_text("id: [")
    result = _run("repo", "import", str(tmp_path), "--home", str(tmp_path / "home"))
    assert result.exit_code == 1 and "malformed YAML" in result.output


def test_home_from_environment(tmp_path, monkeypatch):
    monkeypatch.setenv("PERSONALQ_HOME", str(tmp_path / "envhome"))
    write_card(tmp_path / "c", "x-1")
    assert _run("repo", "import", str(tmp_path / "c")).exit_code == 0
    assert (tmp_path / "envhome" / "personalq.sqlite").exists()
