"""Check-in on requests worded the way people write them, over cards shaped like real Civitai ones.

The cards and requests are invented in the patterns of issue 23's failure classes (none is copied from a
benchmark set): what to draw is not evidence for which model; real names and version labels referred to
loosely; follow-up answers resolved against what tells the options apart; questions that say what they ask.
"""

import datetime as dt

import pytest
from factories import write_card

from personalq.checkin.agent import CheckIn
from personalq.checkin.rewrite import rewrite_prompt
from personalq.repository.service import CheckpointFilter, Repository

NOW = dt.datetime(2024, 3, 1, 12)
# id, name, family, version, creator, triggers, tags, description, created
CARDS = [
    (
        "mosaic-1",
        "[Quillon] Tessera Mosaic Style v1.0",
        "tessera",
        "v1.0",
        "quillon",
        ["tessmos"],
        ["style"],
        "Roman floor mosaics with small stones",
        "2023-05-02",
    ),
    (
        "mosaic-2",
        "[Quillon] Tessera Mosaic Style v2.0_offset",
        "tessera",
        "v2.0_offset",
        "quillon",
        ["tessmos"],
        ["style"],
        "Roman floor mosaics with small stones",
        "2023-07-09",
    ),
    (
        "mosaic-3",
        "[Quillon] Tessera Mosaic Style v2.0_original",
        "tessera",
        "v2.0_original",
        "quillon",
        ["tessmos"],
        ["style"],
        "Roman floor mosaics with small stones",
        "2023-07-10",
    ),
    (
        "lantern-1",
        "LanternGlowMix A1",
        "lanternglow",
        "A1",
        "hikari_works",
        ["glowmix"],
        ["lighting"],
        "warm paper lantern light for night scenes",
        "2023-08-01",
    ),
    (
        "lantern-2",
        "LanternGlowMix A2-HEAVY",
        "lanternglow",
        "A2-HEAVY",
        "hikari_works",
        ["glowmix heavy"],
        ["lighting"],
        "warm paper lantern light for night scenes",
        "2023-08-20",
    ),
    (
        "lantern-3",
        "LanternGlowMix A2-soft",
        "lanternglow",
        "A2-soft",
        "hikari_works",
        ["glowmix soft"],
        ["lighting"],
        "warm paper lantern light for night scenes",
        "2023-09-03",
    ),
    (
        "ink-1",
        "Sumi Brush 墨笔 v1",
        "sumi",
        "v1",
        "bokuseki",
        ["sumibrush"],
        ["ink", "style"],
        "black ink brush painting, one for landscapes",
        "2023-04-11",
    ),
    (
        "ink-2",
        "Sumi Brush 墨笔 v2 [fp16]",
        "sumi",
        "v2 [fp16]",
        "bokuseki",
        ["sumibrush"],
        ["ink", "style"],
        "black ink brush painting, one for landscapes",
        "2023-10-01",
    ),
    (
        "ink-other",
        "Inkwash Dreams",
        "inkwash",
        "1.0",
        "tusk",
        ["inkwashdream"],
        ["ink", "style"],
        "ink wash painting for cartoons and comics",
        "2023-06-06",
    ),
    (
        "harbor",
        "Harbor Lighthouse Pack v1",
        "harbor-lighthouse",
        "v1",
        "seaside",
        ["harborlight"],
        ["building"],
        "a lighthouse on the harbor",
        "2023-03-03",
    ),
    (
        "voxel-1",
        "VoxelWorld Epoch 4",
        "voxelworld",
        "Epoch 4",
        "blockhead",
        ["voxw"],
        ["3d", "style"],
        "voxel cube worlds",
        "2023-01-15",
    ),
    (
        "voxel-2",
        "VoxelWorld Epoch 8 fixed",
        "voxelworld",
        "Epoch 8 fixed",
        "blockhead",
        ["voxw"],
        ["3d", "style"],
        "voxel cube worlds",
        "2023-02-15",
    ),
]


@pytest.fixture
def checkin(settings, tmp_path):
    for cid, name, family, version, creator, triggers, tags, description, created in CARDS:
        write_card(
            tmp_path / "cards",
            cid,
            name=name,
            family=family,
            version=version,
            creator=creator,
            triggers=triggers,
            tags=tags,
            subjects=[],
            styles=[],
            description=description,
            created_at=created,
        )
    repository = Repository(settings)
    assert repository.import_paths([tmp_path / "cards"]).ok
    return CheckIn(repository)


def ask(checkin, text):
    return checkin.ask(text, NOW)


# 1. what to draw is the prompt, not a constraint on which model


@pytest.mark.parametrize(
    "request_text, expected",
    [
        ("a lighthouse at dusk with my tessera mosaic lora, the original", "mosaic-3"),
        ("a dragon over a harbor, glowmix heavy", "lantern-2"),
        ("SumiBrush v1, a castle on a cliff", "ink-1"),
        ("a train crossing a bridge in the voxelworld epoch 4 style", "voxel-1"),
    ],
)
def test_the_picture_words_do_not_pick_the_model(checkin, request_text, expected):
    result = ask(checkin, request_text)
    assert (result.status, result.checkpoint_id) == ("selected", expected)


def test_the_selection_phrase_leaves_the_prompt_and_the_trigger_goes_in(checkin):
    result = ask(checkin, "a lighthouse at dusk with my tessera mosaic lora, the original")
    assert "lighthouse at dusk" in result.prompt and "tessmos" in result.prompt
    assert "tessera" not in result.prompt.lower() and "lora" not in result.prompt.lower()


@pytest.mark.parametrize(
    "request_text",
    [
        "my origami lora, a paper crane",
        "a cat in a box with my moomin style lora",
        "the blorptastic embedding, a lighthouse",
    ],
)
def test_a_named_model_that_is_not_there_is_no_match_even_when_the_picture_words_are(checkin, request_text):
    result = ask(checkin, request_text)
    assert result.status == "no_match", result
    assert result.reason


# 2. real names and version labels, referred to loosely


@pytest.mark.parametrize(
    "request_text, expected",
    [
        ("quillon's tessera v1, a fountain", "mosaic-1"),  # creator + version
        ("lantern glow mix A2 heavy, a night market", "lantern-2"),  # CamelCase name spaced out
        ("lanternglowmix, the soft one", "lantern-3"),  # a word of the version label
        ("the fp16 sumi brush, a crane", "ink-2"),  # a bracketed qualifier
        ("墨笔 v2, 画一只鹤", "ink-2"),  # the CJK part of the name
        ("voxelworld, the fixed one", "voxel-2"),
        ("voxelwrold epoch 8", "voxel-2"),  # a typo
    ],
)
def test_loose_references_to_real_names_and_labels(checkin, request_text, expected):
    result = ask(checkin, request_text)
    assert (result.status, result.checkpoint_id) == ("selected", expected), result


def test_a_version_that_does_not_exist_is_no_match(checkin):
    assert ask(checkin, "tessera mosaic v3, a dolphin").status == "no_match"
    assert ask(checkin, "voxelworld epoch 12").status == "no_match"


# 3. follow-up answers resolve against what tells the options apart


@pytest.mark.parametrize(
    "answer, expected",
    [
        ("the heavy one", "lantern-2"),
        ("the newest", "lantern-3"),
        ("A1", "lantern-1"),
        ("the second one", None),
    ],
)
def test_follow_up_answers(checkin, answer, expected):
    first = ask(checkin, "lanternglowmix, a paper lantern festival")
    assert first.status == "clarify" and len(first.options) == 3
    if expected is None:  # "the second one" is the second option offered
        expected = first.options[1].checkpoint_ids[0]
    answered = checkin.answer(first.session, answer)
    assert (answered.status, answered.checkpoint_id) == ("selected", expected)


def test_a_negated_option_is_not_taken_for_the_fuzzy_match_it_contains():
    """The agent weighs distinguishing words before a fuzzy match: "gushu, not the gushuman one" contains
    "gushuman" whole, which a fuzzy score would pick."""
    from personalq.checkin.agent import CheckIn
    from personalq.checkin.clarify import Option

    options = [Option(label=label, checkpoint_ids=[label]) for label in ("taiji", "gushuman", "gushu")]
    assert CheckIn._match_option("gushu, not the gushuman one", options) == ["gushu"]
    assert CheckIn._match_option("gushumann", options) == ["gushuman"]  # a typo still finds its option


def test_follow_up_by_description_word_and_by_creator(checkin):
    first = ask(checkin, "an ink style lora, a mountain temple")
    assert first.status == "clarify"
    assert checkin.answer(first.session, "the one for cartoons").checkpoint_id == "ink-other"
    again = ask(checkin, "an ink style lora, a mountain temple")
    answered = checkin.answer(again.session, "bokuseki's, the newest")
    assert answered.checkpoint_id == "ink-2"


@pytest.mark.parametrize(
    "answer, labels, expected",
    [
        ("the 1.5 one", ["v2.1 - 1.1", "v1.5 - 1.0", "v2.1 - 1.0"], 1),  # the version written three ways
        ("the 1.5 one", ["v21", "v15"], 1),
        ("with the card frame", ["kodama_GS no card frame", "kodama_GS card frame"], 1),  # a negated label loses
        ("without the frame", ["kodama_GS no card frame", "kodama_GS card frame"], 0),
        ("black", ["v1.0black", "v1.0white"], 0),  # letters and digits apart
        ("the wood one", ["v2.0 jade statue", "v1.0 wood statue"], 1),
        ("the statue", ["v2.0 jade statue", "v1.0 wood statue"], None),  # a word every option has
        ("the goth armor", ["Fantasy Armors v1", "Fantasy Armors v2"], None),  # a word no option has
        ("the actual v1, not the training data", ["v1", "Training Data"], 0),  # what the answer negates loses
        ("not the jade one", ["v2.0 jade statue", "v1.0 wood statue"], 1),
        ("version one point five", ["v2.0", "v1.5", "v1.0"], 1),  # spelled out, and v2.0 is "2", not "20"
        ("version two", ["v3.0", "v2.0", "v10"], 1),
        ("gushu, not the gushuman one", ["taiji", "gushuman", "gushu"], 2),
        ("no. the fixed one", ["Epoch 8 fixed", "Epoch 4"], 0),  # a negation ends with its clause
        ("no \u2014 epoch 4", ["Epoch 8 fixed", "Epoch 4"], 1),
        ("I don't want the jade one", ["v2.0 jade statue", "v1.0 wood statue"], 1),
    ],
)
def test_an_answer_picks_the_option_its_distinguishing_words_name(answer, labels, expected):
    from personalq.checkin.clarify import Option, pick_by_words

    options = [Option(label=label, checkpoint_ids=[f"card-{i}"]) for i, label in enumerate(labels)]
    assert pick_by_words(answer, options) == (None if expected is None else [f"card-{expected}"])


# 4. questions say what they ask about, and options what tells them apart


def test_a_question_about_versions_names_the_model(checkin):
    result = ask(checkin, "lanternglowmix, a paper lantern festival")
    assert "LanternGlowMix" in result.question
    assert {o.label for o in result.options} == {"A1", "A2-HEAVY", "A2-soft"}


def test_a_question_across_models_says_several_fit(checkin):
    result = ask(checkin, "an ink style lora, a mountain temple")
    assert result.status == "clarify" and "Several models fit" in result.question
    assert len({o.label for o in result.options}) == len(result.options) >= 2


# the creator is a card field: stored, filterable, searchable


def test_creator_is_stored_filtered_and_searched(checkin):
    repository = checkin.repository
    assert repository.get("ink-2").creator == "bokuseki"
    assert {c.id for c in repository.list(CheckpointFilter(creator="BOKUSEKI"))} == {"ink-1", "ink-2"}
    result = ask(checkin, "the sumi brush one by bokuseki from october")
    assert (result.status, result.checkpoint_id) == ("selected", "ink-2")


# no card text and no request can crash Check-in

NASTY = [
    "\\h\\1\\g<0>",
    "$1 ${x} \\\\",
    "(?P<x>.*)+[",
    "{0}{name}%s",
    "<lora:a\\b:0.8>",
    "見返り美人🎨",
    "\u202eevil\u202c",
    "\u200b\u200f",
    "*?+.^$|()[]{}",
]


def test_nasty_strings_in_cards_and_requests_never_crash(settings, tmp_path):
    for i, nasty in enumerate(NASTY):
        write_card(
            tmp_path / "cards",
            f"nasty-{i}",
            name=f"Nasty {nasty} v{i}",
            family=f"nasty-{i}",
            version=f"v{i} {nasty}",
            creator=nasty,
            triggers=[nasty, f"trig{i}"],
            tags=[nasty],
            description=f"made with {nasty}",
            created_at="2023-01-01",
        )
    repository = Repository(settings)
    assert repository.import_paths([tmp_path / "cards"]).ok
    checkin = CheckIn(repository)
    for i, nasty in enumerate(NASTY):
        for request_text in (f"a castle with the {nasty} lora", f"Nasty {nasty} v{i} on a beach", nasty + " " + nasty):
            result = checkin.ask(request_text, NOW)
            assert result.status in ("selected", "clarify", "no_match")
            if result.status == "clarify":
                checkin.answer(result.session, nasty)
    chosen = checkin.ask("a castle, trig0", NOW)
    assert (chosen.status, chosen.prompt) == ("selected", "a castle, trig0")  # the trained word the request said
    card = repository.get(chosen.checkpoint_id)
    assert rewrite_prompt("a castle", card).startswith(NASTY[0])  # a trigger goes in verbatim, never as a template


def test_repo_list_filters_by_creator(checkin, settings):
    from typer.testing import CliRunner

    from personalq.cli import app

    result = CliRunner().invoke(app, ["repo", "list", "--creator", "Hikari_Works", "--home", str(settings.home)])
    assert result.exit_code == 0, result.output
    assert sorted(line.split("\t")[0] for line in result.output.splitlines()) == [
        "lantern-1",
        "lantern-2",
        "lantern-3",
    ]
