"""Two creators' models of one character or concept both fit a request that names it, however the words only one of
them has (the series as its creator wrote it, a word of the scene in its tags) score it higher; what a version, a
creator or an outfit said picks still picks. And an embedding a negative prompt names by its trained word is part of
the picture's set, as the WebUI applies it there. Every card and request here is invented for the rule it pins."""

import datetime as dt

from factories import checkin_among_many, chosen_ids, option_ids

NOW = dt.datetime(2024, 3, 1, 12)

NAMESAKES = [
    dict(card_id="kaede-ss", name="Kaede (Steel Sonata) LoRA", tags=["character"], triggers=["kaedess"]),
    dict(card_id="kaede-sr", name="Kaede (steel requiem) 枫", tags=["character"], triggers=["kaede"]),
    dict(card_id="kaede-other", name="Kaede Morino | Cafe Tales", tags=["character"], triggers=["kaedemorino"]),
    dict(
        card_id="porta-staff",
        name="Porta Foundation Employee (Girl)",
        tags=["character", "white uniform"],
        triggers=["porta employee"],
    ),
    dict(card_id="porta-pk", name="Monsters - Porta Foundation Employee Female", tags=["character"], triggers=["pfe"]),
    dict(card_id="nixa", name="Nixa Vell (Tide Saga) LoRA", tags=["character"], triggers=["nixavell"]),
    dict(card_id="tide-pack", name="Tide Saga Girlpack", tags=["character", "nixa vell", "oren"], triggers=["nixa"]),
    dict(card_id="tide-style", name="Tide Saga Art Style", tags=["style"], triggers=["tidestyle", "nixa vell"]),
    dict(
        card_id="mira-winter",
        name="Mira Holt",
        family="mira",
        version="Winter Outfit",
        tags=["character"],
        triggers=["mira holt, winter coat"],
    ),
    dict(card_id="mira-other", name="Mira Holt (Frost Kingdom)", tags=["character"], triggers=["miraholt"]),
]


def test_two_creators_models_of_one_character_both_fit(settings, tmp_path):
    """ "kaede from steel sonata": her model that writes the series as the person did, and another creator's that
    writes it "steel requiem", both fit; one from another series does not. "porta foundation employee in the white
    uniform": "white uniform" in one's tags tells nobody apart. A character pack whose
    tags name her fits beside her own model; a style trained on her name is a style, not her model."""
    checkin = checkin_among_many(settings, tmp_path / "cards", NAMESAKES)

    result = checkin.ask("kaede from steel sonata kneeling in a tatami room", NOW)
    assert result.status == "clarify"
    assert option_ids(result) == ["kaede-sr", "kaede-ss"]
    result = checkin.ask("porta foundation employee in the white uniform in a lab", NOW)
    assert option_ids(result) == ["porta-pk", "porta-staff"]
    result = checkin.ask("nixa vell lora, meditating under a waterfall", NOW)
    assert option_ids(result) == ["nixa", "tide-pack"]


def test_what_a_request_says_of_one_model_still_picks_it_over_its_namesakes(settings, tmp_path):
    """The version's outfit said ("the winter outfit version") picks that model, though another creator's model has
    her name too."""
    checkin = checkin_among_many(settings, tmp_path / "cards", NAMESAKES)

    assert chosen_ids(checkin, "mira holt, the winter outfit version, skating on a frozen lake", NOW) == [
        "mira-winter"
    ]


def test_an_embedding_the_negative_prompt_names_is_applied(settings, tmp_path):
    """ "negative: qqneg07": the embedding trained on that word is selected, and the prompt keeps the whole picture
    ("witch", a word of other models' names, names none of them here). With a model named in the picture, the
    embedding joins it. Its word stays in the negative prompt only; a word several models share ("lowres") names
    none, and "in the negative prompt" says where an embedding goes."""
    cards = [
        dict(card_id="qq", name="QQ Fixer", kind="textual_inversion", tags=["style"], triggers=["qqneg07"]),
        dict(card_id="witch-a", name="Witchcraft Punk", tags=["style"], triggers=["witchpunk"]),
        dict(card_id="witch-b", name="Little Witch Pella", tags=["character"], triggers=["pella"]),
        dict(card_id="witch-c", name="Witch Dora (Moon Academy)", tags=["character"], triggers=["witchdora"]),
        dict(card_id="witch-d", name="Sea Witch Costume", tags=["clothing"], triggers=["seawitch"]),
        dict(card_id="velma", name="Velma Quist", tags=["character"], triggers=["velmaq"]),
        dict(card_id="low-a", name="Crisp Uniforms", kind="textual_inversion", triggers=["lowres"]),
        dict(card_id="low-b", name="Soft Quality Fix", kind="textual_inversion", triggers=["lowres"]),
        dict(card_id="np", name="negative_prompt", kind="textual_inversion", triggers=["negative_prompt"]),
    ]
    checkin = checkin_among_many(settings, tmp_path / "cards", cards)

    result = checkin.ask("a witch stirring a cauldron by candlelight, negative: qqneg07, blurry", NOW)
    assert (result.status, result.checkpoint_id) == ("selected", "qq")
    assert (result.prompt, result.negative_prompt) == ("a witch stirring a cauldron by candlelight", "qqneg07, blurry")
    result = checkin.ask("velma quist on a pier at dawn, negative: (qqneg07:1.2)", NOW)
    assert sorted(c.checkpoint_id for c in result.checkpoints) == ["qq", "velma"]
    assert "qqneg07" not in result.prompt and "velmaq" in result.prompt
    assert chosen_ids(checkin, "velma quist in the witchcraft punk style, negative: qqneg07", NOW) == [
        "qq",
        "velma",
        "witch-a",
    ]
    assert checkin.ask("a lighthouse at dusk, negative: lowres", NOW).status == "no_match"
    # where an embedding goes ("in the negative prompt") names no second model, though one is called so
    assert chosen_ids(checkin, "qq fixer in the negative prompt, a lighthouse at dusk", NOW) == ["qq"]


def test_a_model_called_by_another_name_is_not_the_one_asked_for(settings, tmp_path):
    """ "melka tornu tales of orvala": the repository has Dorrin Vask of that series, who is someone else; the scene's
    "angel wings" names no one. Nothing fits, and the answer says what is nearest. The same holds of a thing's two-word
    name: "snow globe" is not a "celestial globe"."""
    cards = [
        dict(card_id="dorrin", name="Dorrin Vask (Tales of Orvala)", tags=["character"], triggers=["dorrinvask"]),
        dict(card_id="angels", name="Angelic Guards", tags=["concept"], triggers=["angel wings"]),
        dict(card_id="sky", name="Planet Maker", tags=["concept"], triggers=["celestial globe", "black background"]),
        *(  # "snow" is as common a word as it is in a real collection
            dict(card_id=f"snow-{thing}", name=f"Snow {thing}", tags=["concept"], triggers=[f"snow{thing}"])
            for thing in (
                "princess",
                "streets",
                "fox",
                "owl",
                "castle",
                "field",
                "storm",
                "cabin",
                "leopard",
                "rabbit",
            )
        ),
    ]
    checkin = checkin_among_many(settings, tmp_path / "cards", cards)

    # "snow globe" is not the "celestial globe" a model was trained on: a two-word name's last word after another
    assert checkin.ask("snow globe lora, a tiny village inside a snow globe", NOW).status == "no_match"
    assert chosen_ids(checkin, "celestial globe lora, a ringed planet", NOW) == ["sky"]
    result = checkin.ask("melka tornu tales of orvala tripping over her own feet with angel wings out", NOW)
    assert result.status == "no_match"
    assert "Dorrin Vask" in result.reason
    assert chosen_ids(checkin, "dorrin vask tales of orvala tripping over her own feet", NOW) == ["dorrin"]


def test_the_trigger_takes_the_place_of_the_name_not_of_its_creator(settings, tmp_path):
    """ "tovah by mkz racing ...": the trigger stands where "tovah" stood, once; "by mkz" only picked the model."""
    cards = [
        dict(
            card_id="tovah",
            name="[mkz] Tovah Renn | Ash Saga",
            creator="mkz",
            tags=["character"],
            subjects=["tovah"],
            triggers=["renn tovah"],
        ),
        dict(
            card_id="tovah-2", name="Tovah Renn | Ash Saga", creator="qq", tags=["character"], triggers=["tovahrenn"]
        ),
    ]
    checkin = checkin_among_many(settings, tmp_path / "cards", cards)

    result = checkin.ask("tovah by mkz racing across rooftops", NOW)
    assert (result.checkpoint_id, result.prompt) == ("tovah", "a renn tovah racing across rooftops")


def test_a_namesake_by_part_of_the_name_from_the_said_series_or_in_another_romanization(settings, tmp_path):
    """ "rinko yamada from moon harbor": a model of that series called "rinko" alone is hers too (her family name is
    common), though without the series her given name is anyone's; "takeda kouichirou style" is also the style
    written "Kōichirō Takeda"."""
    cards = [
        dict(card_id="rinko-full", name="Yamada Rinko (Moon Harbor)", tags=["character"], triggers=["yamadarinko"]),
        dict(card_id="rinko-short", name="rinko(Moon Harbor) / りんこ", tags=["character"], triggers=[]),
        dict(card_id="rinko-else", name="Rinko Sato | Cafe Tales", tags=["character"], triggers=["rinkosato"]),
        *(  # a family name many characters share
            dict(card_id=f"yamada-{i}", name=f"Yamada {given} ({series})", tags=["character"], triggers=[given])
            for i, (given, series) in enumerate((("Taro", "Sky Club"), ("Anna", "Idol Stage"), ("Ken", "Dojo Days")))
        ),
        dict(card_id="takeda-a", name="Takeda Kouichirou Style LoRA", tags=["style"], triggers=["sketch"]),
        dict(card_id="takeda-b", name="Kōichirō Takeda Style [Ears Edition]", tags=["style"], triggers=[]),
    ]
    checkin = checkin_among_many(settings, tmp_path / "cards", cards)

    result = checkin.ask("rinko yamada from moon harbor in an apron cooking dinner", NOW)
    assert option_ids(result) == ["rinko-full", "rinko-short"]
    assert chosen_ids(checkin, "yamada rinko cooking dinner", NOW) == ["rinko-full"]
    result = checkin.ask("takeda kouichirou style, a girl laughing at a sketchbook", NOW)
    assert option_ids(result) == ["takeda-a", "takeda-b"]
