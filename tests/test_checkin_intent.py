import datetime as dt

import pytest

from personalq.checkin.intent import parse_intent, prompt_text

NOW = dt.datetime(2026, 11, 22, 12, 0)


def parse(text, qualifiers=frozenset({"pruned", "offset"})):
    return parse_intent(text, NOW, qualifiers)


@pytest.mark.parametrize(
    "text, subject",
    [
        ("my kitty", "cat"),
        ("the plushie", "toy"),
        ("two puppies", "dog"),
        ("my sneakers", "shoe"),
        ("a doggo in the rain", "dog"),
        ("ponies", "horse"),
    ],
)
def test_subject_synonyms_and_plurals(text, subject):
    assert parse(text).subjects == [subject]


@pytest.mark.parametrize(
    "text, style",
    [
        ("a realistic bear", "photo"),
        ("anime girl", "anime"),
        ("pencil sketch of a cat", "sketch"),
        ("watercolour house", "watercolor"),
        ("8-bit car", "pixel"),
        ("oil painting of a tree", "oil painting"),
    ],
)
def test_styles(text, style):
    assert style in parse(text).styles


def _labels(windows):
    return [w.label for w in windows]


def test_months_with_and_without_year():
    assert _labels(parse("the April 2025 dog").created) == ["April 2025"]
    april = parse("the April dog model").created
    assert "April 2025" in _labels(april) and "April 2026" in _labels(april)
    assert all(w.start <= NOW for w in april)
    assert _labels(parse("apr '25 car").created) == ["April 2025"]


def test_may_and_march_are_months_only_in_date_context():
    assert parse("May I have a dog").created == []
    assert parse("the May model").created
    assert parse("a march of penguins").created == []
    # a month's short form is often a name: "girls' frontline aug" is a rifle's character, "the aug one" a month
    assert parse("girls' frontline aug in mecha armor").created == []
    assert parse("the aug one").created and parse("my lora from oct").created


def test_a_season_that_describes_the_scene_is_no_date():
    assert parse("a winter forest with my inkwolf lora").created == []
    assert parse("a girl at a summer festival").created == []
    assert parse("my winter lora").created
    assert parse("the dog model from last winter").created
    assert parse("the one I trained in summer").created
    # a bare season in a clause of its own, or before a place, is when the picture happens
    assert parse("a girl at a diner with a huge coffee, autumn in a small town").created == []
    assert parse("a boy fishing off a wooden bridge, autumn, soft watercolor").created == []
    assert parse("a frost mage freezing a waterfall mid-fall").created == []
    assert parse("the summer one, a boy fishing").created


def test_relative_windows():
    yesterday = parse("the dog from yesterday").created[0]
    assert (yesterday.start, yesterday.end) == (dt.datetime(2026, 11, 21), dt.datetime(2026, 11, 22))
    last_week = parse("last week's cat").created[0]
    assert last_week.start == dt.datetime(2026, 11, 9) and last_week.end == dt.datetime(2026, 11, 16)
    assert _labels(parse("made 3 days ago").created) == ["3 days ago"]
    assert parse("the 2024 dog").created[0].start == dt.datetime(2024, 1, 1)


def test_explicit_dates_ranges_and_seasons():
    assert _labels(parse("my cat from 2025-04-11").created) == ["April 11, 2025"]
    assert _labels(parse("April 11th, 2025 dog").created) == ["April 11, 2025"]
    between = parse("anime between March and May 2025").created
    assert (
        len(between) == 1 and between[0].start == dt.datetime(2025, 3, 1) and between[0].end == dt.datetime(2025, 6, 1)
    )
    spring = parse("spring 2025 sketch").created
    assert _labels(spring) == ["spring 2025"] and spring[0].end == dt.datetime(2025, 6, 1)
    winter = parse("winter 2025 tree").created[0]
    assert winter.start == dt.datetime(2024, 12, 1) and winter.end == dt.datetime(2025, 3, 1)


def test_months_and_order_words_in_the_languages_requests_come_in():
    """Month names come from dateparser's locale data ("giugno", "junho", "octubre"); a short form or a name that is
    also a month elsewhere ("mai", "juli") stays a word."""
    june = parse("ryne, la versione di giugno, in piedi su un lago").created
    assert june and {w.start.month for w in june} == {6}
    assert {w.start.month for w in parse("o lora de junho").created} == {6}
    assert {w.start.month for w in parse("el lora de octubre, en la playa").created} == {10}
    assert parse("mai shiranui at the beach").created == []
    assert parse("bonney, usa a versão mais nova, comendo pizza").order == "newest"
    assert parse("la versione più nuova, una ragazza").order == "newest"


def test_recency_and_order():
    assert parse("my latest anime sketch").order == "newest"
    assert parse("the newest dog").order == "newest"
    assert parse("the oldest cat").order == "oldest"
    assert parse("the latest version of my bear").version_order == "newest"


@pytest.mark.parametrize(
    "text, number, qualifiers",
    [
        ("v2 sketch model", 2.0, []),
        ("version 3", 3.0, []),
        ("v1.3 dim16 bear", 1.3, ["dim16"]),
        ("epoch 4 of my plushie", 4.0, []),
        ("the second version of my cat", 2.0, []),
        ("the pruned one", None, ["pruned"]),
    ],
)
def test_version_references(text, number, qualifiers):
    intent = parse(text)
    assert intent.version == number
    assert intent.version_qualifiers == qualifiers


def test_usage_goes_to_last_used():
    intent = parse("the one I used yesterday")
    assert intent.created == [] and _labels(intent.used) == ["yesterday"]
    assert parse("the dog I last used").used_order


def test_negations():
    assert parse("not the anime one, my kitty").excluded == ["anime"]
    assert parse("my bear but not the offset").excluded == ["offset"]
    assert "anime" not in parse("not the anime one, my kitty").styles


def test_prompt_keeps_the_image_and_drops_the_selection():
    assert prompt_text(parse("the April dog model on a beach")) == "a dog on a beach"
    assert (
        prompt_text(parse("generate my cat created in spring 2025 sleeping on a sofa")) == "a cat sleeping on a sofa"
    )
    assert prompt_text(parse("epoch 4 of my plushie")) == "a plushie"
    assert prompt_text(parse("a boat with biscuit"), [(12, 19)]) == "a boat"  # "biscuit" named the checkpoint
    assert prompt_text(parse("a car with the headlights on")) == "a car with the headlights on"  # the person's own end
    text = "frostnymph_xl on a snowy hill"  # "xl" names the card, but inside its trigger it stays
    assert prompt_text(parse(text), [(11, 13)]) == "a frostnymph_xl on a snowy hill"
    assert prompt_text(parse("my latest anime sketch")) == "anime sketch"
    # where the person keeps the models is no part of the picture, but a LoRA of a library is a model's name
    assert prompt_text(parse("my latest cat in my collection on a sofa")) == "a cat on a sofa"
    assert prompt_text(parse("a girl in my library lora")) == "a girl in my library"


def test_early_mid_and_late_narrow_a_month_to_a_third():
    late = parse("KomoriKei artist style, the one from late june 2025").created
    assert _labels(late) == ["late June 2025"] and (late[0].start, late[0].end) == (
        dt.datetime(2025, 6, 21),
        dt.datetime(2025, 7, 1),
    )
    early = parse("my dog lora from early-March").created
    assert early and all((w.start.day, w.end.day) == (1, 11) and w.start.month == 3 for w in early)
    mid = parse("the mid april cat").created
    assert mid and all((w.start.day, w.end.day) == (11, 21) for w in mid)
    assert "late" not in parse("the one from late june").subjects  # the word is read as part of the date


def test_a_year_still_to_come_is_part_of_a_name():
    assert parse("blade runner 2049 style, a lone figure in orange fog").created == []
    assert parse("cyberpunk 2077 lora, a street at night").created == []
    assert _labels(parse("the 2025 dog").created) == ["2025"]


def test_a_month_of_last_year_or_the_last_one_is_one_month():
    assert _labels(parse("the embedding i got in october last year, a pumpkin patch").created) == ["October 2025"]
    assert _labels(parse("my dog from march this year").created) == ["March 2026"]
    assert _labels(parse("the cat lora from last april").created) == ["April 2026"]  # NOW is November 2026
    assert _labels(parse("the cat lora from last november").created) == ["November 2025"]  # this month's is not over
    assert _labels(parse("late june last year").created) == ["late June 2025"]
