"""Several checkpoints in one image, chosen by Check-in: a character with a style, a subject with a background, each
at the strength the request says, every trigger in the prompt once; one ambiguous part asks about that part only;
scene words never add a checkpoint; bases that cannot mix are refused with both named."""

import datetime as dt

import pytest
from factories import checkin_among_many, chosen_ids, versions_by_date, write_card

from personalq.checkin.agent import CheckIn, InvalidRequest
from personalq.checkin.composition import marked_parts
from personalq.repository.service import Repository

NOW = dt.datetime(2024, 3, 1, 12)
# id, name, family, version, kind, base, triggers, tags, created
CARDS = [
    ("lyra", "Lyra Venn", "lyra", "v1", "lora", "SD 1.5", ["lyravenn"], ["character"], "2023-05-02"),
    ("inkwash", "Ink Wash Style", "inkwash", "v1", "lora", "SD 1.5", ["inkwash style"], ["style"], "2023-05-03"),
    ("neon-1", "Neon City Background", "neon", "v1", "lora", "SD 1.5", ["neoncity"], ["background"], "2023-01-03"),
    ("neon-2", "Neon City Background", "neon", "v2", "lora", "SD 1.5", ["neoncity"], ["background"], "2023-06-03"),
    ("window", "Window Light", "window", "v1", "lora", "SD 1.5", ["winlight"], ["concept"], "2023-03-01"),
    ("orin", "Orin Hale", "orin", "v1", "lora", "SDXL 1.0", ["orinhale"], ["character"], "2023-05-04"),
    ("grain", "Film Grain Detail", "grain", "v1", "lora", "SD 1.5", ["filmgrain"], ["detail"], "2023-05-05"),
    ("mira-db", "Mira DreamBooth", "mira", "v1", "dreambooth", "SD 1.5", ["sks mira"], ["character"], "2023-05-06"),
    ("tess-db", "Tess DreamBooth", "tess", "v1", "dreambooth", "SD 1.5", ["sks tess"], ["character"], "2023-05-07"),
    # a textual inversion whose version label holds the words of its name ("Style" + "Amber Haze")
    ("amber", "Style Amber Haze", "amber", "Amber Haze", "textual_inversion", "SD 1.5", ["amberhz"], [], "2023-05-08"),
    ("maid", "Velvet Maid Dress", "maid", "v1", "lora", "SD 1.5", ["velvetmaid"], ["clothing"], "2023-05-09"),
    ("soft", "Soft Window Lighting", "soft", "v1", "lora", "SD 1.5", ["softwl"], ["lighting"], "2023-05-10"),
    ("moss", "MossPunkAI", "moss", "v1.0", "lora", "SD 1.5", ["MossPunkAI"], ["style"], "2023-05-11"),
]


@pytest.fixture
def checkin(settings, tmp_path):
    for cid, name, family, version, kind, base, triggers, tags, created in CARDS:
        write_card(
            tmp_path / "cards",
            cid,
            name=name,
            family=family,
            version=version,
            kind=kind,
            base_model=base,
            triggers=triggers,
            tags=tags,
            subjects=[],
            styles=[],
            created_at=created,
            creator="someone",
        )
    repository = Repository(settings)
    assert repository.import_paths([tmp_path / "cards"]).ok
    return CheckIn(repository)


def _set(result) -> list[tuple[str, float]]:
    return [(c.checkpoint_id, c.weight) for c in result.checkpoints]


def test_a_character_in_a_style_lora_selects_both_with_each_trigger_once(checkin):
    result = checkin.ask("lyra venn in my ink wash style lora, reading in a library", NOW)
    assert result.status == "selected"
    assert _set(result) == [("lyra", 1.0), ("inkwash", 1.0)]
    assert [c.role for c in result.checkpoints] == ["subject", "style"]
    assert result.checkpoint_id == "lyra"
    assert result.prompt == "lyravenn, inkwash style, reading in a library"


def test_weights_come_from_the_request_and_leave_the_prompt(checkin):
    result = checkin.ask("the lyra venn lora with the ink wash lora at 0.6, walking in the rain", NOW)
    assert _set(result) == [("lyra", 1.0), ("inkwash", 0.6)]
    assert result.prompt == "lyravenn, inkwash style, walking in the rain"
    result = checkin.ask("lyra venn lora at 70% and a little of the film grain lora, portrait at dusk", NOW)
    assert _set(result) == [("lyra", 0.7), ("grain", 0.5)]
    assert "70" not in result.prompt and "little" not in result.prompt


def test_strengths_said_in_other_languages_or_after_a_name_of_several_words(checkin):
    result = checkin.ask("lyra venn mit Gewicht 0,9 beim Lesen, dazu die ink wash lora auf 0,5", NOW)
    assert _set(result) == [("lyra", 0.9), ("inkwash", 0.5)]
    assert "0,9" not in result.prompt and "0,5" not in result.prompt and "Gewicht" not in result.prompt
    # a weight after a name of several words is the whole name's, not its last word's
    result = checkin.ask("lyra venn:0.8, film grain detail:0.55, reading in a library", NOW)
    assert _set(result) == [("lyra", 0.8), ("grain", 0.55)]
    assert result.prompt == "lyravenn, filmgrain, reading in a library"
    result = checkin.ask("lyra venn, reading in a library, ink wash style:.45", NOW)
    assert _set(result) == [("lyra", 1.0), ("inkwash", 0.45)]
    assert result.prompt == "lyravenn, reading in a library, inkwash style"


def test_webui_network_tags_name_the_set_and_a_negative_prompt_is_split_off(checkin):
    result = checkin.ask(
        "<lora:lyra_venn:0.8> <lora:ink_wash_style:0.45> a girl by a lake, negative: blurry, lowres", NOW
    )
    assert _set(result) == [("lyra", 0.8), ("inkwash", 0.45)]
    assert result.negative_prompt == "blurry, lowres"
    assert result.prompt == "lyravenn, a girl by a lake, in inkwash style"
    assert result.contract()["checkpoints"] == [
        {"checkpoint_id": "lyra", "weight": 0.8, "role": "subject"},
        {"checkpoint_id": "inkwash", "weight": 0.45, "role": "style"},
    ]


def test_one_ambiguous_part_asks_about_that_part_only(checkin):
    result = checkin.ask("lyra venn with the neon city background lora, at night", NOW)
    assert result.status == "clarify"
    assert result.question.startswith("For neon city background:")
    assert {i for o in result.options for i in o.checkpoint_ids} == {"neon-1", "neon-2"}
    after = checkin.answer(result.session, "v2")
    assert after.status == "selected"
    assert _set(after) == [("lyra", 1.0), ("neon-2", 1.0)]
    assert after.prompt == "lyravenn, neoncity, at night"


def test_scene_words_never_add_a_checkpoint(checkin):
    result = checkin.ask("lyra venn standing by a window in soft light", NOW)
    assert _set(result) == [("lyra", 1.0)]
    result = checkin.ask("a city street in ink wash style", NOW)  # a style said, no model named beside it
    assert [c.checkpoint_id for c in result.checkpoints] == ["inkwash"]


def test_a_style_word_inside_a_compound_or_a_place_before_a_noun_adds_no_checkpoint(settings, tmp_path):
    """ "a western-style mansion" says what the mansion is like, not "western style"; "mondhaven harbor" is a harbor of
    the picture, though a landscapes LoRA is trained on "mondhaven"."""
    cards = [
        dict(card_id="ayla", name="Ayla Thorne", tags=["character"], triggers=["aylathorne"]),
        dict(card_id="western", name="Western Ink LoRa", tags=["style"], triggers=["western ink"]),
        dict(card_id="comics", name="Western Comics Style", tags=["style"], triggers=["westcomic"]),
        dict(card_id="lands", name="Realm Landscapes", tags=["background"], triggers=["mondhaven", "sunreach"]),
    ]
    checkin = checkin_among_many(settings, tmp_path / "cards", cards)
    result = checkin.ask("ayla thorne lora, pouring tea in a western-style mansion", NOW)
    assert (_set(result), result.prompt) == ([("ayla", 1.0)], "aylathorne, pouring tea in a western-style mansion")
    assert chosen_ids(checkin, "ayla thorne lora, holding a lantern, mondhaven harbor at dusk", NOW) == ["ayla"]


def test_checkpoints_of_different_bases_are_refused_with_both_named(checkin):
    result = checkin.ask("lyra venn lora with the orin hale lora, on a bridge", NOW)
    assert result.status == "no_match"
    assert "Lyra Venn" in result.reason and "Orin Hale" in result.reason and "bases" in result.reason
    assert {a.checkpoint_id for a in result.alternatives} == {"lyra", "orin"}


def test_two_full_models_are_refused(checkin):
    result = checkin.ask("the mira dreambooth model and the tess dreambooth model, two friends at a cafe", NOW)
    assert result.status == "no_match" and "both full models" in result.reason


def test_a_named_model_the_repository_lacks_is_an_honest_no_match(checkin):
    result = checkin.ask("lyra venn lora with my watercolor lora, in a garden", NOW)
    assert result.status == "no_match" and "watercolor" in result.reason


def test_a_negative_prompt_alone_is_no_request(checkin):
    with pytest.raises(InvalidRequest):
        checkin.ask("negative: blurry", NOW)


def test_each_webui_tag_is_found_on_its_own(checkin):
    result = checkin.ask("<lora:lyra_venn:0.7> <lora:film_grain_detail:0.3>, a portrait at dusk", NOW)
    assert _set(result) == [("lyra", 0.7), ("grain", 0.3)]
    assert result.prompt == "lyravenn, filmgrain, a portrait at dusk"
    result = checkin.ask("<lora:lyra_venn:0.7> <lora:quokka_zzz:0.3>, a portrait at dusk", NOW)
    assert result.status == "no_match" and "quokka zzz" in result.reason


def test_strengths_are_read_where_they_are_said():
    from personalq.checkin.strength import read_strengths

    def weights(text):
        return [s.weight for s in read_strengths(text)]

    assert weights("the ink lora at 0.6, in a park") == [0.6]
    assert weights("style at 70%, weight 0.8, 0.5 strength") == [0.7, 0.8, 0.5]
    assert weights("crystal skull lora 0.8 and the backlighting lora .5") == [0.8, 0.5]
    assert weights("lihua cat lora 0.75, hairdetailer 0.4, a cat napping") == [0.75, 0.4]
    assert weights("set the detail lora to 0.3") == [0.3]
    assert [s.forward for s in read_strengths("a little of the grain lora")] == [True]
    assert weights("at half strength") == [0.5]
    assert weights("bubble drip at about 60 percent, leaping") == [0.6]
    # times, counts, versions and sizes are no strengths
    assert weights("at 3 pm, at 1, neon lora 1.5, v0.6, a 0.5m cat, go to 3 places") == []
    # as other languages say it: their "at" and "weight", a decimal comma, percent in words
    assert weights("lyra mit Gewicht 0,9, dazu die ink lora auf 0,5") == [0.9, 0.5]
    assert weights("stile fluffy al 50%, l'artoria all'80%, à 0,5, con peso 0,7") == [0.5, 0.8, 0.5, 0.7]
    assert weights("at seventy percent, at forty-five per cent, al 60 por ciento") == [0.7, 0.45, 0.6]
    assert weights("水彩风格强度0.6, 水彩lora权重0.4, スタイルを0.7で描いて, lora 강도 0.3") == [0.6, 0.4, 0.7, 0.3]
    assert weights("kishida mel style 45%, madoka (iroaK):0.85, apex legends style:.45") == [0.45, 0.85, 0.45]
    # another language's "at" before a bare number above one is the base, and a thousands comma no fraction
    assert weights("la lora entrenada en 1.5, auf 2.1, at 3,000 feet, versions 1,2 and 3") == []


def test_webui_tags_name_files_by_their_stem_or_their_folder(settings):
    """The bundled zoo's LoRAs are diffusers folders (``biscuit-v2/pytorch_lora_weights.safetensors``): a tag names
    the folder, as the WebUI names a file by its stem."""
    from pathlib import Path

    repository = Repository(settings)
    assert repository.import_paths([Path(__file__).parents[1] / "assets" / "zoo" / "repository"]).ok
    result = CheckIn(repository).ask("<lora:biscuit-v2:0.8> <lora:doodle-v3:0.5> a dog on a skateboard", NOW)
    assert _set(result) == [("biscuit-v2", 0.8), ("doodle-v3", 0.5)]
    assert result.prompt == "<doodle-v3>, a <biscuit-v2> on a skateboard"


def test_an_image_takes_at_most_five_checkpoints(checkin):
    tags = " ".join(f"<lora:model_{i}:0.5>" for i in range(40))
    with pytest.raises(InvalidRequest, match="at most 5"):
        checkin.ask(f"{tags} a portrait", NOW)


def test_the_name_a_request_opens_with_and_one_webui_tag_make_a_pair(checkin):
    result = checkin.ask("lyra venn in a long coat, <lora:ink_wash_style:0.7>, a misty harbor", NOW)
    assert _set(result) == [("lyra", 1.0), ("inkwash", 0.7)]
    # a role the request opens with names no model: "woman" is the picture
    assert _set(checkin.ask("woman reading in a cafe, <lora:ink_wash_style:0.7>", NOW)) == [("inkwash", 0.7)]


def test_a_crossover_x_and_a_bare_weight_after_a_name_list_models(checkin):
    result = checkin.ask("lyra venn x ink wash style lora, walking in the rain", NOW)
    assert _set(result) == [("lyra", 1.0), ("inkwash", 1.0)]
    assert result.prompt == "lyravenn, inkwash style, walking in the rain"
    result = checkin.ask("lyra venn, ink_wash_style:0.6, walking in the rain", NOW)
    assert _set(result) == [("lyra", 1.0), ("inkwash", 0.6)]
    assert "0.6" not in result.prompt
    assert _set(checkin.ask("lyra venn lora, weight:0.6, walking in the rain", NOW)) == [("lyra", 0.6)]


def test_a_number_said_beats_a_little_of(checkin):
    result = checkin.ask("lyra venn lora and a little bit of the film grain lora (0.3), portrait at dusk", NOW)
    assert _set(result) == [("lyra", 1.0), ("grain", 0.3)]
    assert "0.3" not in result.prompt and "(" not in result.prompt
    result = checkin.ask("lyra venn (80%) walking in the rain, ink wash style at 50 percent", NOW)
    assert _set(result) == [("lyra", 0.8), ("inkwash", 0.5)]
    assert "80" not in result.prompt and "(" not in result.prompt


def test_a_base_nobody_can_tell_refuses_no_combination(settings, tmp_path):
    """Civitai's "Other" base (a LoRA trained on an SD 1.x anime model, most often) is no evidence of a mismatch: only
    two bases both known and different are refused."""
    cards = [
        dict(card_id="kiri", name="Kiri Asahane", base_model="Other", tags=["character"], triggers=["kiriasa"]),
        dict(card_id="ink", name="Ink Wash Style", base_model="SD 1.5", tags=["style"], triggers=["inkwash style"]),
        dict(card_id="orin", name="Orin Hale", base_model="SDXL 1.0", tags=["character"], triggers=["orinhale"]),
    ]
    checkin = checkin_among_many(settings, tmp_path / "cards", cards)
    result = checkin.ask("kiri asahane in my ink wash style lora, on a pier", NOW)
    assert _set(result) == [("kiri", 1.0), ("ink", 1.0)]
    result = checkin.ask("orin hale in my ink wash style lora, on a pier", NOW)
    assert result.status == "no_match" and "different bases" in result.reason


def test_a_base_said_before_a_name_is_that_parts_and_a_bracket_ends_no_list(checkin):
    # "sdxl" is said of Orin Hale, not of Lyra Venn: the two bases cannot mix
    result = checkin.ask("lyra venn with the sdxl orin hale lora, on a rooftop", NOW)
    assert result.status == "no_match"
    assert "cannot combine checkpoints of different bases" in result.reason
    # a bracket after a name does not end the names listed with it
    result = checkin.ask("lyra venn (lyravenn) + ink wash style, walking in the rain", NOW)
    assert _set(result) == [("lyra", 1.0), ("inkwash", 1.0)]


@pytest.mark.parametrize(
    "request_text",
    [
        # a verb after who is asked asks; it is no word of the name
        "can you make lyra venn with my ink wash style lora? reading in a library",
        # a verb opening a sentence asks too
        "reading in a library at night. mix lyra venn and the ink wash style lora for this",
    ],
)
def test_the_verb_that_asks_is_no_part_of_a_name(checkin, request_text):
    assert _set(checkin.ask(request_text, NOW)) == [("lyra", 1.0), ("inkwash", 1.0)]


def test_common_words_name_a_model_when_one_is_called_by_all_of_them(checkin):
    # "amber haze" are common words, and the embedding is called by both (its version label holds them)
    result = checkin.ask("lyra venn + amber haze style, crawling out of an old tv set", NOW)
    assert _set(result) == [("lyra", 1.0), ("amber", 1.0)]


def test_what_a_character_does_to_a_marked_model_is_no_part_of_its_name(checkin):
    # "wearing the" acts on the dress: Lyra is a name of her own, the dress LoRA another
    result = checkin.ask("lyra venn wearing the velvet maid dress lora, serving tea in a parlor", NOW)
    assert _set(result) == [("lyra", 1.0), ("maid", 1.0)]


@pytest.mark.parametrize(
    "request_text, expected",
    [
        # a name given a strength is a model's, listed with "with" though no kind word is said
        (
            "lyra venn with ink wash style at about 60 percent, leaping across rooftops",
            [("lyra", 1.0), ("inkwash", 0.6)],
        ),
        ("lyra venn lora 0.75, film grain 0.4, a girl napping on a windowsill", [("lyra", 0.75), ("grain", 0.4)]),
        # a word in -ing that ends a name listed after "+" is the name's, not the picture's
        ("lyra venn + soft window lighting, close-up smiling while snow falls", [("lyra", 1.0), ("soft", 1.0)]),
    ],
)
def test_names_listed_by_a_strength_or_a_plus_are_models(checkin, request_text, expected):
    result = checkin.ask(request_text, NOW)
    assert _set(result) == expected


@pytest.mark.parametrize(
    "request_text, expected",
    [
        # a connector typed with two letters swapped still lists the names
        ("lyra venn wiht the film grain lora, reading by a window", [("lyra", 1.0), ("grain", 1.0)]),
        ("lyra venn usign ink wash style, reading by a window", [("lyra", 1.0), ("inkwash", 1.0)]),
        # a connector inside the words a kind word marks still stands between two names
        ("lyra venn plus the film grain lora, reading by a window", [("lyra", 1.0), ("grain", 1.0)]),
        # a kind word with a colon lists names as tools paste them; a name may start a card's name ("MossPunkAI")
        (
            "loras: lyra venn, mosspunk, velvet maid dress. prompt: dancing around a bonfire",
            [("lyra", 1.0), ("moss", 1.0), ("maid", 1.0)],
        ),
    ],
)
def test_lists_with_typed_connectors_or_a_label(checkin, request_text, expected):
    result = checkin.ask(request_text, NOW)
    assert _set(result) == expected
    assert "wiht" not in result.prompt and "prompt:" not in result.prompt


def test_names_given_strengths_list_on_past_the_first_clause_and_anybodys_hands_are_nobodys_model(checkin):
    result = checkin.ask("lyra venn 0.8, film grain 0.4 - posing in a rainy phone booth, holding her wand", NOW)
    assert _set(result) == [("lyra", 0.8), ("grain", 0.4)]
    assert result.prompt.endswith("posing in a rainy phone booth, holding her wand")
    # "someone's" and "a big guy's" own nothing: the hands and the hand are the picture's
    result = checkin.ask("lyra venn, film grain lora, someone's hands squishing her face, a big guy's hand", NOW)
    assert _set(result) == [("lyra", 1.0), ("grain", 1.0)]


def test_a_name_in_title_case_after_in_is_a_model_and_a_place_is_not(checkin):
    result = checkin.ask("Lyra Venn in Velvet Maid Dress, serving tea in a parlor", NOW)
    assert _set(result) == [("lyra", 1.0), ("maid", 1.0)]
    result = checkin.ask("lyra venn in a neon city at night", NOW)
    assert _set(result) == [("lyra", 1.0)]


def test_a_models_whole_name_after_the_names_it_and_a_plain_phrase_does_not(checkin):
    # "the" before a model's whole name points at the model, a kind word or not
    result = checkin.ask("lyra venn wearing the velvet maid dress, serving tea in a parlor", NOW)
    assert _set(result) == [("lyra", 1.0), ("maid", 1.0)]
    assert result.prompt == "a lyravenn wearing the velvetmaid, serving tea in a parlor"
    # the same words without the article are the picture
    assert _set(checkin.ask("lyra venn in a velvet maid dress, serving tea in a parlor", NOW)) == [("lyra", 1.0)]


def test_a_name_opening_the_prompt_after_a_webui_tag_is_another_model(checkin):
    # one tag is read where it stands; the name the rest opens with is a model of its own when a card is called so
    result = checkin.ask("<lora:Ink Wash Style:0.6> lyra venn reading by a window", NOW)
    assert sorted(_set(result)) == [("inkwash", 0.6), ("lyra", 1.0)]
    # a picture that opens with a plain noun adds nothing
    assert _set(checkin.ask("<lora:Ink Wash Style:0.6> a fox reading by a window", NOW)) == [("inkwash", 0.6)]


def test_a_name_given_as_the_background_is_a_model(checkin):
    # "as the background" marks the name before it as a kind word does; "as the background character" is the picture
    result = checkin.ask("lyra venn waving at a passing train, with neon city as the backdrop", NOW)
    assert result.status == "clarify" and result.question.startswith("For neon city:")  # its two versions
    answered = checkin.answer(result.session, "v2")
    assert _set(answered) == [("lyra", 1.0), ("neon-2", 1.0)] and "backdrop" not in answered.prompt
    assert _set(checkin.ask("lyra venn dressed as the background character in a play", NOW)) == [("lyra", 1.0)]


def test_with_before_a_file_like_or_rare_whole_name_lists_a_model(settings, tmp_path):
    cards = [
        dict(card_id="fumi", name="Fumi Arata | Build Tales", tags=["character"], triggers=["fumiarata"]),
        dict(card_id="puppet", name="Mood-Marionette-LoRA", tags=["concept"], triggers=["moodmarionette"]),
        dict(card_id="morph", name="Quartzwire - World Morph", tags=["style"], triggers=["quartzwire"]),
        dict(card_id="wings", name="Butterfly Wings", tags=["concept"], triggers=["bfwings"]),
        dict(card_id="lilo", name="Lilo Marsh", tags=["character"], triggers=["lilomarsh"]),
    ]
    checkin = checkin_among_many(settings, tmp_path / "cards", cards)

    # "w/" is "with"; a hyphen-joined name is a file's
    assert chosen_ids(checkin, "fumi arata w/ mood-marionette, furious, shouting", NOW) == ["fumi", "puppet"]
    # a whole name with a word few cards have is a model's; common words are the picture
    result = checkin.ask("fumi arata with quartzwire world morph, posing with a model kit on a workbench", NOW)
    assert sorted(c.checkpoint_id for c in result.checkpoints) == ["fumi", "morph"]
    assert "a model kit on a workbench" in result.prompt
    assert chosen_ids(checkin, "lilo marsh with butterfly wings on a beach", NOW) == ["lilo"]


def test_a_rare_whole_name_listed_as_a_clause_of_its_own_is_a_model(settings, tmp_path):
    cards = [
        dict(card_id="fumi", name="Fumi Arata | Build Tales", tags=["character"], triggers=["fumiarata"]),
        dict(card_id="quartz", name="QuartzwireAI [10MB] LoRA extraction", tags=["style"], triggers=["quartzwireai"]),
        dict(card_id="isle", name="glass-isle", tags=["background"], triggers=["glassisle"]),
        dict(card_id="smoking", name="Smoking Concept", tags=["concept"], triggers=["smoking"]),
    ]
    checkin = checkin_among_many(settings, tmp_path / "cards", cards)

    assert chosen_ids(checkin, "fumi arata, quartzwireai, standing on a frozen lake, wide shot", NOW) == [
        "fumi",
        "quartz",
    ]
    # a slash set apart lists too, and "nad" is "and" typed in haste
    assert chosen_ids(checkin, "fumi arata / glass-isle, resting in a hammock", NOW) == ["fumi", "isle"]
    assert chosen_ids(checkin, "fumi arata nad the glass-isle embedding, resting in a hammock", NOW) == [
        "fumi",
        "isle",
    ]
    # a plain word as a clause of its own is the picture
    assert chosen_ids(checkin, "fumi arata in an alley, smoking", NOW) == ["fumi"]


@pytest.mark.parametrize(
    "request_text",
    [
        "lyra venn drawn by ink wash style, reading by a window",
        "lyra venn in the manner of ink wash style, reading by a window",
        "make lyra venn look like ink wash style, reading by a window",
        "lyra venn drawn like ink wash style, reading by a window",
        "lyra venn, make her look like those ink wash style pages, reading by a window",
    ],
)
def test_a_style_said_as_a_style_is_a_model(checkin, request_text):
    # "drawn by", "in the manner of", "look like": the name after them is how to draw, a model of its own
    assert sorted(_set(checkin.ask(request_text, NOW))) == [("inkwash", 1.0), ("lyra", 1.0)]


def test_drawn_by_someone_is_the_picture(checkin):
    assert _set(checkin.ask("lyra venn drawn by a child, crayon on paper", NOW)) == [("lyra", 1.0)]


def test_a_rare_whole_name_that_ends_a_clause_is_a_model_wherever_it_stands(settings, tmp_path):
    cards = [
        dict(card_id="kanbe", name="Kanbe Kotori (Rewrite)", tags=["character"], triggers=["kotori"]),
        dict(card_id="drool", name="Drooling on sleep Lora", tags=["concept"], triggers=["drooling"]),
        dict(card_id="swire", name="Arknights-Swire", tags=["character"], triggers=["swire"]),
        dict(card_id="cyber", name="赛博世界/Cyberworld/赛博朋克场景", tags=["background"], triggers=["Cyberworld"]),
        dict(card_id="meg", name="Meg Quillon", tags=["character"], triggers=["megquillon"]),
        dict(card_id="glass", name="Broken Glass", tags=["style"], triggers=["brokenglass"]),
        dict(card_id="fingers", name="Index Fingers Together | Pose", tags=["pose"], triggers=["index fingers"]),
        dict(card_id="runes", name="Glowing Runes", tags=["style"], triggers=["glowing runes"]),
        dict(card_id="inkgerm", name="Inkgerm style Lora", tags=["style"], triggers=["inkgerm"]),
    ]
    checkin = checkin_among_many(settings, tmp_path / "cards", cards)

    # after "using", as the last words: a model; the name the request opens with is one too, its last word the
    # picture's ("asleep")
    result = checkin.ask("kanbe kotori asleep at her desk using drooling on sleep", NOW)
    assert sorted(c.checkpoint_id for c in result.checkpoints) == ["drool", "kanbe"]
    assert "asleep at her desk" in result.prompt
    # a name before a setting word ("background") is a model, one of a name's slash-parted titles
    assert chosen_ids(checkin, "swire eating noodles at a neon food stall, cyberworld background", NOW) == [
        "cyber",
        "swire",
    ]
    # where the picture is, or after "a", is the picture; a clause that marks a model names that one
    assert chosen_ids(checkin, "meg quillon standing behind broken glass", NOW) == ["meg"]
    assert chosen_ids(checkin, "meg quillon standing in a broken glass maze", NOW) == ["meg"]
    result = checkin.ask("pose lora where the character pokes her index fingers together - shy girl blushing", NOW)
    assert [c.checkpoint_id for c in result.checkpoints] == ["fingers"]
    # after "with", what the picture's subject has, in English words however rare ("runes")
    result = checkin.ask("inkgerm style. portrait of a sorceress with glowing runes", NOW)
    assert [c.checkpoint_id for c in result.checkpoints] == ["inkgerm"]
    assert result.prompt == "inkgerm. portrait of a sorceress with glowing runes"


def test_a_title_after_a_slash_is_said_as_a_name(settings, tmp_path):
    cards = [
        dict(card_id="mt", name="Mt Lady [My Hero Academia]", tags=["character"], triggers=["mtlady"]),
        dict(card_id="suit", name="Bikesuit / Biker Suit | Goofy Ai", tags=["clothing"], triggers=["latex bikesuit"]),
    ]
    checkin = checkin_among_many(settings, tmp_path / "cards", cards)

    result = checkin.ask("mt lady wearing the biker suit, leaning against a gas pump", NOW)
    assert sorted(c.checkpoint_id for c in result.checkpoints) == ["mt", "suit"]
    assert result.prompt.endswith("leaning against a gas pump")


def test_words_said_of_a_version_name_no_second_model(settings, tmp_path):
    cards = [
        dict(card_id="m7-a", name="March 7th | Star Rail", family="m7", version="face", triggers=["march7th"]),
        dict(card_id="m7-b", name="March 7th | Star Rail", family="m7", version="outfit", triggers=["march7th"]),
    ]
    checkin = checkin_among_many(settings, tmp_path / "cards", cards)

    # "march 7th" is the name it spells, no date; "the face version" says which of its versions
    result = checkin.ask("march 7th taking a selfie in a lounge, use the face version", NOW)
    assert result.status == "selected"
    assert [c.checkpoint_id for c in result.checkpoints] == ["m7-a"]
    assert checkin.ask("march 7th taking a selfie in a lounge", NOW).status == "clarify"


def test_a_kind_word_before_the_name_in_another_language_calls_it_a_model(settings, tmp_path):
    cards = [
        dict(card_id="mira", name="fairy knight (fate) mirelune", tags=["character"], triggers=["mirelune"]),
        dict(card_id="towns", name="XSarch-23EnvironmentalHarbortowns", tags=["background"], triggers=["a harbor"]),
        dict(card_id="fumi", name="Fumi Arata | Build Tales", tags=["character"], triggers=["fumiarata"]),
        dict(card_id="morph", name="Quartzwire - World Morph", tags=["style"], triggers=["quartzwire"]),
    ]
    checkin = checkin_among_many(settings, tmp_path / "cards", cards)

    # "el lora de X": the kind word comes first; the name the request opens with is the other part
    result = checkin.ask("mirelune con el lora de harbor towns de fondo, paseando junto a un canal", NOW)
    assert sorted(c.checkpoint_id for c in result.checkpoints) == ["mira", "towns"]
    assert "paseando junto a un canal" in result.prompt
    # "mit" lists a model's whole rare name as "with" does
    assert chosen_ids(checkin, "fumi arata mit quartzwire world morph, auf einer brücke", NOW) == ["fumi", "morph"]


def test_after_a_a_name_with_a_word_english_lacks_is_a_model(settings, tmp_path):
    cards = [
        dict(card_id="hito", name="DOA - Hitomi", tags=["character"], triggers=["hitomi"]),
        dict(card_id="jacket", name="zhongguo_jacket", tags=["clothing"], triggers=["zhongguo_jacket"]),
        dict(card_id="heels", name="Floral Bow Crystal Pointy Heels | 仙女高跟鞋", tags=["clothing"]),
        dict(card_id="alley", name="Alleyway", tags=["background"], triggers=["alleyway"]),
        dict(card_id="market", name="Night Market", tags=["background"], triggers=["nightmarket"]),
    ]
    checkin = checkin_among_many(settings, tmp_path / "cards", cards)

    assert chosen_ids(checkin, "hitomi in a zhongguo jacket, kung fu stance in a bamboo grove", NOW) == [
        "hito",
        "jacket",
    ]
    # a whole name of five words that ends a clause
    assert chosen_ids(checkin, "hitomi wearing floral bow crystal pointy heels, stepping out of a car", NOW) == [
        "heels",
        "hito",
    ]
    # plain English after "a"/"an", one word or several, is the picture
    assert chosen_ids(checkin, "hitomi doing a squat in an alleyway, smoking", NOW) == ["hito"]
    assert chosen_ids(checkin, "hitomi eating noodles at a night market, rain", NOW) == ["hito"]


def test_labelled_fields_name_one_model_each_and_leave_the_prompt(checkin):
    result = checkin.ask(
        "character: lyra venn / style: ink wash style / outfit: velvet maid dress / scene: a tea party", NOW
    )
    assert sorted(c.checkpoint_id for c in result.checkpoints) == ["inkwash", "lyra", "maid"]
    assert "character" not in result.prompt and "/" not in result.prompt and "scene" not in result.prompt
    assert result.prompt.endswith("a tea party")


def test_a_clause_of_a_whole_name_and_its_setting_names_a_model(settings, tmp_path):
    """ ", future technology city background", ", muzzle view concept": a clause that is only a model's whole name
    (common words, or run together after a series number) and what it is names it; a pack's character listed before
    "+" is found by her own trained word, which the prompt carries; the same words inside the picture stay the
    picture's."""
    cards = [
        dict(card_id="atla", name="Atlanta (Kancolle)", tags=["character"], triggers=["atlanta"]),
        dict(card_id="city", name="XSarch-21Futuretechnologycity", tags=["background"], triggers=["scifi skyline"]),
        dict(card_id="muzzle", name="Muzzle view", tags=["concept"], triggers=["gun barrel view"]),
        dict(
            card_id="pack",
            name="Harbor Girls - Wave Tales",
            tags=["character"],
            triggers=["mina (wave tales)", "rika (wave tales)"],
        ),
        dict(card_id="suspense", name="Suspense - Style", tags=["style"], triggers=["suspense style"]),
    ]
    checkin = checkin_among_many(settings, tmp_path / "cards", cards)

    assert chosen_ids(checkin, "atlanta leaning on a railing after dark, future technology city background", NOW) == [
        "atla",
        "city",
    ]
    assert chosen_ids(checkin, "atlanta aiming a pistol straight ahead, muzzle view concept", NOW) == [
        "atla",
        "muzzle",
    ]
    result = checkin.ask("rika + suspense style, walking home with grocery bags", NOW)
    assert sorted(c.checkpoint_id for c in result.checkpoints) == ["pack", "suspense"]
    assert "rika (wave tales)" in result.prompt and "mina" not in result.prompt
    # inside the picture's clause, the words are the picture's
    assert chosen_ids(checkin, "atlanta walking through a future technology city at night", NOW) == ["atla"]


def test_names_a_composition_opens_with_however_the_picture_goes_on(settings, tmp_path):
    """The name a request opens with is found whole, wherever its picture goes on: in another language ("haru vela
    juichend bij de finish"), after a word that looks like a verb ("stocking anarchy wearing ..."); a name the
    repository lacks is said to be missing ("frieren + ... lora"); "for the background" gives a model its role as
    "as the background" does, and so does a lone rare name in a clause of its own ("..., siza backdrop")."""
    cards = [
        dict(card_id="haru", name="Haru Vela | Derby Girls", tags=["character"], triggers=["haruvela"]),
        dict(
            card_id="stock",
            name="[Raccoon] Stocking Anarchy (Panty & Stocking)",
            tags=["character"],
            triggers=["stocking_anarchy"],
        ),
        dict(
            card_id="panty",
            name="[Raccoon] Panty Anarchy (Panty & Stocking)",
            tags=["character"],
            triggers=["panty_anarchy"],
        ),
        dict(card_id="cartoony", name="Cartoony Style", tags=["style"], triggers=["cartoony style"]),
        dict(card_id="hanfu", name="Hanfu Ming Dynasty", tags=["clothing"], triggers=["hanfuming"]),
        dict(card_id="punk", name="AetherPunkAI", tags=["style"], triggers=["aetherpunk"]),
        dict(card_id="crv", name="Crv Architecture", tags=["background"], triggers=["archicrv"]),
        dict(card_id="siza", name="XSArchi_108Siza", tags=["background"], triggers=["sizabg"]),
    ]
    checkin = checkin_among_many(settings, tmp_path / "cards", cards)

    assert chosen_ids(checkin, "haru vela juichend bij de finish van een renbaan, in cartoony style graag", NOW) == [
        "cartoony",
        "haru",
    ]
    assert chosen_ids(checkin, "stocking anarchy wearing the hanfu ming dynasty lora, eating cake", NOW) == [
        "hanfu",
        "stock",
    ]
    assert checkin.ask("frieren + aetherpunk lora, casting a spell over a field", NOW).status == "no_match"
    assert chosen_ids(checkin, "cute fox eating watermelon, <lora:AetherPunkAI:0.6> <lora:crv:0.4>", NOW) == [
        "crv",
        "punk",
    ]
    assert chosen_ids(checkin, "haru vela feeding fish in a tank, crv architecture for the background", NOW) == [
        "crv",
        "haru",
    ]
    assert chosen_ids(checkin, "haru vela reading on the steps of a museum, siza backdrop", NOW) == ["haru", "siza"]


def test_what_follows_a_named_kind_words_colon_or_a_time_before_a_style_is_the_picture(checkin):
    """ "the ink wash style lora: an old doll with a velvet maid dress" draws the dress; "at night in the ink wash
    style" is a time before the style's name; "turned down to .4" is a strength said whole."""
    assert chosen_ids(checkin, "the ink wash style lora: an old doll with a velvet maid dress, on a shelf", NOW) == [
        "inkwash"
    ]
    assert chosen_ids(checkin, "lyra venn on a rooftop at night in the ink wash style", NOW) == ["inkwash", "lyra"]
    result = checkin.ask("lyra venn reading, ink wash style turned down to .4", NOW)
    assert _set(result) == [("lyra", 1.0), ("inkwash", 0.4)]
    assert "turned down" not in result.prompt


def test_a_packs_character_named_inside_asking_words_in_another_language(settings, tmp_path):
    """ "kannst du kurone tsubaki zeichnen, ...? gern in pastel glow": the asking words before the name and the verb
    after it are no part of it; the pack's trained word the name spells ("kurone_tsubaki") is the one the prompt
    gets."""
    cards = [
        dict(
            card_id="pack",
            name="Academy Quartet 4in1",
            tags=["character"],
            triggers=["mira_vale", "kurone_tsubaki", "oda_kirin", "lune_sato"],
        ),
        dict(card_id="glow", name="pastel-glow", kind="textual_inversion", triggers=["pastel-glow"]),
    ]
    checkin = checkin_among_many(settings, tmp_path / "cards", cards)

    result = checkin.ask("kannst du kurone tsubaki zeichnen, wie sie crêpes isst? gern in pastel glow", NOW)
    assert sorted(c.checkpoint_id for c in result.checkpoints) == ["glow", "pack"]
    assert "kurone_tsubaki" in result.prompt and "mira_vale" not in result.prompt


def test_a_kind_word_said_before_the_name_after_with_in_another_language(settings, tmp_path):
    """ "avec l'embedding architectural magazine": French elides the article onto the kind word and names the model
    after it; "usa l'embedding di ..." asks with "use", which names nothing."""
    cards = [
        dict(card_id="finch", name="society-finch", kind="textual_inversion", triggers=["society-finch"]),
        dict(card_id="mag", name="Architectural Magazine Photo Style", kind="textual_inversion", triggers=["archmag"]),
        dict(card_id="cora", name="coraline", kind="textual_inversion", triggers=["coraline"]),
    ]
    checkin = checkin_among_many(settings, tmp_path / "cards", cards)

    request = "un society finch posé sur une lampe, avec l'embedding architectural magazine pour la pièce"
    assert chosen_ids(checkin, request, NOW) == ["finch", "mag"]
    result = checkin.ask("usa l'embedding di coraline: lei davanti a una porticina nascosta", NOW)
    assert (result.status, result.checkpoint_id) == ("selected", "cora")
    assert "usa" not in result.prompt.split()


def test_a_made_up_models_name_said_anywhere_names_that_model(settings, tmp_path):
    """As in the WebUI, where an embedding's name anywhere in a prompt applies it: a word no language has that spells
    a model's whole name is that model, after "with", before "look", inside a clause that marks another; a word
    people write elsewhere ("qipao") stays the picture's, and a series after "from" names no model."""
    cards = [
        dict(card_id="crab", name="gloomcrabz", kind="textual_inversion", triggers=["gl00mcrab"]),
        dict(card_id="spider", name="spidrophobiaAI", kind="textual_inversion", triggers=["spidrophobiaAI"]),
        dict(card_id="nouveau", name="velvetnouveau", kind="textual_inversion", triggers=["velvetnouveau"]),
        dict(card_id="kestrel", name="Kestrel Vane", tags=["character"], triggers=["kestrelvane"]),
        dict(card_id="qipao", name="Qipao", tags=["clothing"], triggers=["qipao"]),
        dict(card_id="game", name="Starknightz Style", tags=["style"], triggers=["starknightz"]),
        dict(card_id="borders", name="Bordertowns", kind="textual_inversion", triggers=["bordertowns"]),
    ]
    checkin = checkin_among_many(settings, tmp_path / "cards", cards)

    assert chosen_ids(checkin, "gloomcrabz swarming a rotting pier with spidrophobiaai", NOW) == ["crab", "spider"]
    assert chosen_ids(checkin, "kestrel vane reading in an empty hall, velvetnouveau look", NOW) == [
        "kestrel",
        "nouveau",
    ]
    assert chosen_ids(checkin, "kestrel vane in a canyon; bordertowns embedding plus velvetnouveau", NOW) == [
        "borders",
        "kestrel",
        "nouveau",
    ]
    assert chosen_ids(checkin, "kestrel vane wearing a qipao at a night market", NOW) == ["kestrel"]
    assert chosen_ids(checkin, "kestrel vane from starknightz, with velvetnouveau", NOW) == ["kestrel", "nouveau"]


def test_a_name_that_ends_in_its_version_label_is_spelled_without_it(settings, tmp_path):
    """ "Silver Comet V2.0" of version "2.0" is called "silver comet": said whole before the picture, it names the
    model beside another; a numbered series' title is said with its number or without ("7quietharbor")."""
    cards = [
        dict(card_id="comet", name="Silver Comet V2.0", version="2.0", tags=["character"], triggers=["silvercomet"]),
        dict(card_id="turner", name="turnsheetbeta", kind="textual_inversion", triggers=["turnsheetbeta"]),
        dict(card_id="harbor", name="XSarch-7Quietharbor", tags=["background"], triggers=["harbor town"]),
    ]
    checkin = checkin_among_many(settings, tmp_path / "cards", cards)

    result = checkin.ask("silver comet turnaround sheet, front and back, with turnsheetbeta", NOW)
    assert sorted(c.checkpoint_id for c in result.checkpoints) == ["comet", "turner"]
    assert result.prompt.count("silvercomet") == 1
    assert chosen_ids(checkin, "silver comet running, com 7quietharbor de fundo", NOW) == ["comet", "harbor"]


def test_an_opening_name_no_card_and_no_language_has_is_a_missing_part(settings, tmp_path):
    """ "mizuki tsukamura on a rooftop in the rain, ink wash style lora": the person asks for a character the
    repository lacks beside a style it has, an honest no match; words of another language before the picture
    ("mittelalterlicher marktplatz im regen, die ink wash lora") are the picture's."""
    cards = [dict(card_id="inkwash", name="Ink Wash Style", tags=["style"], triggers=["inkwash style"])]
    checkin = checkin_among_many(settings, tmp_path / "cards", cards)

    result = checkin.ask("mizuki tsukamura on a rooftop in the rain, ink wash style lora", NOW)
    assert result.status == "no_match"
    result = checkin.ask("mittelalterlicher marktplatz im regen, die ink wash style lora", NOW)
    assert (result.status, result.checkpoint_id) == ("selected", "inkwash")


def test_words_that_read_as_the_picture_elsewhere_inside_a_models_name(settings, tmp_path):
    """An action word that opens a model's whole name ("..., mix pattern lora") and a role inside a word written
    whole ("princess-knight-art") are the name's; a participle before "in" ("painted in kimhongdo style") is the
    picture's, no model of its own."""
    cards = [
        dict(card_id="mix", name="Mix Pattern / collage", tags=["style"], triggers=["mix patterns"]),
        dict(card_id="pitcher", name="sarrapitcher", kind="textual_inversion", triggers=["sarrapitcher"]),
        dict(card_id="pka", name="princess-knight-art", kind="textual_inversion", triggers=["princess-knight-art"]),
        dict(card_id="gta", name="Grand Heist Style", tags=["style"], triggers=["grandheist"]),
        dict(card_id="kim", name="KimHongDo", tags=["style"], triggers=["kimhongdo"]),
        dict(card_id="hand", name="Hand-painted portrait", tags=["style"], triggers=["handpainted"]),
        dict(card_id="kestrel", name="Kestrel Vane", tags=["character"], triggers=["kestrelvane"]),
    ]
    checkin = checkin_among_many(settings, tmp_path / "cards", cards)

    assert chosen_ids(checkin, "sarrapitcher growing in a sealed terrarium, mix pattern lora", NOW) == [
        "mix",
        "pitcher",
    ]
    assert chosen_ids(checkin, "princess-knight-art eating taiyaki on a bridge, grand heist style please", NOW) == [
        "gta",
        "pka",
    ]
    assert chosen_ids(checkin, "kestrel vane sharing tea under a lantern, painted in kimhongdo style", NOW) == [
        "kestrel",
        "kim",
    ]


def test_a_model_named_in_a_script_written_without_spaces_is_a_part(settings, tmp_path):
    """ "kestrel vane playing the guzheng, dressed in the 国风汉服 chinese clothes lora": a kind word after a name
    written in Chinese marks it whole, one part however its characters pair up, beside the name the request opens
    with."""
    cards = [
        dict(card_id="kestrel", name="Kestrel Vane", tags=["character"], triggers=["kestrelvane"]),
        dict(card_id="hanfu", name="国风汉服 chinese clothes", tags=["clothing"], triggers=["hanfukozue"]),
    ]
    checkin = checkin_among_many(settings, tmp_path / "cards", cards)

    request = "kestrel vane playing the guzheng, dressed in the 国风汉服 chinese clothes lora"
    assert chosen_ids(checkin, request, NOW) == ["hanfu", "kestrel"]
    # the characters pair up as "国风", "风汉", "汉服": one name all the same, never a part each
    intent, reference = checkin._understand(request, NOW)
    parts = [reference.written(words) for words in marked_parts(intent.text, reference)]
    assert parts == ["kestrel vane", "国风汉服 chinese clothes"]


def test_a_made_up_name_after_a_role_and_from_names_the_model(settings, tmp_path):
    """ "backdrop from apocalypseengine": after a role's "from" the made-up word is the model given the role, not a
    series; a name's trailing version mark ("TwelveDolllikeness_V1") is no part of what people call it."""
    cards = [
        dict(card_id="engine", name="[MrOreos] ApocalypseEngine", tags=["background"], triggers=["apocalypseengine"]),
        dict(card_id="khastur", name="khastur", kind="textual_inversion", triggers=["khastur"]),
        dict(card_id="doll", name="TwelveDolllikeness_V1", version="v1.0", triggers=["twelvedolllikeness"]),
        dict(card_id="morino", name="Morino Hon Style", tags=["style"], triggers=["morino-hon"]),
    ]
    checkin = checkin_among_many(settings, tmp_path / "cards", cards)

    assert chosen_ids(checkin, "khastur looming over a crowd, backdrop from apocalypseengine", NOW) == [
        "engine",
        "khastur",
    ]
    request = "twelvedolllikeness bebiendo té junto a un estanque, estilo morino hon lora"
    assert chosen_ids(checkin, request, NOW) == ["doll", "morino"]


def test_a_clause_that_is_a_name_and_its_strength_names_a_model(checkin):
    """A strength is said of a model: the words it ends a clause with name one wherever the clause stands, after the
    picture too ("..., ink wash at half strength")."""
    result = checkin.ask("the lyra venn lora reading in a library, ink wash at half strength", NOW)
    assert _set(result) == [("lyra", 1.0), ("inkwash", 0.5)]
    assert "half" not in result.prompt and "reading in a library" in result.prompt
    result = checkin.ask("lyra venn:.45, sitting in a teacup, film grain", NOW)
    assert _set(result) == [("lyra", 0.45)]  # "film grain" given no strength nor kind word is the picture's


def test_style_said_before_the_name_in_spanish_names_the_model(settings, tmp_path):
    """ "estilo morino-hon": Spanish, Portuguese and Italian put "style" before the name; a made-up name the
    request opens with, the picture after it in Spanish, is the other part."""
    cards = [
        dict(card_id="morino", name="morino-hon-style", kind="textual_inversion", triggers=["morino-hon-style"]),
        dict(card_id="doll", name="TwelveDolllikeness_V1", version="v1.0", triggers=["twelvedolllikeness"]),
    ]
    checkin = checkin_among_many(settings, tmp_path / "cards", cards)

    request = "twelvedolllikeness bebiendo té junto a un estanque de lotos, estilo morino-hon"
    assert chosen_ids(checkin, request, NOW) == ["doll", "morino"]


def test_a_webui_tags_name_picks_the_model_it_names_whole(settings, tmp_path):
    """ "<lora:Pop_-_Style:0.5>": a tag names a file, so of the models its words fit, the one whose whole name it is
    is meant, not another with the same words inside a longer title ("Japanese pop art style")."""
    cards = [
        dict(card_id="kestrel", name="Kestrel Vane", tags=["character"], triggers=["kestrelvane"]),
        dict(card_id="pop", name="Pop - Style", tags=["style"], triggers=[]),
        dict(card_id="jpop", name="Japanese pop art style", tags=["style"], triggers=["jpopart"]),
        dict(card_id="parade", name="Pop Up Parade (Figurines) (Style)", tags=["style"], triggers=["popup"]),
    ]
    checkin = checkin_among_many(settings, tmp_path / "cards", cards)

    result = checkin.ask("<lora:kestrel_vane:0.7> <lora:Pop_-_Style:0.5> at the school gate, waving shyly", NOW)
    assert sorted(_set(result)) == [("kestrel", 0.7), ("pop", 0.5)]


def test_a_creator_said_goes_with_the_name_beside_it(settings, tmp_path):
    """ "laira_slime_200 wearing zhuymx's lolita gown lora": zhuymx made the gown, not Laira, whose trained word the
    request opens with; the phrase before "lora" starts at its owner. "tmpx_xmas ..., ntcx's angry lora": the same
    with the creator's model second."""
    cards = [
        dict(card_id="laira", name="Laira (Slime 200)", tags=["character"], triggers=["laira_slime_200"]),
        dict(card_id="gown", name="Lolita Gown", creator="zhuymx", tags=["clothing"], triggers=["lolitagown"]),
        dict(card_id="gown-b", name="Lolita Gown Set", creator="maru", tags=["clothing"], triggers=["lgset"]),
        dict(
            card_id="tmpx",
            name="TMPX-4in1(girls_frontline)",
            creator="alicef",
            tags=["character"],
            triggers=["tmpx_standard", "tmpx_school", "tmpx_xmas"],
        ),
        dict(card_id="angry", name="angry - trained without data", creator="ntcx", tags=["concept"]),
        dict(card_id="angry-b", name="Angry Face", creator="pix", tags=["concept"], triggers=["angryface"]),
    ]
    checkin = checkin_among_many(settings, tmp_path / "cards", cards)

    said = "laira_slime_200 wearing zhuymx's lolita gown lora at a garden tea party"
    assert chosen_ids(checkin, said, NOW) == ["gown", "laira"]
    said = "tmpx_xmas stomping through the snow with a wrapped gift, ntcx's angry lora"
    assert chosen_ids(checkin, said, NOW) == ["angry", "tmpx"]


def test_a_request_may_open_with_a_trained_word_and_name_a_file_by_its_name(settings, tmp_path):
    """ "yingxbody portrait by a window, add the shiitake-eye lora": the coined word it opens with is one model's
    trained word alone, so that model is the subject; "the fixhandx2lora" is the card named after its file
    "fixHandX2lora.safetensors"."""
    cards = [
        dict(card_id="ying", name="瀛， yingx", tags=["character"], triggers=["yingxhead", "yingxbody"]),
        dict(card_id="eye", name="shiitake-eye", tags=["concept"], triggers=["shiitake eyes"]),
        dict(card_id="lilia", name="丫丫 Liliax", tags=["character"], triggers=["liliax"]),
        dict(card_id="hand", name="fixHandX2lora.safetensors", tags=["concept"], triggers=["fixhands"]),
    ]
    checkin = checkin_among_many(settings, tmp_path / "cards", cards)

    said = "yingxbody portrait by a window, add the shiitake-eye lora"
    assert chosen_ids(checkin, said, NOW) == ["eye", "ying"]
    said = "liliax holding a bouquet, and the fixhandx2lora so the fingers come out right"
    assert chosen_ids(checkin, said, NOW) == ["hand", "lilia"]


def test_each_part_takes_the_version_said_after_it(settings, tmp_path):
    """ "arkx_mint v2.0 at 0.8, ..., bisonx v2 style at 60%": each part's own version, not a question about the
    second, and neither in the prompt."""
    cards = [
        *versions_by_date("mint", ["v1.0", "v2.0"], name="Arkx Mint 薄绿", tags=["character"], triggers=["arkx_mint"]),
        *versions_by_date("bison", ["v1.0", "v2.0"], name="Bisonx/Bison倉鼠 style", tags=["style"]),
    ]
    checkin = checkin_among_many(settings, tmp_path / "cards", cards)

    result = checkin.ask("arkx_mint v2.0 at 0.8, curled up on a windowsill with a cat, bisonx v2 style at 60%", NOW)
    assert sorted(_set(result)) == [("bison-v2.0", 0.6), ("mint-v2.0", 0.8)]
    assert result.prompt == "arkx_mint, curled up on a windowsill with a cat"


def test_a_trained_word_written_anywhere_names_its_model(settings, tmp_path):
    """A made-up trained word of one model alone, written as a prompt writes it, names that model wherever it stands,
    a tag of a tag-list trigger too ("kiri, kirihalo ..." of "kiri,kirihalo"); "otzx + mana's jitomex": the owner goes
    with the name after it, and the list's "+" leaves the prompt as a comma."""
    cards = [
        dict(card_id="kiri", name="kiri", tags=["character"], triggers=["kiri,kirihalo"]),
        dict(card_id="kiri-b", name="Kiri Sato", tags=["character"], triggers=["kirisato"]),
        dict(card_id="kiri-c", name="kiri high heel", tags=["clothing"], triggers=["kirihh"]),
        dict(card_id="shot", name="6Shotx - Style", creator="inzanx", tags=["style"]),
        dict(card_id="grani", name="Granix", tags=["character"], triggers=["blueuniformgranix"]),
        dict(card_id="otzx", name="oTZx", type="TextualInversion", tags=["style"], triggers=["otzx"]),
        dict(card_id="jito", name="EyeControl - Jitomex", creator="mana", tags=["concept"], triggers=["jitomex"]),
        dict(card_id="jito-b", name="jitomex eye lora", creator="pix", tags=["concept"], triggers=["jitomex eyes"]),
    ]
    checkin = checkin_among_many(settings, tmp_path / "cards", cards)

    said = "kiri, kirihalo gaming in a dark room, in 6shotx style by inzanx"
    assert chosen_ids(checkin, said, NOW) == ["kiri", "shot"]
    result = checkin.ask("blueuniformgranix + otzx + mana's jitomex, unimpressed at a desk piled with paperwork", NOW)
    assert sorted(c.checkpoint_id for c in result.checkpoints) == ["grani", "jito", "otzx"]
    assert result.prompt == "blueuniformgranix, otzx, jitomex, unimpressed at a desk piled with paperwork"


def test_a_creators_style_is_a_model_and_a_part_keeps_its_version_and_brackets(settings, tmp_path):
    """ "painted in beelzx's gerphx style": someone's style is their model, a second part beside the trained word the
    request opens with; "helenx(azur lane) v2 ... + eistx's cyber elements v2": each part its own v2, and the
    bracket the first part opened goes with it."""
    cards = [
        *versions_by_date(
            "aerix", ["1.0.0", "2.0.0"], name="Aerix (FF7) Embedding", type="TextualInversion", triggers=["c_aerix"]
        ),
        dict(card_id="gerph", name="gerphx (Style)", creator="beelzx", tags=["style"]),
        dict(card_id="gerph-b", name="gerphx painting", creator="other", tags=["style"]),
        *versions_by_date(
            "helen", ["v1", "v2"], name="Helenx (Azur lane)", tags=["character"], triggers=["helenx(azur lane)"]
        ),
        dict(card_id="belfx", name="Azur Lane - Belfx", tags=["character"], triggers=["belfx"]),
        *versions_by_date("cyber", ["v1.0", "v2.0"], name="Cyber Elements", creator="eistx", triggers=["cyberpnk"]),
    ]
    checkin = checkin_among_many(settings, tmp_path / "cards", cards)

    said = "c_aerix 2.0.0 selling flowers in the slums, painted in beelzx's gerphx style"
    assert chosen_ids(checkin, said, NOW) == ["aerix-2.0.0", "gerph"]
    result = checkin.ask("helenx(azur lane) v2 in a rain soaked alley after dark + eistx's cyber elements v2", NOW)
    assert sorted(c.checkpoint_id for c in result.checkpoints) == ["cyber-v2.0", "helen-v2"]
    assert result.prompt == "a helenx(azur lane) in a rain soaked alley after dark, cyberpnk"


def test_a_word_the_picture_leads_into_is_no_second_model(settings, tmp_path):
    """ "at midnight", "on the school rooftop" and "in a warm genkanx" are the picture's, though a character LoRA is
    called Midnight, a background LoRA "School rooftop" and another model is trained on "genkanx"; said alone before
    a comma, Midnight is the model."""
    cards = [
        dict(card_id="midnight", name="Midnight [Hero Academy] Character LoRA", tags=["character"]),
        dict(card_id="night", name="Nightfall", creator="hastur", tags=["background"], triggers=["nightfallbg"]),
        dict(card_id="genkan", name="Entryway", tags=["background"], triggers=["genkanx"]),
        dict(card_id="cheeks", name="hohoakax", tags=["concept"]),
        *versions_by_date("shiki", ["v1.0", "v2.0"], name="Shikimorix (Kawaii Shikimorix-san)", tags=["character"]),
        dict(card_id="roof", name="School rooftop", tags=["background"], triggers=["schoolrooftop"]),
    ]
    checkin = checkin_among_many(settings, tmp_path / "cards", cards)

    assert chosen_ids(checkin, "haunted village square at midnight, hastur's nightfall lora", NOW) == ["night"]
    said = "a girl unwinding her scarf in a warm genkanx, hohoakax lora at 0.6"
    assert chosen_ids(checkin, said, NOW) == ["cheeks"]
    assert chosen_ids(checkin, "midnight, hastur's nightfall lora", NOW) == ["midnight", "night"]
    said = "shikimorix, version 2.0, catching a stray baseball one-handed on the school rooftop"
    assert chosen_ids(checkin, said, NOW) == ["shiki-v2.0"]


def test_a_style_said_in_another_language_and_a_bare_weight_with_its_owner(settings, tmp_path):
    """ "im Stil von xmxz v3.0" and "no estilo sugimori kenz" say a style as "in the style of" does; "pikkiz's
    remz:0.9" is pikkiz's Remz at 0.9, not a question about every Remz; "as the flower girl" is a part played in the
    picture, not the Flower Girl LoRA."""
    cards = [
        *versions_by_date("takz", ["takz-v1", "takz-768-2"], name="Takz (Azur lane) full LoRA", triggers=["takz"]),
        *versions_by_date("xmxz", ["v2.0", "v3.0"], name="xmxz", creator="zftlz", tags=["style"]),
        dict(card_id="sugi", name="Sugimori Kenz 1990s Style", tags=["style"]),
        dict(card_id="remz", name="Remz | Re:Zerox", creator="pikkiz", tags=["character"], triggers=["remz"]),
        dict(card_id="remz-b", name="Remz and Ramz cosplay", creator="other", tags=["character"]),
        dict(card_id="shex", name="Shexz Style LoRA", creator="ekunz", tags=["style"]),
        dict(card_id="koko", name="Sunohara Kokonz", tags=["character"], triggers=["kokonz"]),
        dict(card_id="flower", name="Flower Girl", tags=["concept"], triggers=["flowergirl"]),
    ]
    checkin = checkin_among_many(settings, tmp_path / "cards", cards)

    said = "zeichne takz-768-2 an einem niedrigen Tisch, im Stil von xmxz v3.0"
    assert chosen_ids(checkin, said, NOW) == ["takz-takz-768-2", "xmxz-v3.0"]
    said = "pikkiz's remz:0.9, eating an ice cream cone on a park bench, ekunz's shexz style lora:0.5"
    assert sorted(_set(checkin.ask(said, NOW))) == [("remz", 0.9), ("shex", 0.5)]
    assert chosen_ids(checkin, "sunohara kokonz as the flower girl at a spring wedding", NOW) == ["koko"]


def test_who_made_a_part_said_the_way_other_languages_say_it(settings, tmp_path):
    """ "la arix lunz de mochainkz", "arix lunz van pixelfernz", "par PixelFernz", "mochainkzのarix lunz" say whose
    model as "by" and "'s" do: each picks that creator's Arix among two; "quiero a la ..." asks, it names nothing. A
    word after "de" that no creator is keeps its own reading ("estilo de hazeblumz" is the style)."""
    cards = [
        dict(card_id="arix-m", name="Arix Lunz", creator="mochainkz", tags=["character"], triggers=["arixlunz"]),
        dict(card_id="arix-p", name="Arix Lunz (Glass Orchard)", creator="pixelfernz", tags=["character"]),
        dict(card_id="haze", name="Hazeblumz Style", creator="glasswickz", tags=["style"], triggers=["hazeblumz"]),
    ]
    checkin = checkin_among_many(settings, tmp_path / "cards", cards)

    said = "quiero a la arix lunz de mochainkz paseando bajo la nieve, estilo hazeblumz porfa"
    assert chosen_ids(checkin, said, NOW) == ["arix-m", "haze"]
    assert chosen_ids(checkin, "maak een plaatje van arix lunz van pixelfernz op het strand", NOW) == ["arix-p"]
    assert chosen_ids(checkin, "arix lunz par PixelFernz, elle lit un livre au coin du feu", NOW) == ["arix-p"]
    # the words after the handle are the picture's, not a name ("che addenta un panino")
    said = "fammi arix lunz di mochainkz che addenta un panino gigante, con lo stile hazeblumz"
    assert chosen_ids(checkin, said, NOW) == ["arix-m", "haze"]
    result = checkin.ask("mochainkzのarix lunzが雨の中を歩いてる、hazeblumzの画風で", NOW)
    assert sorted(c.checkpoint_id for c in result.checkpoints) == ["arix-m", "haze"]
    assert "mochainkz" not in result.prompt and "雨の中を歩いてる" in result.prompt
    assert checkin.ask("arix lunz paseando bajo la nieve, estilo de hazeblumz", NOW).status == "clarify"
    said = "pixelfernz의 arix lunz가 카페에 앉아 있는 그림, hazeblumz 그림체로"
    assert chosen_ids(checkin, said, NOW) == ["arix-p", "haze"]


def test_a_webui_tag_names_the_file_a_trained_word_tags(settings, tmp_path):
    """A card whose trained word is its own WebUI tag ("<lora:IcfgirlxLora_v40:1>") is the file that tag loads, though
    its version says v2.0: "<lora:IcfgirlxLora_v40:0.8>" picks it at 0.8, beside another tagged part."""
    first, second = versions_by_date("icf", ["v1.0", "v2.0"], name="Icfgirlx LoRa", tags=["character"])
    cards = [
        first | {"triggers": ["(xx)"]},
        second | {"triggers": ["<lora:IcfgirlxLora_v40:1>"]},
        dict(card_id="honey", name="Honeyx", version="Honeyx_v01", tags=["style"], triggers=["honeyx"]),
    ]
    checkin = checkin_among_many(settings, tmp_path / "cards", cards)

    result = checkin.ask("<lora:IcfgirlxLora_v40:0.8> girl waiting at a bus stop in the rain, <lora:Honeyx:0.5>", NOW)
    assert sorted(_set(result)) == [("honey", 0.5), ("icf-v2.0", 0.8)]
    assert "<" not in result.prompt and "waiting at a bus stop in the rain" in result.prompt


def test_a_parts_name_said_again_as_its_file_and_a_clause_between_two_names(settings, tmp_path):
    """ "kestrel's vane, the KS_Vane_v4 file, ..., done in pixelfernz's dusk style": the file said of a version
    names no model of its own, but the same words said as the name still do; a clause of the picture between two
    marked names parts them ("vane v1.3 (starknightz) reading ... - make it look like pixelfernz's dusk style")."""
    cards = [
        dict(card_id="vane", name="Kestrel's Vane LoRA KS_Vane_v4", tags=["character"], triggers=["ksvane"]),
        dict(card_id="dusk", name="Dusk - Style", creator="pixelfernz", tags=["style"]),
        *versions_by_date("orla", ["v1.2", "v1.3"], name="Starknightz! Orla", tags=["character"]),
    ]
    checkin = checkin_among_many(settings, tmp_path / "cards", cards)

    said = "kestrel's vane, the KS_Vane_v4 file, handing out flyers at a fair, done in pixelfernz's dusk style"
    assert chosen_ids(checkin, said, NOW) == ["dusk", "vane"]
    said = "orla v1.3 (starknightz) reading a crumpled map by candlelight - make it look like pixelfernz's dusk style"
    assert chosen_ids(checkin, said, NOW) == ["dusk", "orla-v1.3"]


def test_a_kind_word_after_use_and_draw_in_other_languages(settings, tmp_path):
    """ "usando a lora velvet stockings": Portuguese says the kind word before the name after "use" and its article,
    and "gera a mirelle ..." opens with "draw" and the article: both name a model, and neither stays in the prompt."""
    cards = [
        dict(card_id="mirelle", name="Mirelle Dawn", tags=["character"], triggers=["mirelledawn"]),
        dict(card_id="stockings", name="Velvet Stockings", tags=["clothing"]),
    ]
    checkin = checkin_among_many(settings, tmp_path / "cards", cards)

    result = checkin.ask("gera a mirelle dawn apresentando um relatório, usando a lora velvet stockings", NOW)
    assert sorted(c.checkpoint_id for c in result.checkpoints) == ["mirelle", "stockings"]
    assert result.prompt == "a mirelledawn apresentando um relatório"


def test_a_joined_trained_word_written_as_words_names_its_model(settings, tmp_path):
    """The concept library names an embedding by a joined word ("ember-glass-artstyle"): written as words where a
    list item or clause opens with it, it is that embedding beside the others ("+ marbled dusk sky" is the
    "marbled-dusk" one, "sky" the picture's)."""
    cards = [
        dict(card_id="orla", name="Orla Quill", tags=["character"], triggers=["orlaquill"]),
        dict(card_id="ember", name="ember-glass-artstyle", type="TextualInversion", triggers=["ember-glass-artstyle"]),
        dict(card_id="marbled", name="marbled-dusk", kind="textual_inversion", triggers=["marbled-dusk"]),
    ]
    checkin = checkin_among_many(settings, tmp_path / "cards", cards)

    result = checkin.ask("orla quill crossing a bridge, ember glass artstyle + marbled dusk sky", NOW)
    assert sorted(c.checkpoint_id for c in result.checkpoints) == ["ember", "marbled", "orla"]
    assert result.prompt == "a orlaquill crossing a bridge, ember-glass-artstyle, marbled-dusk sky"
