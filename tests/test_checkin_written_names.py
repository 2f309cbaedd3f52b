"""A model named the way its files and labels are written: an embedding by its ``<token>``, a version by the number
its label opens with ("v3" of "v3_no_flip", not "v1.0_a3") or by a letter ("version B"), a model by a number its
name carries ("the 4400-step one"); and the prompt losing the whole name however it is broken up ("gaspard
lemaire de la tour style", "vesna (moon harbor)"). Every card and request here is invented for the rule it pins."""

import datetime as dt

from factories import checkin_among_many, chosen_ids, option_ids, versions_by_date

from personalq.checkin.tokens import fold, pair_sounds

NOW = dt.datetime(2024, 3, 1, 12)
ISLE = dict(type="TextualInversion", creator="quietfern")

CARDS = [
    dict(card_id="quill", name="Quill Sketch Kid", tags=["character"], triggers=["quillkid"]),
    dict(card_id="tanaka-ink", name="tanaka-inkblot", type="TextualInversion", triggers=["tanaka-inkblot"]),
    dict(
        card_id="lemaire",
        name="gaspard-lemaire-de-la-tour-style",
        type="TextualInversion",
        triggers=["gaspard-lemaire-de-la-tour-style"],
    ),
    *versions_by_date("vesna", ["v1.0_a3", "v2.0_a5", "v3_no_flip"], name="Vesna (Moon Harbor)", triggers=["vesna"]),
    *versions_by_date("vents", ["Version A", "Version B"], name="Sleeve Vents Attire", triggers=["sleeve vents"]),
    *[
        dict(card_id=f"iso-{steps}", name=name, version="1", triggers=[trigger], **ISLE)
        for steps, name, trigger in [
            ("4400", "Isle Dreams TI: 4400", "isledream15"),
            ("2000", "Isle Dreams 1.5: 2000 (TI)", "isledream15"),
            ("300", "Isle_Dreams-300", "isle_dreams"),
        ]
    ],
    *versions_by_date("iso-sets", ["1900", "400"], name="Isle TI sets", triggers=["isle_dreams"], **ISLE),
    dict(card_id="wakana", name="Kosaka Wakana (Blue Lantern)", tags=["character"], triggers=["wakana_bl"]),
    dict(card_id="wakame", name="Konbu Wakame Style", tags=["style"], triggers=["wakamestyle"]),
    dict(card_id="nia", name="Himesora Nia Character LoRA", tags=["character"], triggers=["himenia"]),
]


def test_an_embedding_called_by_its_token_is_a_part_of_the_picture(settings, tmp_path):
    """ "<tanaka-inkblot> style" names the embedding as sd-concepts-library writes it: with a character it is the
    second checkpoint, alone it is the one, and its token goes into the prompt once, whole."""
    checkin = checkin_among_many(settings, tmp_path / "cards", CARDS)

    result = checkin.ask("quill sketch kid flying a kite on a hill, <tanaka-inkblot> style", NOW)
    assert sorted(c.checkpoint_id for c in result.checkpoints) == ["quill", "tanaka-ink"]
    assert result.prompt.count("tanaka-inkblot") == 1 and "style" not in result.prompt
    assert "flying a kite on a hill" in result.prompt

    result = checkin.ask("a lighthouse at dusk in the style of <gaspard-lemaire-de-la-tour-style>", NOW)
    assert chosen_ids(checkin, "a lighthouse at dusk in the style of <gaspard-lemaire-de-la-tour-style>", NOW) == [
        "lemaire"
    ]
    assert result.prompt.count("gaspard") == 1 and "<" not in result.prompt


def test_the_whole_name_leaves_the_prompt_however_it_is_broken_up(settings, tmp_path):
    """The words of the chosen card's name around the phrase that named it go with it: across little words ("de
    la"), and the series in brackets after a character's name."""
    checkin = checkin_among_many(settings, tmp_path / "cards", CARDS)

    result = checkin.ask("a fox in the snow, gaspard lemaire de la tour style embedding", NOW)
    assert result.prompt == "a fox in the snow, gaspard-lemaire-de-la-tour-style"
    result = checkin.ask("vesna (moon harbor) v2 reading on a balcony", NOW)
    assert result.prompt == "vesna, reading on a balcony" or result.prompt == "a vesna reading on a balcony"
    assert "harbor" not in result.prompt


def test_a_version_number_is_the_one_a_label_opens_with(settings, tmp_path):
    """ "v3" is "v3_no_flip", not "v1.0_a3" that carries a 3 later; the clause said of it ("where flip aug was turned
    off") picks nothing more and leaves the prompt with the aside's dashes."""
    checkin = checkin_among_many(settings, tmp_path / "cards", CARDS)

    assert chosen_ids(checkin, "vesna v3 streaming at her desk", NOW) == ["vesna-v3_no_flip"]
    result = checkin.ask("vesna — the v3 where flip aug was turned off — streaming at her desk", NOW)
    assert [c.checkpoint_id for c in result.checkpoints] == ["vesna-v3_no_flip"]
    assert "flip" not in result.prompt and "— —" not in result.prompt
    assert result.prompt.endswith("streaming at her desk")
    assert chosen_ids(checkin, "vesna v2 streaming at her desk", NOW) == ["vesna-v2.0_a5"]


def test_a_version_called_by_a_letter(settings, tmp_path):
    """ "version B" is the label "Version B"; without a letter both versions stay and Check-in asks."""
    checkin = checkin_among_many(settings, tmp_path / "cards", CARDS)

    assert chosen_ids(checkin, "sleeve vents attire, version B, on a dancer stretching", NOW) == ["vents-Version-B"]
    result = checkin.ask("sleeve vents attire on a dancer stretching", NOW)
    assert result.status == "clarify"
    assert option_ids(result) == ["vents-Version-A", "vents-Version-B"]


def test_a_number_the_name_carries_picks_the_model(settings, tmp_path):
    """ "the 4400-step one" of quietfern's three Isle Dreams embeddings is the one named "…: 4400"."""
    checkin = checkin_among_many(settings, tmp_path / "cards", CARDS)

    assert chosen_ids(checkin, "quietfern's isle dreams embedding, the 4400-step one, a floating bakery", NOW) == [
        "iso-4400"
    ]
    assert checkin.ask("quietfern's isle dreams embedding, a floating bakery", NOW).status == "clarify"


def test_a_languages_everyday_words_and_two_english_words_name_nothing(settings, tmp_path):
    """In a request written in German, French or Portuguese its everyday words ("es", "tu", "tem") are no
    character's name, and "aquarium" is no typo of "Aquarius": nothing fits, and Check-in says so. Said in English,
    the same short name still names its model."""
    cards = [
        dict(card_id="es", name="Es (BlazeBlau) LoRA", tags=["character"], triggers=["esbb"]),
        dict(card_id="tu", name="Tu Lin", tags=["character"], triggers=["tulin"]),
        dict(card_id="tem", name="Tem Village Girl", tags=["character"], triggers=["temgirl"]),
        dict(card_id="aquarius", name="Zodiac Aquarius Gold Armor", tags=["clothing"], triggers=["aquarius armor"]),
    ]
    checkin = checkin_among_many(settings, tmp_path / "cards", cards)

    for said in (
        "gibt es eine lora für lederhosen? ein bursche in lederhosen beim maibaum aufstellen",
        "tu as un décor d'aquarium ? une fille devant un grand bassin avec des requins",
        "tem lora de shortinho por baixo da saia? menina de uniforme andando de bicicleta",
    ):
        assert checkin.ask(said, NOW).status == "no_match", said
    assert chosen_ids(checkin, "es from blazeblau reading in a library", NOW) == ["es"]
    # Vietnamese too: "có" and "không" ask, "tu" is no name
    said = "có lora tu lin không? cô bé giấu một cuốn tạp chí sau lưng ở hành lang"
    assert chosen_ids(checkin, said, NOW) == ["tu"]


def test_a_version_said_the_chinese_way(settings, tmp_path):
    """ "要2.0那版" and "2.0那个" say version 2.0 as "2.0版" does."""
    cards = versions_by_date(
        "nian", ["v1.0", "v2.0"], name="Nianx 年 Arknights", tags=["character"], triggers=["nianx"]
    )
    checkin = checkin_among_many(settings, tmp_path / "cards", cards)

    assert chosen_ids(checkin, "nianx，要2.0那版，画她在火锅店里涮肉", NOW) == ["nian-v2.0"]
    assert chosen_ids(checkin, "nianx 1.0那个 在火锅店里涮肉", NOW) == ["nian-v1.0"]


NOTED = [
    *versions_by_date(
        "fuzz",
        ["fuzzv2", "fuzzv1"],
        name="fuzzbit embedding",
        type="TextualInversion",
        triggers=["fuzzbit"],
        description="two embeddings of a 90s toy. v1 is easier to blend with other things in the prompt, v2 seems "
        "to trend towards rendering the toy whole.",
    ),
    *versions_by_date(
        "renx",
        ["v1.0", "v2.0"],
        name="Renx Erindel (Elsbound)",
        tags=["character"],
        triggers=["renx_erindel"],
        description="139 samples from official and booru art. Version 2 : 94 samples from official only.",
    ),
    *versions_by_date(
        "bagx",
        ["v1", "v2"],
        name="bagx_over_head",
        triggers=["bagx_over_head"],
        description="v1: trained on mostly girls with bags on their head v2: the same data plus pictures of a doctor",
    ),
    *versions_by_date("mangax", ["First Release", "BD_mangax_v1"], name="Mangax style LoRA", creator="brx"),
    *versions_by_date("vtx", ["v1.0", "v2.0"], name="VtuberMakerx LoRA", triggers=["vtubermodelx"]),
]


def test_a_version_picked_by_what_its_description_says_of_it(settings, tmp_path):
    """ "the version the card says blends more easily" is the one the description's changelog says so of, in any
    language ("la versión entrenada solo con arte oficial"), and that talk leaves the prompt; unasked, the picture's
    words pick no version ("a shy girl with a paper bag on her head" asks)."""
    checkin = checkin_among_many(settings, tmp_path / "cards", NOTED)

    result = checkin.ask(
        "fuzzbit embedding, the version the card says blends more easily with other stuff, a toy", NOW
    )
    assert [c.checkpoint_id for c in result.checkpoints] == ["fuzz-fuzzv1"]
    assert result.prompt == "fuzzbit, a toy"
    said = "renx de elsbound, la versión entrenada solo con arte oficial — tensando el arco en un bosque"
    assert chosen_ids(checkin, said, NOW) == ["renx-v2.0"]
    assert checkin.ask("the bagx_over_head lora, a shy girl with a paper bag on her head", NOW).status == "clarify"


def test_a_label_said_after_labeled_and_a_model_said_with_what_it_does(settings, tmp_path):
    """ "the one labeled first release" is the file labelled so, not the first version by number; "the vtubermakerx
    lora that spits out model sheets" is one model described, and "marked sd 1.5" its base."""
    checkin = checkin_among_many(settings, tmp_path / "cards", NOTED)

    said = "brx's mangax style lora — the one labeled first release — two rivals on a rooftop"
    assert chosen_ids(checkin, said, NOW) == ["mangax-First-Release"]
    result = checkin.ask("the vtubermakerx lora that spits out vtuber model sheets, the v2 — a fox girl", NOW)
    assert [c.checkpoint_id for c in result.checkpoints] == ["vtx-v2.0"]
    assert result.prompt == "vtubermodelx, a fox girl"


def test_a_name_written_by_its_sound_in_katakana_or_hangul(settings, tmp_path):
    """Katakana and hangul write a name by its sound, which the card writes in Latin letters: "ワカナ" is Wakana,
    "히메소라 니아" Himesora Nia. A sound is matched as written, never as a typo ("ワカモ" is no "Wakame")."""
    checkin = checkin_among_many(settings, tmp_path / "cards", CARDS)

    assert chosen_ids(checkin, "狐坂ワカナのLoRAで、月夜の屋根の上に立ってる", NOW) == ["wakana"]
    assert chosen_ids(checkin, "히메소라 니아 로라 있어? 벚꽃 아래에서 크레페 먹는 장면", NOW) == ["nia"]
    assert "wakame" not in chosen_ids(checkin, "ワカモのLoRAある？海辺で笑ってる", NOW)
    assert pair_sounds("狐坂ワカモの") == [("狐坂",), ("坂ワ",), ("ワカ", "wakamo"), ("カモ", "wakamo"), ("モの",)]


def test_a_japanese_sentence_after_a_latin_name_is_the_picture(settings, tmp_path):
    """ "kosaka wakanaが雨の中を歩いてる": the particle goes on with the sentence, which the prompt keeps."""
    checkin = checkin_among_many(settings, tmp_path / "cards", CARDS)

    result = checkin.ask("kosaka wakanaが雨上がりの商店街を傘をさして歩いてる", NOW)
    assert [c.checkpoint_id for c in result.checkpoints] == ["wakana"]
    assert "雨上がりの商店街を傘をさして歩いてる" in result.prompt


def test_chinese_and_japanese_forms_of_one_character_are_one_name(settings, tmp_path):
    """ "龙之骑士" (simplified) is the card's "龍之騎士" (traditional); Japanese "崩壊" is Chinese "崩坏", "崩壞"."""
    cards = [
        dict(card_id="dragon", name="龍之騎士 Azure Warden", tags=["character"], triggers=["azurewarden"]),
        dict(card_id="order", name="騎士團 Lantern Order", tags=["concept"], triggers=["lanternorder"]),
        dict(card_id="ruin", name="崩壞の塔 Broken Spire", tags=["background"], triggers=["brokenspire"]),
    ]
    checkin = checkin_among_many(settings, tmp_path / "cards", cards)

    assert chosen_ids(checkin, "龙之骑士在雪地里骑马", NOW) == ["dragon"]
    assert chosen_ids(checkin, "崩壊の塔のloraで、夕焼けの空", NOW) == ["ruin"]
    assert fold("崩壊 崩坏 崩壞") == "崩坏 崩坏 崩坏"


def test_asking_for_a_model_in_other_languages_names_nothing(settings, tmp_path):
    """ "¿Tienes la ...?", "Cerco il lora ...", "Vocês têm o embedding ...?", "Finns det en embedding för ...?": the
    asking is no word of a name (no "No Tienes ... in the repository"), and leaves the prompt."""
    cards = [
        dict(card_id="iroha", name="Iroha Quillon", creator="velvetnib", tags=["character"], triggers=["irohaq"]),
        dict(card_id="pinup", name="pin-up (Vale Ormond)", creator="ormondfan", tags=["style"]),
        dict(card_id="akai", name="Akai Storm Style TI", kind="textual_inversion", triggers=["akai-storm"]),
        dict(card_id="lars", name="Lars Vennholm", kind="textual_inversion", triggers=["larsvennholm"]),
    ]
    checkin = checkin_among_many(settings, tmp_path / "cards", cards)

    result = checkin.ask("¿Tienes la Iroha Quillon de velvetnib? Con el uniforme escolar, guiñando un ojo", NOW)
    assert (result.status, result.checkpoint_id) == ("selected", "iroha")
    assert "tienes" not in result.prompt.lower() and "guiñando un ojo" in result.prompt
    said = "Cerco il lora pin-up (Vale Ormond) di ormondfan: una ragazza che ripara una bicicletta"
    assert chosen_ids(checkin, said, NOW) == ["pinup"]
    result = checkin.ask("Vocês têm o embedding do estilo Akai Storm? Uma pirata no convés de um navio", NOW)
    assert (result.checkpoint_id, result.prompt) == ("akai", "akai-storm. Uma pirata no convés de um navio")
    assert chosen_ids(checkin, "Finns det en embedding för Lars Vennholm? En röd stuga vid en sjö", NOW) == ["lars"]


def test_who_made_it_said_with_an_honorific_or_a_made_by(settings, tmp_path):
    """ "glassnibさんの" (Japanese honours the maker), "glassnib做的" (Chinese: "made by"), "glassnib가 만든"
    (Korean), "by hikki_" (a handle ending in an underscore): each picks that creator's model among two, and no
    handle stays in the prompt."""
    cards = [
        dict(card_id="mira-g", name="Mira Solenne", creator="glassnib", tags=["character"], triggers=["mirasol"]),
        dict(card_id="mira-o", name="Mira Solenne (Arc)", creator="otherhand", tags=["character"]),
        dict(card_id="rin-h", name="Rin Hoshiwa", creator="hikki_", tags=["character"], triggers=["rinhoshiwa"]),
        dict(card_id="rin-o", name="Rin Hoshiwa v2", creator="someoneelse", tags=["character"]),
    ]
    checkin = checkin_among_many(settings, tmp_path / "cards", cards)

    assert chosen_ids(checkin, "glassnibさんのミラ・ソレンヌ、Mira Solenneで、夜の駅に立ってる", NOW) == ["mira-g"]
    assert chosen_ids(checkin, "glassnib做的Mira Solenne lora，想画她在雪地里", NOW) == ["mira-g"]
    assert chosen_ids(checkin, "glassnib가 만든 mira solenne 로라로 카페에 앉아 있는 그림", NOW) == ["mira-g"]
    result = checkin.ask("rin hoshiwa by hikki_ running on a track", NOW)
    assert (result.checkpoint_id, result.prompt) == ("rin-h", "a rinhoshiwa running on a track")
    result = checkin.ask("rin hoshiwa от hikki_ бежит по стадиону", NOW)
    assert result.checkpoint_id == "rin-h" and "hikki" not in result.prompt


def test_textual_inversion_said_in_full_is_a_kind_word(settings, tmp_path):
    """ "the Anthrox textual inversion that puts clothes on animals — ...": "textual inversion" says the kind, as
    "embedding" does, so "anthrox" is the name and what follows the dash the picture."""
    cards = [
        dict(card_id="anthrox", name="Anthrox", type="TextualInversion", tags=["animals", "clothes"]),
        dict(card_id="anthrox-lion", name="Anthrox Lion Pride", tags=["character"], triggers=["anthroxlion"]),
        dict(card_id="anthrox-cat", name="Anthrox Cat Cafe", tags=["concept"], triggers=["anthroxcat"]),
    ]
    checkin = checkin_among_many(settings, tmp_path / "cards", cards)

    result = checkin.ask("the Anthrox textual inversion that puts clothes on animals — a badger in a tweed suit", NOW)
    assert (result.status, result.checkpoint_id) == ("selected", "anthrox")
    assert result.prompt == "a badger in a tweed suit"
