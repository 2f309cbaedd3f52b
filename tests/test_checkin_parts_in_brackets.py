"""What a request says beside one part of a composed picture is that part's: a version or the words of one in brackets
after its name ("EDG's Fantasy Armors (Goth Armor version)", "Caenis (sialiasialis, v.1.0)"), a trained word written
whole ("corneo_dva", not the same maker's "corneo_black_cat_dva"), a maker named after it ("Top View Perspective lora
by antonio_riolo2610", whose whole name it is, beside the same maker's "Perspectives Collection", version "Top View"),
or before it in any language ("Kira_AI_GraphicsのLyingBustupShot"); a name in Latin letters in brackets after kanji is
the same name ("雷電将軍(Raiden Shogun)LoRAに"), and a spaced slash parts two names as a comma does."""

import datetime as dt

import pytest
from factories import checkin_among_many, weighted_ids

NOW = dt.datetime(2023, 7, 31, 12)
CARDS = [
    dict(card_id="brigitte", name="Corneo's Brigitte (Overwatch) Embedding", kind="textual_inversion",
         tags=["character"], triggers=["corneo_brigitte"], creator="Master_Corneo"),
    dict(card_id="dva-1", family="dva", version="1.0.0", name="Corneo's D.va (Overwatch) Embedding",
         kind="textual_inversion", tags=["character"], triggers=["corneo_dva"], creator="Master_Corneo",
         created_at="2023-01-01"),
    dict(card_id="dva-2", family="dva", version="2.0.0", name="Corneo's D.va (Overwatch) Embedding",
         kind="textual_inversion", tags=["character"], triggers=["corneo_dva"], creator="Master_Corneo",
         created_at="2023-02-01"),
    dict(card_id="blackcat-2", family="blackcat", version="2.0.0", name="Corneo's Black Cat D.va Embedding",
         kind="textual_inversion", tags=["character"], triggers=["corneo_black_cat_dva"], creator="Master_Corneo",
         created_at="2023-02-02"),
    dict(card_id="mib", version="MIB Suit and Neuralyzer V4", name="MIB Suit and Neuralyzer", tags=["clothing"],
         triggers=["MIB Suit"], creator="rulles"),
    dict(card_id="armor-base", version="Fantasy Armors", name="Fantasy Armors", tags=["clothing"],
         triggers=["MHmix"], creator="EDG", created_at="2023-04-01"),
    dict(card_id="armor-goth", version="Goth Armor", name="Fantasy Armors - by EDG", tags=["clothing"],
         triggers=["DRK_Glam"], creator="EDG", created_at="2023-05-01"),
    dict(card_id="armor-rathalos", version="Rathalos Armor", name="Fantasy Armors Rathalos Armor",
         tags=["clothing"], triggers=["rathalos armor"], creator="EDG", created_at="2023-06-01"),
    dict(card_id="caenis-1", family="caenis", version="v.1.0", name="Caenis - Fate Grand Order", tags=["character"],
         triggers=["caenis"], creator="sialiasialis", created_at="2023-03-01"),
    dict(card_id="caenis-2", family="caenis", version="v.2.0", name="Caenis - Fate Grand Order", tags=["character"],
         triggers=["summer caenis"], creator="sialiasialis", created_at="2023-04-01"),
    dict(card_id="kitchen", name="Kitchen Style", kind="textual_inversion", tags=["style", "background"],
         triggers=["Style-Kitchen"], creator="theally"),
    dict(card_id="mechanimal", name="kMechAnimal", tags=["concept"], triggers=["kMechAnimal"], creator="konyconi"),
    dict(card_id="topview", name="Top View Perspective", tags=["concept"], triggers=["from above"],
         creator="antonio_riolo2610", created_at="2023-05-19"),
    dict(card_id="perspectives", version="Top View", name="Perspectives Collection", tags=["concept"],
         triggers=["top view"], creator="antonio_riolo2610", created_at="2023-05-26"),
    dict(card_id="tower", name="Table Rpg / D&D Maps - Isometric - Tower", tags=["background"],
         triggers=["isometric tower"], creator="Tomas_Aguilar"),
    dict(card_id="raiden", name="Raiden Shogun (Genshin Impact) LoRA", tags=["character"],
         triggers=["raiden_genshin"], creator="smhtbhfampai"),
    dict(card_id="raiden-pair", name="[realistic+anime] yae miko x raiden shogun 八重神子 x 雷电将军",
         tags=["character"], triggers=["yae miko and raiden"], creator="pairmaker"),
    dict(card_id="lying", name="LyingBustupShot", tags=["pose"], triggers=["lying_bustup_shot"],
         creator="Kira_AI_Graphics"),
    dict(card_id="skadi", name="Arknights-Skadi the Corrupting Heart", tags=["character"], triggers=["redhat"],
         creator="L_A_X"),
    dict(card_id="skadi-other", name="Skadi (Arknights)", tags=["character"], triggers=["skadi_arknights"],
         creator="arkfan"),
    dict(card_id="ghibli-4", family="ghibli", version="v4.0", name="GHIBLI_Background", tags=["background"],
         triggers=["ghibli background"], creator="mccc", created_at="2023-05-01"),
    dict(card_id="ghibli-5", family="ghibli", version="v5.0", name="GHIBLI_Background", tags=["background"],
         triggers=["ghibli background"], creator="mccc", created_at="2023-06-01"),
    dict(card_id="ghibli-other", name="(Pyramid)_lora_Ghibli_Background", tags=["background"],
         triggers=["ghibli style"], creator="pyramid"),
    dict(card_id="pokemon-1", family="pokemon", version="v1.60-beta", name="Pokemon LoRA (Ken Sugimori Style)",
         tags=["style"], triggers=["sugimori ken (style)"], creator="Lykon", created_at="2023-01-01"),
    dict(card_id="pokemon-2", family="pokemon", version="v2", name="Pokemon LoRA (Ken Sugimori Style)",
         tags=["style"], triggers=["sugimori ken (style)"], creator="Lykon", created_at="2023-02-01"),
    dict(card_id="aether", name="Pokemon - Aether Foundation Employee Female", tags=["character"],
         triggers=["aether foundation employee"], creator="Idkanymore50"),
    dict(card_id="elves", name="SXZ Blood Elves [ Warcraft ]", tags=["character"], triggers=["shebelf"],
         creator="sxz"),
    dict(card_id="goblins", name="SXZ Goblins [ Warcraft ]", tags=["character"], triggers=["hewowgob"],
         creator="sxz"),
    dict(card_id="both-mai", name="kawakami mai | Musaigen no Phantom World", tags=["character", "both"],
         triggers=["kawakami_mai"], creator="phantom"),
    dict(card_id="in-container", name="in-container", tags=["concept", "container"], triggers=["in container"],
         creator="boxer"),
    dict(card_id="bottle", name="girls in glass bottle", tags=["concept", "container"], triggers=["in bottle"],
         creator="glass"),
    dict(card_id="lucy", name="Lucy Edgerunners Embedding", kind="textual_inversion", tags=["character"],
         triggers=["lucy_kushinadaV2"], creator="edge"),
]  # fmt: skip


@pytest.fixture
def checkin(settings, tmp_path):
    return checkin_among_many(settings, tmp_path / "cards", CARDS)


def test_version_words_in_brackets_after_a_part_pick_its_version(checkin):
    result = checkin.ask(
        "Corneo's Brigitte embedding plus EDG's Fantasy Armors (Goth Armor version) (0.8), hammering a glowing blade "
        "on an anvil in a smoky forge",
        NOW,
    )
    assert weighted_ids(result) == [("armor-goth", 0.8), ("brigitte", 1.0)]


def test_a_version_in_brackets_with_its_maker_picks_that_version(checkin):
    result = checkin.ask(
        "Caenis (sialiasialis, v.1.0) stirring a huge pot of stew, with theally's Kitchen Style TI for the background",
        NOW,
    )
    assert weighted_ids(result) == [("caenis-1", 1.0), ("kitchen", 1.0)]
    assert "()" not in result.prompt and "v.1.0" not in result.prompt


def test_a_trained_word_written_whole_picks_its_model(checkin):
    result = checkin.ask(
        "corneo_dva (2.0.0) in rulles' MIB Suit and Neuralyzer LoRA V4 at 0.7, standing guard beside a flying saucer",
        NOW,
    )
    assert weighted_ids(result) == [("dva-2", 1.0), ("mib", 0.7)]


def test_a_trained_word_without_a_version_asks_only_about_its_versions(checkin):
    result = checkin.ask("corneo_dva standing guard beside a crashed flying saucer", NOW)
    assert result.status == "clarify"
    assert sorted(i for option in result.options for i in option.checkpoint_ids) == ["dva-1", "dva-2"]


def test_parts_parted_by_slashes_each_with_its_maker(checkin):
    result = checkin.ask(
        "konyconi's kMechAnimal / Top View Perspective lora by antonio_riolo2610 / a robotic fox curled up in a chalk "
        "magic circle / Tomas_Aguilar's D&D Isometric Tower map as bg",
        NOW,
    )
    assert weighted_ids(result) == [("mechanimal", 1.0), ("topview", 1.0), ("tower", 1.0)]


def test_a_name_in_latin_letters_after_kanji_and_makers_before_their_parts(checkin):
    result = checkin.ask(
        "smhtbhfampaiさんの雷電将軍(Raiden Shogun)LoRAに、Kira_AI_GraphicsのLyingBustupShotを強さ0.6で組み合わせて。"
        "畳の上で腕にあごをのせて",
        NOW,
    )
    assert weighted_ids(result) == [("lying", 0.6), ("raiden", 1.0)]


def test_a_maker_in_brackets_goes_with_the_name_before_them(checkin):
    result = checkin.ask(
        "Skadi the Corrupting Heart (le LoRA de L_A_X) debout au bord d'une falaise marine, décor "
        "GHIBLI_Background de mccc (v5.0)",
        NOW,
    )
    assert weighted_ids(result) == [("ghibli-5", 1.0), ("skadi", 1.0)]
    assert "(le" not in result.prompt


def test_a_bracket_after_a_kind_word_is_the_names(checkin):
    result = checkin.ask(
        "Idkanymore50's Aether Foundation Employee lora doing paperwork in a white lab, Lykon's Pokemon LoRA (Ken "
        "Sugimori style) v2 (0.6)",
        NOW,
    )
    assert weighted_ids(result) == [("aether", 1.0), ("pokemon-2", 0.6)]
    assert result.prompt.count(")") == result.prompt.count("(")


def test_both_names_no_model(checkin):
    result = checkin.ask("SXZ Blood Elves + SXZ Goblins, both loras: a mage and a tinkerer haggling at a bazaar", NOW)
    assert weighted_ids(result) == [("elves", 1.0), ("goblins", 1.0)]


def test_a_name_written_with_a_hyphen_is_named_whole(checkin):
    result = checkin.ask(
        "lucy_kushinadaV2 (0.85) curled up asleep inside a giant teacup, in-container lora (0.7)", NOW
    )
    assert weighted_ids(result) == [("in-container", 0.7), ("lucy", 0.85)]
    assert result.prompt == "a lucy_kushinadaV2 curled up asleep inside a giant teacup, in container"


def test_a_version_written_with_a_dot_after_v_picks_it(checkin):
    result = checkin.ask("GHIBLI_Background v.4.0, a quiet village by the sea", NOW)
    assert (result.status, result.checkpoint_id) == ("selected", "ghibli-4")
