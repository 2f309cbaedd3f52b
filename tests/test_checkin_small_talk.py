"""Small talk to the assistant is no part of the request: greetings, thanks, emoji and a sentence about oneself name no
model and leave the prompt; a version taken back ("v2, no wait, the first one") is not the one asked for."""

import datetime as dt

import pytest
from factories import checkin_among_many

from personalq.checkin.small_talk import without_small_talk

NOW = dt.datetime(2024, 3, 1, 12)
CARDS = [
    dict(card_id="lyra-1", name="Lyra Venn", family="lyra", version="v1", tags=["character"], triggers=["lyravenn"],
         created_at="2023-03-02", creator="velvetnib"),
    dict(card_id="lyra-2", name="Lyra Venn", family="lyra", version="v2", tags=["character"], triggers=["lyravenn"],
         created_at="2023-06-02", creator="ormondfan"),
    dict(card_id="hana", name="Tsukishiro Hana", tags=["character"], triggers=["tsukihana"]),
    dict(card_id="grit", name="Gritmuscle", kind="textual_inversion", triggers=["gritmuscle"]),
    dict(card_id="quill", name="Quill Marrow", tags=["character"], triggers=["quillmarrow"], creator="nib_"),
]  # fmt: skip


@pytest.fixture
def checkin(settings, tmp_path):
    return checkin_among_many(settings, tmp_path / "cards", CARDS)


@pytest.mark.parametrize(
    "request_text, prompt",
    [
        ("hey! could you make me tsukishiro hana reading in a library? thanks!!", "a tsukihana reading in a library"),
        # a sentence about oneself, before or after, is no name ("No checkpoint is called or about finally")
        (
            "ok so i finally got around to it — can you do tsukishiro hana in a library pls 🙏",
            "a tsukihana in a library",
        ),
        ("hi there :) i love this app. tsukishiro hana at the beach, sunset. ty!", "a tsukihana at the beach, sunset"),
        ("tsukishiro hana in a library. i've been waiting for this forever lol", "a tsukihana in a library"),
        ("tsukishiro hana in a library, i'll upscale it later", "a tsukihana in a library"),
        ("Hola! tsukishiro hana en la playa, gracias 🙏", "a tsukihana en la playa"),
        ("TSUKISHIRO HANA reading a book, THANK YOU", "a tsukihana reading a book"),
        ("ummm could i have tsukishiro hana at a cafe? ty in advance", "a tsukihana at a cafe"),
        ("quick one: tsukishiro hana lroa at a cafe", "a tsukihana at a cafe"),  # "lora" typed in a hurry
        ("heyy so tsukishiro hana at a cafe. love that artist sm", "a tsukihana at a cafe"),  # stretched, no subject
        ("ok last one for tonight i promise 😅 tsukishiro hana at a cafe", "a tsukihana at a cafe"),
        # the subject said again as a pronoun: the trigger stands for her; "w/" stays as written
        (
            "hiii 👋 do u have the tsukishiro hana lora?? want her doing a sword pose on a cliff w/ a huge sunset, ty",
            "tsukihana. doing a sword pose on a cliff w/ a huge sunset",
        ),
        (
            "got the tsukishiro hana lora? she should be swinging a naginata in a snowy courtyard, thx!!",
            "tsukihana. swinging a naginata in a snowy courtyard",
        ),
        # a sentence of the picture stays, whoever says it
        (
            "i want tsukishiro hana on a beach. i think she'd look great in the rain",
            "a tsukihana on a beach. i think she'd look great in the rain",
        ),
    ],
)
def test_talk_names_nothing_and_leaves_the_prompt(checkin, request_text, prompt):
    result = checkin.ask(request_text, NOW)
    assert (result.status, result.checkpoint_id, result.prompt) == ("selected", "hana", prompt)


def test_a_version_taken_back_is_not_the_one_asked_for(checkin):
    result = checkin.ask("lyra venn v2, no wait, the first one, on a beach", NOW)
    assert (result.checkpoint_id, result.prompt) == ("lyra-1", "lyravenn, on a beach")
    result = checkin.ask("lyra venn but the older one plz, at a cafe", NOW)  # "but" goes with what it led into
    assert (result.checkpoint_id, result.prompt) == ("lyra-1", "lyravenn, at a cafe")
    result = checkin.ask("lyra venn, i mean the older one, at a cafe", NOW)
    assert (result.checkpoint_id, result.prompt) == ("lyra-1", "lyravenn, at a cafe")
    result = checkin.ask("lyra venn, sorry i meant tsukishiro hana, at a cafe", NOW)  # a name taken back
    assert (result.checkpoint_id, result.prompt) == ("hana", "tsukihana, at a cafe")
    result = checkin.ask("the lyra venn lora from march 2nd, no wait, june 2nd i mean. her reading at a cafe", NOW)
    assert result.checkpoint_id == "lyra-2"  # a date taken back
    # an emoji ends what was said before it
    result = checkin.ask("gym pic time 💪 the gritmuscle TI, a girl deadlifting in a garage gym", NOW)
    assert result.checkpoint_id == "grit" and "a girl deadlifting in a garage gym" in result.prompt
    # a handle's underscore before its possessive ("nib_'s"), and one typed without its apostrophe
    result = checkin.ask("nib_'s quill marrow lora, at a cafe", NOW)
    assert (result.checkpoint_id, result.prompt) == ("quill", "quillmarrow, at a cafe")
    result = checkin.ask("velvetnibs lyra venn at a cafe", NOW)
    assert (result.checkpoint_id, result.prompt) == ("lyra-1", "a lyravenn at a cafe")
    result = checkin.ask("lyra venn pls!!! the one ormondfan made. cafe vibes", NOW)  # and one said to have made it
    assert (result.checkpoint_id, result.prompt) == ("lyra-2", "lyravenn. cafe vibes")


def test_talk_words_that_are_names_or_the_whole_message_stay():
    assert without_small_talk("ty lee at the beach") == "ty lee at the beach"  # "ty" closes a message, it opens none
    assert without_small_talk("thanks!") == "thanks!"  # nothing else to read: Check-in says what it can
    listed = "lyra 0.8, film grain 0.4 - posing in a booth"
    assert without_small_talk(listed) == listed
