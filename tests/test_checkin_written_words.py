"""How Check-in reads words people write as a model's own: a trained word made up for one model, a trained word of
several words written whole, a series clipped the way fans clip it, a name with a version mark or a kind word run
into it; and what the prompt keeps of them (a character without a trained word keeps its name, a negative
embedding goes to the negative prompt). Every card and request here is invented for the rule it pins."""

import datetime as dt

from factories import checkin_among_many, chosen_ids

from personalq.checkin import titles
from personalq.checkin.strength import read_strengths

NOW = dt.datetime(2024, 3, 1, 12)


def test_a_made_up_trained_word_of_one_model_names_it_anywhere(settings, tmp_path):
    """ "..., dimplewink" applies the model trained on that word, as the WebUI applies an embedding named anywhere;
    so does the identity tag of one of a character's outfit tag lists ("OrlaOG"). A trained word that tag lists
    share ("lowres") is the picture's, and so is one that two models have."""
    cards = [
        dict(card_id="dimple", name="{QZ} Cheek dimples", tags=["concept"], triggers=["dimplewink"]),
        dict(card_id="velma", name="Velma Quist", tags=["character"], triggers=["velmaq"]),
        dict(
            card_id="orla",
            name="Orla (Harbor Fleet)",
            tags=["character"],
            triggers=["Orla, black hair, hairclips", "OrlaOG, headgear, red skirt", "OrlaRain, white hairband"],
        ),
        dict(card_id="tags-a", name="Crisp Uniforms", triggers=["lowres"]),
        dict(card_id="tags-b", name="Tag Helper Set", triggers=["lowres, bad anatomy"]),
        dict(card_id="tags-c", name="Soft Quality Fix", triggers=["lowres, jpeg artifacts"]),
    ]
    checkin = checkin_among_many(settings, tmp_path / "cards", cards)

    assert chosen_ids(checkin, "velma quist smiling in a flower shop, dimplewink", NOW) == ["dimple", "velma"]
    assert chosen_ids(checkin, "<lora:Crisp_Uniforms:0.8> orlaog making tea in a tatami room", NOW) == [
        "orla",
        "tags-a",
    ]
    assert chosen_ids(checkin, "velma quist galloping across open hills. no: text, watermark, lowres", NOW) == [
        "velma"
    ]


def test_a_trained_word_of_several_words_written_whole_tells_two_models_of_one_name(settings, tmp_path):
    """ "vexa bs3" is one Vexa model's trained word, and only a word inside the other's tag list: the request means
    the first. Where another model's name is spelled as well ("valkyr armor": a "Valkyr" model, and another trained on
    "valkyr armor"), both still fit."""
    cards = [
        dict(card_id="vexa-bs3", name="Vexa Thorn (Blade Saga 3)", tags=["character"], triggers=["vexa bs3"]),
        dict(card_id="vexa", name="Vexa Thorn (Blade Saga)", tags=["character"], triggers=["vexams, bs3, gloves"]),
        dict(card_id="valkyr", name="Valkyr", tags=["clothing"], triggers=["walkyre, armor"]),
        dict(card_id="angels", name="Winged Guards (Valkyr, Paladin)", triggers=["valkyr armor", "paladin"]),
    ]
    checkin = checkin_among_many(settings, tmp_path / "cards", cards)

    result = checkin.ask("vexa bs3 stretching before a duel", NOW)
    assert (result.status, result.checkpoint_id) == ("selected", "vexa-bs3")
    result = checkin.ask("valkyr armor lora, a shieldmaiden landing on a battlefield", NOW)
    assert result.status == "clarify"
    assert sorted(i for o in result.options for i in o.checkpoint_ids) == ["angels", "valkyr"]


def test_a_series_clipped_as_fans_clip_it_is_the_series_a_card_names():
    assert titles.clips("priconne", "Princess Connect")
    assert titles.clips("konosuba", "Kono Subarashii Sekai")
    assert titles.clips("nijigaku", "Nijigasaki High School")
    assert not titles.clips("shrek", "SPY x FAMILY")
    assert not titles.clips("ring", "Ring Fit")  # too short to be a clipping
    # a title of one word repeated is read once per word and start, not once per way through it (no blow-up)
    assert not titles.clips("a" * 60 + "b", " ".join(["aaaa"] * 40))


def test_a_character_from_a_series_said_by_its_clipping(settings, tmp_path):
    """ "mirelle from starcon": the card says "Starlight Connection", which another card writes as "Starcon"; "tavi
    from brighthol" names a series no card writes, and the card's own series starts so."""
    cards = [
        dict(card_id="mirelle", name="Mirelle (starlight connection)", tags=["character"], triggers=["mirelle"]),
        dict(card_id="pack", name="Starcon Style Pack", tags=["style"], triggers=["starcon style"]),
        dict(card_id="tavi", name="Tavi Orr (Brightholme Academy)", tags=["character"], triggers=["taviorr"]),
    ]
    checkin = checkin_among_many(settings, tmp_path / "cards", cards)

    assert checkin.ask("mirelle from starcon holding a bouquet", NOW).checkpoint_id == "mirelle"
    assert checkin.ask("tavi orr from brighthol, reading by a window", NOW).checkpoint_id == "tavi"


def test_a_version_mark_inside_a_written_name_is_no_version(settings, tmp_path):
    """ "corvina-v2" and "grim-image-v2-3900" are written as the models call themselves, not "version 2"; a kind word
    a name ends with ("LoRA") is not needed to spell it ("quietfrostai")."""
    cards = [
        dict(card_id="corvina", name="Corvina-V2 Tidal Saga", version="v2.1", tags=["character"], triggers=["cv_t"]),
        dict(card_id="grim", name="grim-image-v2-3900", kind="textual_inversion", triggers=["grim-image-v2-3900"]),
        dict(card_id="frost", name="QuietFrostAI LoRA", tags=["style"], triggers=["quietfrostai"]),
    ]
    checkin = checkin_among_many(settings, tmp_path / "cards", cards)

    result = checkin.ask("corvina-v2 at 90% herding goats on a foggy mountain", NOW)
    assert (result.status, result.checkpoint_id, result.checkpoints[0].weight) == ("selected", "corvina", 0.9)
    assert result.prompt == "a cv_t herding goats on a foggy mountain"
    assert checkin.ask("grim-image-v2-3900, two friends laughing in a cafe", NOW).checkpoint_id == "grim"
    assert checkin.ask("a frozen lake at night, quietfrostai", NOW).checkpoint_id == "frost"


def test_a_character_with_no_trained_word_keeps_its_name_in_the_prompt(settings, tmp_path):
    """The name as written stands where the trigger would: "tavi orr reading by a window", not "reading by a
    window"; a style's or a concept's name without a trained word still leaves the prompt."""
    cards = [
        dict(card_id="tavi", name="Tavi Orr", tags=["character"]),
        dict(card_id="wash", name="Quillwash Style", tags=["style"]),
        dict(card_id="chain", name="Bodylinkchain", tags=["concept"]),
    ]
    checkin = checkin_among_many(settings, tmp_path / "cards", cards)

    assert checkin.ask("tavi orr reading by a window", NOW).prompt == "tavi orr reading by a window"
    assert checkin.ask("the tavi orr lora, sitting in a cafe", NOW).prompt == "tavi orr, sitting in a cafe"
    assert checkin.ask("quillwash style, a harbor at dawn", NOW).prompt == "a harbor at dawn"
    assert checkin.ask("bodylinkchain lora, a dancer on a stage", NOW).prompt == "a dancer on a stage"


def test_a_negative_embeddings_trigger_goes_to_the_negative_prompt(settings, tmp_path):
    """A negative embedding draws what it names: the WebUI puts it in the negative prompt, after the person's own."""
    cards = [
        dict(card_id="grimneg", name="GrimNegative", kind="textual_inversion", triggers=["grimnegv2"]),
        dict(card_id="velma", name="Velma Quist", tags=["character"], triggers=["velmaq"]),
    ]
    checkin = checkin_among_many(settings, tmp_path / "cards", cards)

    result = checkin.ask("a lighthouse at dusk, grimnegative in the negatives", NOW)
    assert (result.checkpoint_id, result.prompt) == ("grimneg", "a lighthouse at dusk")
    assert result.negative_prompt == "grimnegv2"
    result = checkin.ask("velma quist on a pier with the grimnegative embedding, negative: blurry", NOW)
    assert sorted(c.checkpoint_id for c in result.checkpoints) == ["grimneg", "velma"]
    assert "grimnegv2" not in result.prompt and "velmaq" in result.prompt
    assert result.negative_prompt == "blurry, grimnegv2"


def test_a_version_said_again_is_no_strength():
    assert [s.weight for s in read_strengths("eriko, v0.8 not the 0.5, smiling")] == []
    assert [s.weight for s in read_strengths("lihua cat lora 0.75, a cat napping")] == [0.75]


def test_requests_in_german_and_french_read_their_asking_and_order_words(settings, tmp_path):
    """ "kannst du X ... malen?" asks to draw X; "die ältere version" is the older one; French says the style before
    its name ("dans le style quillwash") and "qui" opens what the subject does."""
    cards = [
        dict(
            card_id="blair-1",
            name="Blair Vance",
            family="blair",
            version="v1.2",
            tags=["character"],
            triggers=["blairv"],
            created_at="2023-03-01",
        ),
        dict(
            card_id="blair-2",
            name="Blair Vance",
            family="blair",
            version="v2.0",
            tags=["character"],
            triggers=["blairv"],
            created_at="2023-03-13",
        ),
        dict(card_id="wash", name="Quillwash Style", tags=["style"], triggers=["quillwash"]),
        dict(card_id="pyra", name="Pyrelle", tags=["character"], triggers=["pyrelle"]),
    ]
    checkin = checkin_among_many(settings, tmp_path / "cards", cards)

    result = checkin.ask("blair vance, bitte die ältere version. sie liegt auf dem dach", NOW)
    assert result.checkpoint_id == "blair-1"
    result = checkin.ask("kannst du blair vance v2.0 auf einem motorrad malen? im quillwash stil bitte", NOW)
    assert sorted(c.checkpoint_id for c in result.checkpoints) == ["blair-2", "wash"]
    assert not result.prompt.lower().startswith(("kannst", "a kannst"))
    assert chosen_ids(checkin, "pyrelle qui lit un livre sous un cerisier, dans le style quillwash", NOW) == [
        "pyra",
        "wash",
    ]


def test_a_scene_that_opens_with_a_plural_takes_no_article(settings, tmp_path):
    cards = [dict(card_id="wash", name="Quillwash Style", tags=["style"], triggers=["quillwash style"])]
    checkin = checkin_among_many(settings, tmp_path / "cards", cards)

    result = checkin.ask("skyscrapers in the rain, quillwash style", NOW)
    assert result.prompt == "skyscrapers in the rain, quillwash style"


def test_what_stands_in_brackets_or_after_from(settings, tmp_path):
    """A trained word in brackets still names its model ("(grampsify)"), a name there may say where one is from; a
    model named after a series ("Cindertaker LoRA") is where the character after "from" comes from, not a second
    part; a name of plain words with its kind word ("Glasses LoRA") is not spelled by the plain word."""
    cards = [
        dict(card_id="tavi", name="Tavi Orr", tags=["character"], triggers=["taviorr"]),
        dict(card_id="gramps", name="Aging Faces - grampsify", kind="textual_inversion", triggers=["grampsify"]),
        dict(card_id="wash", name="Quillwash Style", tags=["style"], triggers=["quillwash style"]),
        dict(card_id="cinder", name="Cindertaker LoRA", tags=["style"], triggers=["cindertaker"]),
        dict(card_id="cerb", name="Cerbera - Cindertaker - Character LORA", tags=["character"], triggers=["cerbera"]),
        dict(card_id="glasses", name="Glasses LoRA", tags=["clothing"], triggers=["glasses"]),
        dict(card_id="round-a", name="Round glasses | Accessory", family="round", version="v1a", triggers=["rglass"]),
        dict(card_id="round-b", name="Round glasses | Accessory", family="round", version="v1b", triggers=["rglass"]),
    ]
    checkin = checkin_among_many(settings, tmp_path / "cards", cards)

    result = checkin.ask("tavi orr knitting by the fire (grampsify) in quillwash style", NOW)
    assert sorted(c.checkpoint_id for c in result.checkpoints) == ["gramps", "tavi", "wash"]
    assert result.prompt == "a taviorr knitting by the fire (grampsify) in quillwash style"
    assert checkin.ask("justina from cindertaker, sunglasses, leaning on a wall in hell", NOW).status == "no_match"
    result = checkin.ask("round glasses lora, librarian at her desk", NOW)
    assert result.status == "clarify" and "glasses" not in {i for o in result.options for i in o.checkpoint_ids}


def test_the_words_that_lead_into_a_name_stay_before_its_trigger(settings, tmp_path):
    cards = [
        dict(card_id="horn", name="Hornfolk", tags=["character"], triggers=["hrn-folk"]),
        dict(card_id="wash", name="quillwash", kind="textual_inversion", triggers=["quillwash"]),
    ]
    checkin = checkin_among_many(settings, tmp_path / "cards", cards)

    assert checkin.ask("a horde of hornfolk marching across a frozen lake, quillwash embedding", NOW).prompt == (
        "a horde of hrn-folk marching across a frozen lake, quillwash"
    )


def test_the_parts_of_a_tag_list_prompt_and_a_part_named_by_what_it_does(settings, tmp_path):
    """In a comma-separated prompt, an item of plain words several models share is the picture's ("sunset",
    "gears"), also right before a tagged name ("gears, quillwash:0.45"); a part said by what it does ("the lora that
    swaps the lower jaw for cybernetic parts") is a part like a named one, and what said it leaves the prompt."""
    cards = [
        dict(card_id="velma", name="Velma Quist", tags=["character"], triggers=["velmaq"]),
        dict(card_id="wash", name="Quillwash Style", tags=["style"], triggers=["quillwash"]),
        dict(card_id="sun-a", name="SunsetScenery", tags=["background"], triggers=["sunset scenery"]),
        dict(card_id="sun-b", name="Sunset Glow Sky", tags=["background"], triggers=["sunsetglow"]),
        dict(card_id="gear-a", name="Gear Strive Style", tags=["style"], triggers=["gearstrive"]),
        dict(card_id="gear-b", name="Gear Knight Style", tags=["style"], triggers=["gearknight"]),
        dict(
            card_id="jaw",
            name="Cybernetic Jawless",
            tags=["concept"],
            triggers=["cyber_jawless"],
            description="This LoRA swaps the lower jaw for cybernetic parts.",
        ),
    ]
    checkin = checkin_among_many(settings, tmp_path / "cards", cards)

    result = checkin.ask("velmaq, beach volleyball, sunset, splashing water, quillwash:0.65", NOW)
    assert [(c.checkpoint_id, c.weight) for c in result.checkpoints] == [("velma", 1.0), ("wash", 0.65)]
    assert chosen_ids(checkin, "velmaq, clock tower interior, falling feathers, gears, quillwash:.45", NOW) == [
        "velma",
        "wash",
    ]
    result = checkin.ask(
        "velma quist leaning in a neon alley + the lora that swaps the lower jaw for cybernetic parts", NOW
    )
    assert sorted(c.checkpoint_id for c in result.checkpoints) == ["jaw", "velma"]
    assert "lora that" not in result.prompt and "+" not in result.prompt
