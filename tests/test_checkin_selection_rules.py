"""How Check-in reads names, version labels and constraints in requests, on invented Civitai-shaped cards.

Each test pins one rule of :mod:`personalq.checkin.reasoning` and :mod:`personalq.checkin.reference` with
cases written for it (none copied from a benchmark set).
"""

import datetime as dt
import json

import pytest
from factories import checkin_among_many, write_card
from typer.testing import CliRunner

from personalq.checkin.agent import CheckIn
from personalq.checkin.retrieval import retrieve
from personalq.cli import app
from personalq.repository.service import Repository

NOW = dt.datetime(2024, 3, 1, 12)
# id, name, family, version, triggers, styles, description, created
CARDS = [
    ("fox-1", "Glimmerfox v1.0", "glimmerfox", "v1.0", ["glimfox"], [], "a shiny fox character", "2023-05-02"),
    ("fox-2", "Glimmerfox v2.0", "glimmerfox", "v2.0", ["glimfox"], [], "a shiny fox character", "2023-08-02"),
    ("fence", "Picket Fence Builder", "fence", "1.0", ["pfence"], [], "white wooden fences", "2023-06-01"),
    ("dino-a", "Saurian Plates V3 - Crest", "saurian", "V3 - Crest", ["splates"], [], "dinosaur art", "2023-04-01"),
    ("dino-b", "Saurian Plates V3 - Paint", "saurian", "V3 - Paint", ["splates"], [], "dinosaur art", "2023-04-02"),
    (
        "noir-1",
        "Rainy Alley v2.0",
        "alley",
        "v2.0",
        ["alley, noir style, neon style"],
        [],
        "wet streets",
        "2023-02-01",
    ),
    ("noir-2", "Rainy Alley v2.0-noir", "alley", "v2.0-noir", ["alley noir"], [], "wet streets", "2023-02-05"),
    ("sky-sun", "Sun, Moon and Star Pack Sun768", "skypack", "Sun768", ["skysun"], [], "celestial set", "2023-03-01"),
    (
        "sky-moon",
        "Sun, Moon and Star Pack Moon768",
        "skypack",
        "Moon768",
        ["skymoon"],
        [],
        "celestial set",
        "2023-03-02",
    ),
    (
        "sky-star",
        "Sun, Moon and Star Pack Star768",
        "skypack",
        "Star768",
        ["skystar"],
        [],
        "celestial set",
        "2023-03-03",
    ),
    ("pebble-1", "Pebble Style Pebble V1", "pebble", "Pebble V1", ["pebbly"], [], "smooth river stones", "2023-05-05"),
    ("pebble-2", "Pebble Style v2.0", "pebble", "v2.0", ["pebbly"], [], "smooth river stones", "2023-06-06"),
    ("pebble-3", "Pebble Style v3.0", "pebble", "v3.0", ["pebbly"], [], "smooth river stones", "2023-07-07"),
    ("dusk", "Velvet Dusk v1", "velvet-dusk", "v1", ["vdusk"], [], "purple evening light", "2023-09-01"),
    ("dusk-other", "Dusk Harbor v1", "dusk-harbor", "v1", ["dharbor"], [], "boats at dusk", "2023-05-10"),
    ("neg-1", "Quick Negative (+ QuickNegV2) v2", "quickneg", "v2", ["qneg2"], [], "negative embedding", "2023-06-01"),
    (
        "neg-2",
        "Quick Negative (+ QuickNegV2) v1.0 Normal",
        "quickneg",
        "v1.0 Normal",
        ["qneg"],
        [],
        "negative embedding",
        "2023-05-01",
    ),
    ("kite-1", "Kite Festival v1", "kite", "v1", ["kitefest"], ["anime"], "kites in the sky", "2023-01-01"),
    ("kite-2", "Kite Festival v2", "kite", "v2", ["kitefest"], ["watercolor"], "kites in the sky", "2023-02-01"),
    ("moon-1", "CopperMoonAI v1.0", "coppermoon", "v1.0", ["cmoon"], [], "brass and fog", "2023-05-03"),
    ("moon-2", "CopperMoonAI v2.0", "coppermoon", "v2.0", ["cmoon"], [], "brass and fog", "2023-06-03"),
    ("keeper", "Lighthouse Keeper v1", "keeper", "v1", ["lhkeeper"], [], "a lighthouse on a cliff", "2023-06-20"),
    (
        "quiet",
        "QuietGrain Negative",
        "quietgrain",
        "v1",
        ["quietgrain"],
        [],
        "negative embedding (女孩, 花园)",
        "2023-04-04",
    ),
    ("dress", "长裙 Long Dress v3", "dress", "v3", ["longdress"], [], "flowing skirts (就是那个长裙)", "2023-05-05"),
    ("dress-2", "长裙 Long Dress v2", "dress", "v2", ["longdress"], [], "flowing skirts", "2023-04-05"),
    # lettered twins whose triggers differ in the letter only
    ("koi-a", "Neon Koi Style A, version 1", "neonkoi", "Style A, version 1", ["NeonKoi-6s-A"], [], "", "2023-03-01"),
    ("koi-b", "Neon Koi Style B, version 1", "neonkoi", "Style B, version 1", ["NeonKoi-6s-B"], [], "", "2023-03-01"),
    ("koi-2", "Neon Koi Style NeonKoi-12s-v2", "neonkoi", "NeonKoi-12s-v2", ["NeonKoi-12s-v2"], [], "", "2023-04-01"),
    (
        "statue-1",
        "clay/glass statue style v1.0 clay statue",
        "kiln",
        "v1.0 clay statue",
        ["kilnst"],
        [],
        "",
        "2023-02-01",
    ),
    (
        "statue-2",
        "clay/glass statue style v2.0 glass statue",
        "kiln",
        "v2.0 glass statue",
        ["kilnst"],
        [],
        "",
        "2023-03-01",
    ),
    ("pharaoh", "Pharaoh Style 2.1", "pharaoh", "V1.0", ["style-pharaoh_sd2"], [], "ancient egypt", "2023-04-02"),
    # one model for two bases, its name saying both numbers and each label one
    ("golem-15", "Quartz Golem ( 1.5 & 2.1 )", "golem", "1.5 - v1.0", ["qgolem"], [], "", "2023-04-03"),
    ("golem-21", "Quartz Golem ( 1.5 & 2.1 )", "golem", "2.1 - v1.0", ["qgolem"], [], "", "2023-04-04"),
    # numbered files: triggers with a step count, labels with a resolution
    ("owl-1", "snow-owl-embeddings-sd-v2-1 v1.1", "snowowl", "v1.1", ["sowl3-e2-1500"], [], "owls", "2023-03-24"),
    ("owl-2", "snow-owl-embeddings-sd-v2-1 v1.0", "snowowl", "v1.0", ["sowl3-e2-500"], [], "owls", "2023-03-24"),
    ("tile-16", "Clay Tiles ctile-16", "claytiles", "ctile-16", [], [], "terracotta roofs", "2023-02-01"),
    ("tile-32", "Clay Tiles ctile-32", "claytiles", "ctile-32", [], [], "terracotta roofs", "2023-02-01"),
    ("tile-64", "Clay Tiles ctile-64", "claytiles", "ctile-64", [], [], "terracotta roofs", "2023-02-01"),
    # a trigger that spells the model's name, and its siblings' triggers begin with it
    ("ink-normal", "Style Ink Free Normal", "inkfree", "Normal", ["Ink-Free"], [], "", "2023-04-25"),
    ("ink-toon", "Style Ink Free Toon", "inkfree", "Toon", ["Ink-Free-Toon"], [], "", "2023-04-25"),
    ("ink-dark", "Style Ink Free Dark", "inkfree", "Dark", ["Ink-Free-Dark"], [], "", "2023-04-28"),
    # a model people describe rather than name
    ("trains", "kCuteTrains v1.0", "cutetrains", "v1.0", ["kcuteTr4in"], [], "toy locomotives", "2023-05-06"),
    ("sugar", "糖画 | Sugar painting style", "sugar", "v1", ["tanghua"], [], "", "2023-04-01"),
    ("candy", "Candy Shop", "candy", "v1", ["cshop"], [], "用糖做的画那么好 (a shop)", "2023-04-01"),
    # a kind word in the model's name and in one version's label
    (
        "lamp-lora",
        "[LoCon/LoRA] Paper Lantern Style LoRa Version",
        "lantern",
        "LoRa Version",
        [],
        [],
        "",
        "2023-03-22",
    ),
    (
        "lamp-locon",
        "[LoCon/LoRA] Paper Lantern Style LoCon Version",
        "lantern",
        "LoCon Version",
        [],
        [],
        "",
        "2023-03-21",
    ),
    # training lengths as labels, and a trigger in CamelCase
    ("tide-10k", "Tide Style TI 10000 epochs", "tide", "Tide Style TI 10000 epochs", ["tidest"], [], "", "2023-01-01"),
    ("tide-20k", "Tide Style TI 20000 epochs", "tide", "Tide Style TI 20000 epochs", ["tidest"], [], "", "2023-01-02"),
    (
        "orbit-4",
        "OrbitDraw OrbitDrawFour 768x768",
        "orbitdraw",
        "OrbitDrawFour 768x768",
        ["OrbitDrawFour"],
        [],
        "",
        "2023-01-03",
    ),
    (
        "orbit-1",
        "OrbitDraw OrbitDrawOne 1088x768",
        "orbitdraw",
        "OrbitDrawOne 1088x768",
        ["OrbitDrawOne"],
        [],
        "",
        "2023-01-01",
    ),
    # a release letter after a version's number, and two models of one name told apart by a version's word
    ("tape-12", "Loop Tape v1.2", "looptape", "v1.2", ["rtape"], [], "", "2023-05-01"),
    ("tape-12r", "Loop Tape v1.2R", "looptape", "v1.2R", ["rtape"], [], "", "2023-04-01"),
    ("gear-ren", "Gear Maiden REN", "gearmaiden", "REN", ["gear maiden"], [], "", "2023-05-01"),
    ("gear-kai", "Gear Maiden KAI", "gearmaiden", "KAI", ["gear maiden"], [], "", "2023-05-02"),
    ("gear-v2", "gear_maiden Gear_V2", "gear_maiden", "Gear_V2", ["gear maiden"], [], "", "2023-06-01"),
]


@pytest.fixture
def checkin(settings, tmp_path):
    for cid, name, family, version, triggers, styles, description, created in CARDS:
        write_card(
            tmp_path / "cards",
            cid,
            name=name,
            family=family,
            version=version,
            triggers=triggers,
            tags=[],
            subjects=[],
            styles=styles,
            description=description,
            created_at=created,
        )
    repository = Repository(settings)
    assert repository.import_paths([tmp_path / "cards"]).ok
    return CheckIn(repository)


def picked(checkin, text):
    result = checkin.ask(text, NOW)
    return result.status, result.checkpoint_id


@pytest.mark.parametrize(
    "request_text, expected",
    [
        ("glimmerfox v2 sitting on a fence", "fox-2"),  # the version number marks the name; "fence" is the picture
        ("a raptor in the jungle, saurian plates V3 paint", "dino-b"),  # a short tail after the number is the label
        ("paint a raptor with saurian plates V3 crest", "dino-a"),  # "paint" asks for the picture
    ],
)
def test_a_version_number_marks_the_name_and_its_label(checkin, request_text, expected):
    assert picked(checkin, request_text) == ("selected", expected)


def test_a_label_word_beats_the_same_word_among_triggers(checkin):
    assert picked(checkin, "a detective in the rain, rainy alley lora v2.0-noir") == ("selected", "noir-2")


def test_a_name_that_lists_its_versions_lets_one_word_pick_the_version(checkin):
    assert picked(checkin, "a night sky with the Moon embedding from the sun moon and star pack")[1] == "sky-moon"


def test_a_label_that_repeats_the_name_does_not_pick_the_first_version(checkin):
    result = checkin.ask("pebble style lora, a beach", NOW)
    assert result.status == "clarify" and {o.checkpoint_ids[0] for o in result.options} == {
        "pebble-1",
        "pebble-2",
        "pebble-3",
    }


def test_a_date_said_of_the_checkpoint_applies_however_old(checkin):
    assert picked(checkin, "my glimmerfox from 2019")[0] == "no_match"
    # a year long before every card, not said of it, is the picture's
    assert picked(checkin, "glimmerfox, a photo as if taken in 2019")[0] != "no_match"


def test_a_constraint_does_not_fall_back_to_a_partial_name(checkin):
    # no Velvet Dusk from May: the May "Dusk Harbor" shares one word of the name and is not what was meant
    result = checkin.ask("velvet dusk, the may version", NOW)
    assert result.status == "no_match"


def test_not_v2_reads_the_version_label_not_the_name(checkin):
    assert picked(checkin, "quick negative embedding but not v2, a portrait") == ("selected", "neg-2")


def test_a_named_style_tells_versions_apart(checkin):
    assert picked(checkin, "my watercolor kite festival") == ("selected", "kite-2")
    assert picked(checkin, "my latest anime kite festival") == ("selected", "kite-1")


@pytest.mark.parametrize(
    "request_text, expected",
    [
        # the clause a model's name spells out whole is the name; the others are the picture
        ("a lighthouse on a stormy coast, copper moon, the version from june", "moon-2"),
        ("a lighthouse on a stormy coast - quietgrain", "quiet"),
    ],
)
def test_the_clause_a_name_spells_out_names_the_model(checkin, request_text, expected):
    assert picked(checkin, request_text) == ("selected", expected)


def test_a_possessive_names_a_model_only_when_its_owner_is_a_known_name(checkin):
    # "baker's" owns nothing in the repository: "baker's kitchen" is the picture, not a name to find
    assert picked(checkin, "quietgrain as the negative for a baker's kitchen at dawn") == ("selected", "quiet")
    result = checkin.ask("a baker's kitchen at dawn", NOW)
    assert result.status == "no_match"


def test_a_sentence_after_a_version_in_an_unspaced_script_is_the_picture(checkin):
    # Chinese has no spaces: the whole sentence after "v3" is one run, not a two-word version label
    assert picked(checkin, "长裙 v3 女孩在花园里散步") == ("selected", "dress")


def test_a_demonstrative_is_not_a_name(checkin):
    # "那个" is "that one": "that embedding" names nothing, the name is in the brackets before it
    assert picked(checkin, "用(quietgrain)那个embedding画一个在花园里的女孩") == ("selected", "quiet")


def test_the_benchmark_prints_a_confusion_table_and_every_miss_with_its_reason(checkin, settings, tmp_path):
    instances = [
        {
            "instance_id": "t-1",
            "query": "glimmerfox v2 on a fence",
            "now": "2024-03-01",
            "ground_truth": {"status": "selected", "checkpoint_id": "fox-2"},
        },
        {
            "instance_id": "t-2",
            "query": "my moomin lora, a troll",
            "now": "2024-03-01",
            "ground_truth": {"status": "no_match"},
        },
        {
            "instance_id": "t-3",
            "query": "glimmerfox v7 in a meadow",
            "now": "2024-03-01",  # truth wrong on purpose: a miss
            "ground_truth": {"status": "selected", "checkpoint_id": "fox-1"},
        },
    ]
    prompts = tmp_path / "prompts.jsonl"
    prompts.write_text("".join(json.dumps(i) + "\n" for i in instances))
    out = tmp_path / "predictions.jsonl"
    result = CliRunner().invoke(
        app, ["bench", "checkin", "--prompts", str(prompts), "--home", str(settings.home), "--out", str(out)]
    )
    assert result.exit_code == 0, result.output
    assert "| selected | 1 | 0 | 1 |" in result.output and "| no_match | 0 | 0 | 1 |" in result.output
    assert "checkin: 1 misses" in result.output
    miss = next(line for line in result.output.splitlines() if line.startswith("| t-3 |"))
    assert "selected fox-1" in miss and "no_match" in miss and "version 7" in miss
    assert [json.loads(line)["instance_id"] for line in out.read_text().splitlines()] == ["t-1", "t-2", "t-3"]


def test_a_season_before_a_noun_is_the_picture_not_a_date(checkin):
    assert picked(checkin, "a summer field with kitefest v2") == ("selected", "kite-2")  # made in February


@pytest.mark.parametrize(
    "request_text, expected",
    [
        ("NeonKoi-6s-B, a pond at night", "koi-b"),  # the letter a word list drops tells the twins apart
        ("a pond at night with neonkoi-6s-a", "koi-a"),
        ("sowl3-e2-1500 perched on a fence", "owl-1"),  # not a year 1500 or a version 2: one trigger, whole
        ("clay tiles, ctile-32, a village roof", "tile-32"),
    ],
)
def test_a_trigger_or_label_written_whole_names_its_file(checkin, request_text, expected):
    assert picked(checkin, request_text) == ("selected", expected)


def test_a_numbered_file_ruled_out_is_not_also_required(checkin):
    result = checkin.ask("clay tiles, not the ctile-16, a village roof", NOW)
    assert result.status == "clarify" and {o.checkpoint_ids[0] for o in result.options} == {"tile-32", "tile-64"}


@pytest.mark.parametrize("request_text", ["sowl3-e2-2500 perched on a fence", "clay tiles style, ctile-8, a roof"])
def test_a_numbered_file_the_model_does_not_have_is_no_match(checkin, request_text):
    result = checkin.ask(request_text, NOW)
    assert result.status == "no_match" and "none of them is" in result.reason


def test_a_number_joined_to_a_word_the_candidates_do_not_number_is_the_picture(checkin):
    assert picked(checkin, "glimmerfox v2 holding an ak-47") == ("selected", "fox-2")


def test_a_trigger_that_spells_the_model_name_does_not_pick_one_version(checkin):
    result = checkin.ask("the ink-free embedding, a cat on a sofa", NOW)
    assert result.status == "clarify" and len(result.options) == 3


@pytest.mark.parametrize("answer, expected", [("style b", "koi-b"), ("Style A", "koi-a"), ("B", "koi-b")])
def test_an_answer_names_a_lettered_twin(checkin, answer, expected):
    first = checkin.ask("neon koi version 1, a pond at night", NOW)
    assert first.status == "clarify"
    assert checkin.answer(first.session, answer).checkpoint_id == expected


def test_a_description_of_what_the_model_draws_may_paraphrase_it(checkin):
    # half the words of "cute little chibi trains" are on the card: enough for a description, not for a name
    assert picked(checkin, "that lora for cute little chibi trains, a train crossing a bridge") == (
        "selected",
        "trains",
    )
    assert picked(checkin, "my cute little chibi trains lora, a train crossing a bridge")[0] == "no_match"


def test_a_kind_word_ruled_out_is_read_in_the_version_label_before_the_name(checkin):
    assert picked(checkin, "paper lantern style, not the locon version - a night market") == ("selected", "lamp-lora")


@pytest.mark.parametrize(
    "request_text, expected",
    [
        ("glimmerfox 2.0 in the snow", ("selected", "fox-2")),  # a bare decimal after the name is its version
        ("glimmerfox 5.0 in the snow", ("no_match", None)),
        ("tide style ti 20000 epochs, a wave", ("selected", "tide-20k")),
        ("tide style TI at 30000 epochs, a wave", ("no_match", None)),
        ("OrbitDrawFour, a freighter leaving orbit", ("selected", "orbit-4")),  # a CamelCase trigger, whole
    ],
)
def test_versions_training_lengths_and_triggers_said_bare(checkin, request_text, expected):
    assert picked(checkin, request_text) == expected


def test_a_name_inside_a_sentence_without_spaces_is_found(checkin):
    # "就用糖画那款lora": the character pairs across words ("用糖", "画那") name nothing and must not hide "糖画"
    assert picked(checkin, "就用糖画那款lora，画一条龙") == ("selected", "sugar")
    assert picked(checkin, "用冰淇淋那个lora，画一条龙")[0] == "no_match"


def test_a_label_that_runs_the_name_together_does_not_pick_its_version(checkin):
    # "NeonKoi-12s-v2" repeats "Neon Koi" without spaces: the name's words do not make it the version meant
    result = checkin.ask("neon koi style embedding, a pond at night", NOW)
    assert result.status == "clarify" and len(result.options) == 3


def test_a_bare_decimal_may_be_part_of_the_name(checkin):
    assert picked(checkin, "pharaoh style 2.1, a cat on a throne") == ("selected", "pharaoh")
    assert picked(checkin, "the second version of glimmerfox") == ("selected", "fox-2")  # an ordinal, not a decimal


def test_a_number_the_name_says_of_every_version_picks_the_one_labelled_with_it(checkin):
    # "( 1.5 & 2.1 )" is the name of both versions: the number said picks the one whose label has it
    result = checkin.ask("quartz golem, the 2.1 version pls. a golem kneeling in a flooded cave", NOW)
    assert (result.status, result.checkpoint_id) == ("selected", "golem-21")
    assert result.prompt == "qgolem. a golem kneeling in a flooded cave"
    assert picked(checkin, "quartz golem 1.5, a golem in the snow") == ("selected", "golem-15")


def test_words_said_of_the_version_pick_it_when_the_name_ties(checkin):
    assert picked(checkin, "kiln's statue lora, the glass blowing version - a vase") == ("selected", "statue-2")
    assert picked(checkin, "kiln's statue lora, a vase")[0] == "clarify"


def test_regular_before_a_kind_word_is_not_a_name(checkin):
    assert picked(checkin, "paper lantern, regular lora not the locon, a night market") == (
        "selected",
        "lamp-lora",
    )


@pytest.mark.parametrize(
    "request_text, expected",
    [
        # after a name, "for ..." is the picture, not a description of the model
        ("velvet dusk lora for kites over a lighthouse on a cliff", ("selected", "dusk")),
    ],
)
def test_what_follows_a_named_kind_word_is_the_picture(checkin, request_text, expected):
    assert picked(checkin, request_text) == expected


@pytest.mark.parametrize(
    "request_text, expected",
    [
        ("kite festival, the later version", "kite-2"),
        ("kite festival but the earlier upload, not the latest", "kite-1"),
    ],
)
def test_later_and_earlier_order_the_versions(checkin, request_text, expected):
    assert picked(checkin, request_text) == ("selected", expected)


def test_a_release_letter_after_the_number_picks_that_release(checkin):
    assert picked(checkin, "loop tape v1.2R, girl at a rainy bus stop") == ("selected", "tape-12r")
    result = checkin.ask("loop tape v1.2R, girl at a rainy bus stop", NOW)
    assert result.prompt == "rtape, girl at a rainy bus stop"
    # the number alone is the plain release, not the one that adds a letter
    assert picked(checkin, "loop tape v1.2, girl at a rainy bus stop") == ("selected", "tape-12")


def test_words_said_of_the_version_tell_two_models_of_one_name_apart(checkin):
    assert checkin.ask("gear maiden flying over a city", NOW).status == "clarify"
    assert picked(checkin, "gear maiden, the REN version, flying over a city") == ("selected", "gear-ren")
    result = checkin.ask("gear maiden, the ren one, flying over a city", NOW)
    assert (result.status, result.checkpoint_id, result.prompt) == (
        "selected",
        "gear-ren",
        "gear maiden, flying over a city",
    )


def test_file_names_that_run_versions_and_sizes_into_words(settings, tmp_path):
    """Extracted LoRAs named after their file: "LORA14DM120glowVisionV20_v20" is version 2.0 at 120 dims; a base said
    after a name ("for my 2.1 gens") marks the name as a version would, and is no version."""
    cards = [
        ("ext-20-120", "LORA14DM120glowVisionV20_v20", "SD 1.5"),
        ("ext-20-320", "LORA14DM320glowVisionV20_v20", "SD 1.5"),
        ("ext-13-120", "LORA14DM120glowVisionV13_v13", "SD 1.5"),
        ("storm-neg", "StormQuiet_Negative", "SD 2.1 768"),
    ]
    for cid, label, base in cards:
        name = "Storm Quiet Negative" if cid == "storm-neg" else "[Community] Glow extract"
        write_card(
            tmp_path / "cards",
            cid,
            name=f"{name} {label}",
            family=cid.split("-")[0],
            version=label,
            base_model=base,
            triggers=[],
            tags=[],
            subjects=[],
            styles=[],
            created_at="2023-05-01",
        )
    repository = Repository(settings)
    assert repository.import_paths([tmp_path / "cards"]).ok
    checkin = CheckIn(repository)
    assert picked(checkin, "glow extract 2.0, the 120 dim one: a lighthouse at dusk") == ("selected", "ext-20-120")
    assert picked(checkin, "a lighthouse at dusk, glow extract v2 (the 320 one)") == ("selected", "ext-20-320")
    assert picked(checkin, "a foggy harbor at dawn, storm quiet negative for my 2.1 gens") == ("selected", "storm-neg")
    # dims said bare after the kind words, which leave the prompt with them
    result = checkin.ask("glow vision v2 lora extract at 320 - a lighthouse at dusk", NOW)
    assert (result.status, result.checkpoint_id, result.prompt) == ("selected", "ext-20-320", "a lighthouse at dusk")


def _one_model(settings, tmp_path, name: str, versions: list[tuple[str, str, list[str], str]]) -> CheckIn:
    """Check-in over one model's versions: (id, version label, triggers, created)."""
    for cid, label, triggers, created in versions:
        write_card(
            tmp_path / "cards",
            cid,
            name=name,
            family=name.lower(),
            version=label,
            triggers=triggers,
            tags=[],
            subjects=[],
            styles=[],
            created_at=created,
        )
    repository = Repository(settings)
    assert repository.import_paths([tmp_path / "cards"]).ok
    return CheckIn(repository)


@pytest.mark.parametrize(
    "request_text, expected",
    [
        # a kind of adapter written into a file's label in its own capitals is a word of it
        ("harbor lights, the loha one: a pier at night", "lights-loha"),
        ("harbor lights lycoris, a pier at night", "lights-lyco"),
        # a name run into its version ("harborlightsv2") is the name and the version
        ("harborlightsv2, a pier at night", "lights-lyco"),
    ],
)
def test_labels_that_run_kinds_and_versions_into_words(settings, tmp_path, request_text, expected):
    checkin = _one_model(
        settings,
        tmp_path,
        "Harbor Lights",
        [
            ("lights-loha", "pynoiseLoHa-v1.0", ["hlights"], "2023-03-01"),
            ("lights-lyco", "LyCORIS1024HarborLightsV2", ["hlights"], "2023-04-01"),
            ("lights-locon", "LoCon v1.5", ["hlights"], "2023-05-01"),
        ],
    )
    assert picked(checkin, request_text) == ("selected", expected)


def test_the_picture_in_a_trigger_does_not_overrule_the_version_asked_for(settings, tmp_path):
    """One version's trigger says "pilot"; the request asks for the newest and draws a pilot."""
    checkin = _one_model(
        settings,
        tmp_path,
        "Harbor Station Suits",
        [
            ("suits-old", "V0.5", ["in a pilot suit uniform"], "2023-03-01"),
            ("suits-new", "v0.9", ["hsofficer"], "2023-04-01"),
        ],
    )
    assert picked(checkin, "harbor station suits, newest version - a pilot crossing a hangar") == (
        "selected",
        "suits-new",
    )
    # said before the picture, the trigger's words still tell the versions apart
    assert picked(checkin, "harbor station suits, the pilot suit one - crossing a hangar") == (
        "selected",
        "suits-old",
    )


@pytest.mark.parametrize(
    "request_text, expected",
    [
        # "45" of "kpx45" is in a maker's name too; the card called by the whole word is the one meant
        ("kpx45 in a rainy back street", "kpx45"),
        # "brisa" made two models, and one is called Brisa: a bare name is the model's, not its maker's
        ("brisa lighting a torch deep underground", "brisa-char"),
        # said with what the maker made, the maker's name still picks among their models
        ("brisa's sleepy angels, a girl on a cloud", "angels"),
    ],
)
def test_a_word_found_whole_in_a_name_beats_a_piece_of_it_or_a_maker_of_that_name(
    settings, tmp_path, request_text, expected
):
    cards = [
        dict(card_id="kpx45", name="Frontline Girls - kpx45", creator="lax"),
        dict(card_id="chloe", name="Chloe Ember", creator="darkshadow_45"),
        dict(card_id="brisa-char", name="Brisa / Wind Tales", creator="h_mado"),
        dict(card_id="angels", name="Sleepy Angels Concept", creator="brisa"),
        dict(card_id="halos", name="Halo Rings Concept", creator="brisa"),
    ]
    checkin = checkin_among_many(settings, tmp_path / "cards", cards)
    assert picked(checkin, request_text) == ("selected", expected)


def test_a_name_spelled_whole_beats_another_models_near_spelling_of_it(settings, tmp_path):
    cards = [
        dict(card_id="dark-harbor", name="Dark harbor", version="v2.0", tags=["background"]),
        dict(card_id="darkest", name="Darkest Harbor style - LORA", tags=["darkest harbor", "style", "lora"]),
        # one character by two creators, both with every word, stays a question
        dict(card_id="mercury-a", name="Sailor Vesta / Moon Tales", tags=["character"]),
        dict(card_id="mercury-b", name="Sailor Vesta | セーラーベスタ", tags=["character"]),
    ]
    # "dark" is a common word, "darkest" a rare one: its near spelling would outweigh the name spelled out
    cards += [dict(card_id=f"dark-{w}", name=f"Dark {w} Style") for w in "moor fen glen cove vale dell crag".split()]
    checkin = checkin_among_many(settings, tmp_path / "cards", cards)
    assert picked(checkin, "dark harbor lora, a lighthouse keeper holding a torch") == ("selected", "dark-harbor")
    assert picked(checkin, "sailor vesta studying in a library")[0] == "clarify"


def test_a_name_spelled_with_a_typo_is_spelled_and_its_words_scattered_are_not(settings, tmp_path):
    """ "star mothlnig" spells "Star Mothling" with a typo; a card with "star" and "mothling" here and there in its
    trigger list and tags does not spell it (reasoning then keeps it out beside the name spelled)."""
    cards = [
        dict(card_id="star-moth", name="Star Mothling", tags=["character"]),
        dict(
            card_id="quintet",
            name="The Quintet - All Five Sisters: Ichi, Nina, Mika, Yotsu, Itsu",
            triggers=["ichi, short hair, star hair ornament", "mika, long hair, ribbon"],
            tags=["character", "mothling wings"],
        ),
    ]
    checkin = checkin_among_many(settings, tmp_path / "cards", cards)
    intent, reference = checkin._understand("star mothlnig lora pls!! riding a unicorn", NOW)
    ranking = retrieve(checkin.cache, intent, reference)
    spelled = {r.card.id: r.spelled for r in ranking.candidates}
    assert spelled["star-moth"] and not spelled["quintet"]
    assert picked(checkin, "star mothlnig lora pls!! riding a unicorn over a castle") == ("selected", "star-moth")


def test_a_trigger_written_whole_is_that_file_and_quality_tags_name_nothing(settings, tmp_path):
    """A tag prompt pasted from the WebUI: its quality and framing tags ("masterpiece", "1girl") are the picture's,
    though tag-list triggers list them too, and a trigger written whole with hyphens ("kdr-fira-ow") is that file's,
    not three words whose initials spell another card's acronym ("KFO")."""
    cards = [
        dict(card_id="fira", name="KDR Fira (Overwatch)", triggers=["kdr-fira-ow"], tags=["character"]),
        dict(card_id="lina", name="Lina of the Glade", triggers=["linaglade"], tags=["character"]),
        dict(card_id="fira-lw", name="Fira from Lantern Wars", triggers=["fira_lw_v1"], tags=["character"]),
        dict(card_id="kiri", name="Kiri (ow)", triggers=["kiri"], tags=["character"]),
        *[dict(card_id=f"kdr-{w}", name=f"KDR Style {w}", triggers=[f"kdr-{w}"]) for w in ("neon", "mist", "ash")],
        # the titles of a series written by its initials, the cards' tag lists opening with quality tags
        *[
            dict(
                card_id=f"kfo-{who}",
                name=f"{who.title()} (Kingdom Fell Over) KFO",
                triggers=[f"masterpiece, best quality, 1girl, {who}"],
                tags=["character"],
            )
            for who in ("ayla", "brin", "cora")
        ],
    ]
    checkin = checkin_among_many(settings, tmp_path / "cards", cards)
    request = "kdr-fira-ow, cowboy hat, desert saloon at noon"
    ranking = retrieve(checkin.cache, *checkin._understand(request, NOW))
    assert all(r.coverage < 0.5 for r in ranking.candidates if r.card.id.startswith("kfo"))
    assert picked(checkin, request) == ("selected", "fira")
    result = checkin.ask("(masterpiece:1.2), best quality, 1girl, linaglade, colosseum, sword, sunset", NOW)
    assert (result.status, result.checkpoint_id) == ("selected", "lina")
    assert result.prompt == "(masterpiece:1.2), best quality, 1girl, linaglade, colosseum, sword, sunset"


def test_a_link_to_a_models_page_names_that_model_and_its_version(settings, tmp_path):
    cards = [
        dict(card_id="civitai-501", name="Quill Fashion v1.0", version="v1.0", family="civitai-77-quill-fashion"),
        dict(card_id="civitai-502", name="Quill Fashion v2.0", version="v2.0", family="civitai-77-quill-fashion"),
        dict(card_id="civitai-601", name="Frost - Tale of Ice - Character LORA", family="civitai-88-frost-tale"),
    ]
    checkin = checkin_among_many(settings, tmp_path / "cards", cards)
    # the version the link says, or a question between the model's versions when it says none
    link = "https://civitai.com/models/77/quill-fashion?modelVersionId=501"
    assert picked(checkin, f"{link} a bard playing a lute") == ("selected", "civitai-501")
    assert picked(checkin, "civitai.com/models/77 a bard playing a lute")[0] == "clarify"
    result = checkin.ask("civitai.com/models/88/frost-tale sipping tea on a glacier", NOW)
    assert (result.status, result.checkpoint_id) == ("selected", "civitai-601")
    assert "civitai" not in result.prompt and "sipping tea on a glacier" in result.prompt
    # a model the repository lacks is an honest no match
    assert picked(checkin, "https://civitai.com/models/99 a cat")[0] == "no_match"


def test_a_word_a_card_is_called_by_is_not_another_titles_initials(settings, tmp_path):
    # "Sable Arcs Night Stories" has the initials "sans"; "Sans" is another card's whole name
    cards = [
        dict(card_id="sans", name="Sans (Undertale) LoRA", triggers=["sans"], tags=["character"]),
        dict(card_id="megu", name="Megu 5 in one (sable arcs night stories)", tags=["character"]),
    ]
    checkin = checkin_among_many(settings, tmp_path / "cards", cards)
    assert picked(checkin, "sans pls") == ("selected", "sans")


def test_an_answer_that_says_a_base_number_picks_the_twin_for_that_base(settings, tmp_path):
    """One creator's style for two bases, the SD 2.1 one named so: "the 1.5 one" is the base, as no label says it;
    "v1.5" is a version and stays one."""
    twins = checkin_among_many(
        settings,
        tmp_path / "cards",
        [
            dict(card_id="tundra", name="Tundra Style", version="V1.0", base_model="SD 1.5", creator="frostwright"),
            dict(
                card_id="tundra-2",
                name="Tundra Style SD 2.1",
                version="V1.0",
                base_model="SD 2.1 768",
                creator="frostwright",
            ),
        ],
    )
    first = twins.ask("tundra style by frostwright, a cabin in a blizzard", NOW)
    assert first.status == "clarify"
    assert twins.answer(first.session, "the 1.5 one").checkpoint_id == "tundra"
    assert picked(twins, "tundra style v1.5, a cabin in a blizzard")[0] == "no_match"


def test_the_one_without_a_thing_is_the_one_that_says_so_and_a_kind_ruled_out_rules_out(settings, tmp_path):
    """ "the one without the hat" is the model that says "[No Hat]", not every model that has no "hat"; "not the
    embedding" when every candidate is one is no match; "fresh" in the picture is no recency word."""
    among = checkin_among_many(
        settings,
        tmp_path / "cards",
        [
            dict(card_id="wren-ti", name="Wren Ashby - TI", kind="textual_inversion", triggers=["emb_wren"]),
            dict(
                card_id="wren-nohat",
                name="Wren Ashby [No Hat] - TI",
                kind="textual_inversion",
                triggers=["emb_wren-no-hat"],
            ),
            dict(card_id="okra", name="Okra Tanaka TI", kind="textual_inversion", triggers=["okra-1800"]),
        ],
    )
    result = among.ask("wren ashby embedding, the one without the hat — reading on a broom", NOW)
    assert (result.status, result.checkpoint_id) == ("selected", "wren-nohat")
    assert among.ask("okra tanaka as a lora, not the embedding, on a rooftop", NOW).status == "no_match"
    result = among.ask("okra-1800 in negatives pls, red fox in fresh snow", NOW)
    assert (result.checkpoint_id, result.prompt) == ("okra", "okra-1800, red fox in fresh snow")


def test_a_name_with_a_little_word_inside_is_said_whole(settings, tmp_path):
    """ "dark and light style": the name "Dark and Light" said whole, though the request's words skip "and"; the
    prompt loses the name with the word inside it."""
    checkin = checkin_among_many(
        settings,
        tmp_path / "cards",
        [
            dict(card_id="dusk", name="Dusk and Dawn", version="v2.0", tags=["scenery"], created_at="2023-05-15"),
            dict(card_id="dawn", name="Dawn - Style", version="v1.0", tags=["style"], created_at="2023-05-20"),
            dict(card_id="glass", name="djz Dusk Glass", version="v21", tags=["style"], created_at="2023-05-02"),
        ],
    )
    result = checkin.ask("dusk and dawn style, the one from may: a lone knight on a bridge", NOW)
    assert (result.status, result.checkpoint_id) == ("selected", "dusk")
    assert result.prompt == "a lone knight on a bridge"


def test_please_in_another_language_is_no_name(settings, tmp_path):
    """ "лору qxz пожалуйста": the name is "qxz", which three models share, not "qxz пожалуйста", which none has."""
    checkin = checkin_among_many(
        settings,
        tmp_path / "cards",
        [
            dict(card_id="qxz-elf", name="QXZ Nightfolk [ Warcraft ]", tags=["character"]),
            dict(card_id="qxz-orc", name="QXZ Orcs [ Warcraft ]", tags=["character"]),
            dict(card_id="qxz-troll", name="QXZ Trolls [ Warcraft ]", tags=["character"]),
        ],
    )
    for please in ("пожалуйста", "bitte", "proszę"):
        result = checkin.ask(f"город на закате, лору qxz {please}", NOW)
        assert result.status == "clarify", please
        assert {i for o in result.options for i in o.checkpoint_ids} == {"qxz-elf", "qxz-orc", "qxz-troll"}


def test_a_base_said_is_a_base_though_a_label_spells_it(settings, tmp_path):
    """ "the sd1.5 one" is a base model even where some model's version label is "SD1.5": no file is named by it."""
    checkin = checkin_among_many(
        settings,
        tmp_path / "cards",
        [
            dict(card_id="owl-15", name="Night Owl Helper", family="owl", version="v15", base_model="SD 1.5"),
            dict(card_id="owl-21", name="Night Owl Helper", family="owl", version="v21", base_model="SD 2.1 768"),
            dict(card_id="lamp", name="Paper Lamp", version="SD1.5", base_model="SD 1.5"),
            dict(card_id="lamp-2", name="Paper Lamp", version="SD2.1", base_model="SD 2.1 768"),
        ],
    )
    result = checkin.ask("a fox girl sweeping autumn leaves. night owl helper, the sd1.5 one", NOW)
    assert (result.status, result.checkpoint_id) == ("selected", "owl-15")
    assert "sd1.5" not in result.prompt


def test_a_numbered_file_name_after_use_names_the_model_and_leaves_the_prompt(settings, tmp_path):
    """ "use no.505 fallen_down": "No." numbers the name (no negation), and the words an underscore joins leave the
    prompt whole, the trigger standing in."""
    checkin = checkin_among_many(
        settings,
        tmp_path / "cards",
        [
            dict(card_id="fall", name="No.505 pose fallen_down", tags=["pose"], triggers=["fallen down"]),
            dict(card_id="girls", name="Academy Girlpack", tags=["character"], triggers=["school girl"]),
        ],
    )
    for request_text in (
        "girl tripped on the school stairs, use no.505 fallen_down",
        "girl tripped on the school stairs, use fallen_down",
    ):
        result = checkin.ask(request_text, NOW)
        assert (result.status, result.checkpoint_id) == ("selected", "fall")
        assert result.prompt == "a girl tripped on the school stairs, fallen down"


def test_model_before_what_it_is_a_model_of_is_a_word_of_the_name(settings, tmp_path):
    checkin = checkin_among_many(
        settings,
        tmp_path / "cards",
        [
            dict(card_id="kit", name="Girl model kit | Concept", tags=["concept"], triggers=["girl-model-kit"]),
            *(
                dict(card_id=f"pack-{n}", name=f"{n} Academy - Girl pack", tags=["character"], triggers=["girl"])
                for n in ("Harbor", "Castle", "River", "Forest")
            ),
            dict(card_id="konkit", name="KON-KIT STYLE", tags=["style"], triggers=["konkit"]),
        ],
    )
    result = checkin.ask("girl model kit lora pls: a knight figure on a shelf next to her box art", NOW)
    assert (result.status, result.checkpoint_id) == ("selected", "kit")


def test_a_series_said_with_its_subtitle_and_a_relative_ruled_out(settings, tmp_path):
    """ "lana from pokemon sun n moon (not her mom)": "Pokemon - Lana" has the series without its subtitle, and "her
    mom" rules out "Lana's mom"."""
    checkin = checkin_among_many(
        settings,
        tmp_path / "cards",
        [
            dict(card_id="lana", name="Pokemon - Lana", tags=["character", "pokemon"]),
            dict(card_id="mom", name="Lana's mom (Pokemon)", tags=["character", "pokemon"]),
            dict(card_id="staff", name="Aether Employee - Pokemon Sun and Moon", tags=["character"]),
        ],
    )
    result = checkin.ask("lana from pokemon sun n moon (not her mom) fishing off a pier", NOW)
    assert (result.status, result.checkpoint_id) == ("selected", "lana")
    # a name no card has from that series is still none
    assert checkin.ask("mallow from pokemon sun n moon fishing off a pier", NOW).status == "no_match"


def test_a_dash_left_before_a_cut_sentence_leaves_no_mark_behind(settings, tmp_path):
    checkin = checkin_among_many(
        settings,
        tmp_path / "cards",
        [
            dict(card_id="ash", name="Ashlyn Grove - Dread Village", version="v2", triggers=["ashlyn"]),
            dict(card_id="ash-new", name="Ashlyn Grove - Dread Village Remake", version="v2", triggers=["ashlyn"]),
        ],
    )
    result = checkin.ask("ashlyn grove from dread village, not the remake — v2 please. running through a village", NOW)
    assert result.prompt == "ashlyn. running through a village"


def test_of_two_clauses_cards_spell_the_one_a_single_model_spells_names_it(settings, tmp_path):
    """ "..., negative helper: dangercrowe": three negative helpers spell "negative helper", one model spells
    "dangercrowe"; a request that opens with a name keeps it ("snufkim fishing ..., autumn, soft wash")."""
    helpers = [
        dict(card_id=f"neg-{n}", name=f"Bad {n} Negative Helper", kind="textual_inversion", tags=["negative"])
        for n in ("hands", "eyes", "feet")
    ]
    checkin = checkin_among_many(
        settings,
        tmp_path / "cards",
        [
            *helpers,
            dict(card_id="crow", name="Danger Crowe Helper", kind="textual_inversion", triggers=["dangercrowe"]),
            dict(card_id="snuf-1", name="Snufkim | Moomin", triggers=["snufkim"]),
            dict(card_id="snuf-2", name="Snufkim (Moomin valley)", triggers=["snufkim"]),
            *(dict(card_id=f"autumn-{n}", name=f"Autumn {n}", tags=["autumn"]) for n in ("leaves", "forest", "glow")),
            dict(card_id="wash", name="Soft Wash Watercolor", tags=["style"], triggers=["soft wash"]),
        ],
    )
    result = checkin.ask("fox girl shrine maiden sweeping autumn leaves. negative helper: dangercrowe", NOW)
    assert (result.status, result.checkpoint_id) == ("selected", "crow")
    assert checkin.ask("snufkim fishing off a wooden bridge, autumn, soft wash", NOW).status == "clarify"


def test_a_common_word_owns_no_model(settings, tmp_path):
    """ "the station's observation deck" is a place, though a card is named after a station; "vegor's turtle
    school uniform" is still Vegor's."""
    checkin = checkin_among_many(
        settings,
        tmp_path / "cards",
        [
            dict(card_id="asta", name="honkai star rail asta/アスター", tags=["character"], triggers=["asta"]),
            dict(card_id="deck", name="Observation Deck | Herta Space Station", tags=["background"]),
            dict(card_id="vegor", name="Vegor Turtle School Uniform", tags=["clothing"], triggers=["vegor gi"]),
        ],
    )
    result = checkin.ask(
        "asta from star rail, the head researcher of herta space station, giving a tour of the station's deck",
        NOW,
    )
    assert (result.status, result.checkpoint_id) == ("selected", "asta")
    assert picked(checkin, "old man fishing by a lake wearing vegor's turtle school uniform") == ("selected", "vegor")


def test_a_character_called_by_a_common_word_from_a_series_said_by_its_initials(settings, tmp_path):
    """ "queen from qow": "qow" is the initials of "The Queen of Wolves" without its article, and "Queen" is one
    card's own title while every card of the series has "queen" inside the series' name; a version label after the
    series is the character's ("v3": she has none)."""
    series = "The Queen of Wolves"
    checkin = checkin_among_many(
        settings,
        tmp_path / "cards",
        [
            dict(card_id="queen", name=f"Queen ({series}) LoRA", tags=["character", series.lower()], version="v1"),
            *(
                dict(card_id=n.lower(), name=f"{n} ({series}) LoRA", tags=["character", series.lower()], version="v1")
                for n in ("Marrow", "Tessaly", "Brightfang")
            ),
            dict(card_id="queen-style", name="Queen Card Style", tags=["style"]),
        ],
    )
    for request in (
        "queen from qow polishing glasses behind a bar",
        "queen from the queen of wolves polishing glasses",
    ):
        assert picked(checkin, request) == ("selected", "queen"), request
    assert picked(checkin, "marrow from qow v1 on a frozen lake") == ("selected", "marrow")
    assert checkin.ask("marrow from qow v3 on a frozen lake", NOW).status == "no_match"


def test_words_meet_with_other_endings_and_what_lit_the_picture_made_no_model(settings, tmp_path):
    """ "the fixed upload" is the version labelled "(Fix)", "dithered" the tag "dithering"; "lit by amber flames" is
    the picture though "amber" is a creator's handle."""
    checkin = checkin_among_many(
        settings,
        tmp_path / "cards",
        [
            dict(card_id="serv-fix", name="Corvina Landau", family="corv", version="v1.0 (Fix)", triggers=["corvina"]),
            dict(card_id="serv", name="Corvina Landau", family="corv", version="v1.0", triggers=["corvina"]),
            dict(card_id="pixel", name="Old Handheld Games", tags=["style", "dithering", "pixel"], triggers=["olhg"]),
            dict(card_id="eresh", name="Ereshkal | Grand Tales", tags=["character"], triggers=["ereshkal"]),
            dict(card_id="amber-style", name="Glow Style", creator="amber", tags=["style"], triggers=["glowst"]),
        ],
    )
    assert picked(checkin, "corvina landau, the fixed upload, playing guitar on a stage") == ("selected", "serv-fix")
    assert picked(checkin, "that dithered pixel lora, a girl on a train platform") == ("selected", "pixel")
    assert picked(checkin, "ereshkal floating above a river lit by amber flames") == ("selected", "eresh")


def test_a_packs_trigger_is_the_one_for_the_character_asked(settings, tmp_path):
    checkin = checkin_among_many(
        settings,
        tmp_path / "cards",
        [
            dict(
                card_id="pack",
                name="Harbor Girls - Wave Tales",
                tags=["character"],
                triggers=["mina (wave tales)", "rika (wave tales)", "sora (wave tales)"],
            ),
            dict(card_id="penny", name="Pennet", tags=["character"], triggers=["pennet", "black hoodie"]),
        ],
    )
    assert (
        checkin.ask("rika from wave tales fishing off a pier", NOW).prompt == "a rika (wave tales) fishing off a pier"
    )
    # a character's name and the outfit tags it lists: the name, whatever the picture says
    assert (
        checkin.ask("pennet hunched over a desk in her hoodie", NOW).prompt
        == "a pennet hunched over a desk in her hoodie"
    )
