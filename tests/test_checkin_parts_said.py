"""How a request says a second model, in the ways the reading once missed: the kind word in another language or
script ("стиль toxxy", "kakao stijl", "hex_d 스타일로", "jazz jack 风格", "neko girl 로라로"), a name one model
alone has opening the request ("Quiero a Sussurro sentada ...", "kogatan curled up ..."), a file's letter joined
by an underscore ("hex_d"), and a name said after "the" without the "style" its card ends with; and a name the
repository lacks opening a request in English or after another language's "draw", which is missing, not the
picture's ("frieren" is German for "to freeze"); "style" inside a name spelled whole ("the Medieval Style Armor
Suit"), a fraction between a name and what it does ("fairy pixie 0.7 resting ..."), "I'd" and an adverb after a
name ("toriel gently shooing ...") as written."""

import datetime as dt

import pytest
from factories import checkin_among_many, chosen_ids

NOW = dt.datetime(2024, 3, 1, 12)
CARDS = [
    dict(card_id="toxxy", name="Toxxy style", tags=["style"], triggers=["toxxystyle"]),
    dict(card_id="kakao", name="Kakao Style", tags=["style"], triggers=["kakaostyle"]),
    dict(card_id="jazzjack", name="Jazz Jack", tags=["style"], triggers=["jazzjack"]),
    dict(card_id="hexd", name="Hex_D style LORA", tags=["style"], triggers=["hexd_1"]),
    dict(card_id="hexmaniac", name="Hex Maniac (Pokemon) LoRA", tags=["character"], triggers=["hexmaniac"]),
    dict(card_id="hexagon", name="Hexagon hex tiles", tags=["concept"], triggers=["hex tiles"]),
    dict(card_id="ruqun", name="Elegant hanfu ruqun style", tags=["style", "hanfu"], triggers=["ru_qun"]),
    dict(card_id="bigpixel", name="Big Pixel Style", tags=["style"], triggers=["bigpixel"]),
    dict(card_id="akoami", name="Amau Ako (Blue Archive)", tags=["character"], triggers=["amau ako"]),
    dict(card_id="reisalin", name="Reisalin Stout (Atelier Ryza)", tags=["character"], triggers=["reisalin stout"]),
    dict(card_id="mizuki", name="Usami Mizuki", tags=["character"], triggers=["usami mizuki"]),
    dict(card_id="xiangling", name="Xiangling (Genshin Impact)", tags=["character"], triggers=["xiangling"]),
    dict(card_id="nekogirl", name="Nekopara NEKO GIRL", tags=["character"], triggers=["nekogirl"]),
    dict(card_id="pencil", name="Pencil drawing", tags=["style"], triggers=["pencil drawing"]),
    dict(card_id="sussurro", name="明日方舟-苏苏洛 Arknights-Sussurro", tags=["character"],
         triggers=["susurro_arknights"]),
    dict(card_id="kogatan", name="kogatan-shiny", kind="textual_inversion", tags=["character"],
         triggers=["<kogatan-shiny>"]),
    dict(card_id="glasslights", name="Glass lights", kind="textual_inversion", tags=["style"],
         triggers=["kaleidcp-3450"]),
    dict(card_id="nakiri", name="Nakiri Alice (Shokugeki no Soma)", tags=["character"], triggers=["nakiri alice"]),
    dict(card_id="kanv1", name="kanv1", kind="textual_inversion", tags=["style"], triggers=["kanv1"]),
    dict(card_id="armor", name="Medieval Style Armor Suit(中世纪风格铠甲套装) LoRa", version="v1.0", tags=["clothing"],
         triggers=["medieval armor"]),
    dict(card_id="medieval-town", name="Medieval town", tags=["background"], triggers=["medievaltown"]),
    dict(card_id="medieval-art", name="Medieval art style", tags=["style"], triggers=["medievalart"]),
    dict(card_id="kamehameha", name="Kamehameha [Concept]", tags=["concept"], triggers=["kamehameha"]),
    dict(card_id="pixie", name="Fairy Pixie - Shin Megami Tensei", tags=["character"], triggers=["SMTPixie"]),
    dict(card_id="yoruichi", name="Yoruichi Shihouin (Bleach) TI Embedding by Corneo", kind="textual_inversion",
         tags=["character"], triggers=["corneo_yoruichi"], creator="Master_Corneo"),
    dict(card_id="idol", name="ID", tags=["concept"], triggers=["idcard"]),
    dict(card_id="idol2", name="ID photo", tags=["concept"], triggers=["idphoto"]),
    dict(card_id="toriel", name="Toriel (Undertale)", tags=["character"], triggers=["toriel"]),
    dict(card_id="daisy", name="Daisy LoRA", tags=["character"], triggers=["Daisy_SM"], creator="HorridWeasel"),
    dict(card_id="daisy-made", name="Cotton candy clouds", tags=["background"], triggers=["cottoncloud"],
         creator="daisy"),
    dict(card_id="taketomi", name="Taketomijima(竹富島)", tags=["background"], triggers=["taketomi"],
         creator="RedRayz"),
    dict(card_id="jablonski", name="piotr-jablonski", kind="textual_inversion", tags=["style"],
         triggers=["<piotr-jablonski>"]),
]  # fmt: skip


@pytest.fixture
def checkin(settings, tmp_path):
    return checkin_among_many(settings, tmp_path / "cards", CARDS)


@pytest.mark.parametrize(
    ("request_text", "expected"),
    [
        ("amau ako проверяет бумаги в кабинете поздно ночью, стиль toxxy", ["akoami", "toxxy"]),
        ("reisalin stout, kruiden plukken bij een beek, kakao stijl", ["kakao", "reisalin"]),
        ("usami mizuki가 미술실에서 석고상을 스케치하는 장면, toxxy 스타일로 그려줘", ["mizuki", "toxxy"]),
        ("xiangling 在厨房颠勺, jazz jack 风格", ["jazzjack", "xiangling"]),
        ("Nekopara NEKO GIRL 로라로 빵집에서 빵 굽는 장면. Pencil drawing 로라도 같이.", ["nekogirl", "pencil"]),
    ],
)
def test_a_kind_word_in_another_language_or_script_marks_a_part(checkin, request_text, expected):
    assert chosen_ids(checkin, request_text, NOW) == expected


def test_a_korean_topic_particle_puts_the_name_after_the_kind_word(checkin):
    request = "reisalin stout 로 카페 창가에서 라떼 마시는 장면, 스타일은 kakao 로 부탁해요"
    assert chosen_ids(checkin, request, NOW) == ["kakao", "reisalin"]


@pytest.mark.parametrize(
    ("request_text", "expected"),
    [
        # capitalised inside its sentence, though "sussurro" is an Italian word too
        ("Quiero a Sussurro sentada junto a una hoguera, con el estilo Kakao al 60%.", ["kakao", "sussurro"]),
        # a word no language has
        ("kogatan curled up asleep on a doorstep, glass lights embedding", ["glasslights", "kogatan"]),
    ],
)
def test_a_name_one_model_alone_has_opens_the_request_as_a_part(checkin, request_text, expected):
    assert chosen_ids(checkin, request_text, NOW) == expected


def test_a_files_letter_after_an_underscore_is_part_of_its_name(checkin):
    result = checkin.ask("a rusty robot watering tomatoes on a balcony, hex_d style", NOW)
    assert (result.status, result.checkpoint_id) == ("selected", "hexd")


def test_a_name_said_without_the_style_its_card_ends_with_is_spelled_whole(checkin):
    """ "Elegant hanfu ruqun style" is spelled by its words without "style" (one of them English lacks); "Big Pixel
    Style" is not spelled by "big pixel", the picture's words."""
    index = checkin.cache.index()
    assert index.spells_name("elegant hanfu ruqun")
    assert not index.spells_name("big pixel")


def test_a_name_said_without_its_style_after_the_is_a_part(checkin):
    request = "nakiri alice wearing the elegant hanfu ruqun, plating a dessert at a banquet table"
    assert chosen_ids(checkin, request, NOW) == ["nakiri", "ruqun"]


@pytest.mark.parametrize(
    "request_text",
    [
        "frieren casting a flower spell in an empty field, kanv1 style",
        "Нарисуй triss merigold у камина в старом замке, стилем <piotr-jablonski>",
    ],
)
def test_a_name_the_repository_lacks_beside_a_model_is_missing(checkin, request_text):
    result = checkin.ask(request_text, NOW)
    assert (result.status, result.checkpoints) == ("no_match", [])


def test_a_kind_word_inside_a_name_spelled_whole_is_a_word_of_it(checkin):
    """ "Style" inside "Medieval Style Armor Suit" parts no two models."""
    request = (
        "a knight firing a beam from his palms. Use the Medieval Style Armor Suit v1.0 and the Kamehameha concept LoRA"
    )
    assert chosen_ids(checkin, request, NOW) == ["armor", "kamehameha"]


def test_a_fraction_between_a_name_and_what_it_does_is_a_strength(checkin):
    result = checkin.ask("Fairy Pixie 0.7 resting on a lotus leaf above a misty river, kakao style at 0.5", NOW)
    assert [(c.checkpoint_id, c.weight) for c in result.checkpoints] == [("pixie", 0.7), ("kakao", 0.5)]


def test_a_pronoun_with_its_verb_written_on_names_nothing(checkin):
    """ "I'd" is no "ID" model."""
    request = "I'd like Corneo's Yoruichi embedding firing a beam across a canyon, using the Kamehameha concept LoRA"
    assert chosen_ids(checkin, request, NOW) == ["kamehameha", "yoruichi"]


def test_an_adverb_after_a_name_opens_the_picture(checkin):
    result = checkin.ask("Toriel gently shooing a spider out of her kitchen window with a dish towel", NOW)
    assert (result.status, result.checkpoint_id) == ("selected", "toriel")
    assert "gently shooing a spider" in result.prompt


def test_a_name_before_a_japanese_possessive_and_a_kind_word_is_the_models(checkin):
    """ "DaisyのLoRA" is Daisy's LoRA, though someone called daisy makes models too."""
    request = (
        "DaisyのLoRAで、白い砂の道を自転車で走っているところを描いて。背景はRedRayzさんのTaketomijimaをウェイト0.7で。"
    )
    result = checkin.ask(request, NOW)
    assert [(c.checkpoint_id, c.weight) for c in result.checkpoints] == [("daisy", 1.0), ("taketomi", 0.7)]


@pytest.mark.parametrize(
    ("said", "weight"),
    [("with the Anim Art Style at 0.6.", 0.6), ("avec le Gothic Style de HADES06 à 0,5.", 0.5)],
)
def test_a_strength_before_a_sentences_full_stop_is_read(said, weight):
    from personalq.checkin.strength import read_strengths

    assert [s.weight for s in read_strengths(said)] == [weight]
