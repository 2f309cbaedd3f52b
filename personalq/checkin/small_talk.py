"""What in a chat message is small talk to the assistant, not the request: greetings, thanks, laughter, emoji, a
sentence or clause about oneself ("ok so i finally got around to it", "i love this app", "..., i'll upscale it later"),
and a version or a name taken back ("v2, no wait", "sorry i meant ...").

People write to a chat as they write to a person. None of it picks a model or belongs in the picture, and a word of
it read as a name ("finally", "app") asks for a model nobody has, so it leaves the message before Check-in reads it.
Only what is plainly talk leaves: a sentence or clause with a word English does not use (a name) stays, and so does one
that asks for something ("i want her on a beach") or says something of the picture.
"""

from __future__ import annotations

import re

from personalq.checkin.tokens import is_english

# said to open a message
_GREETINGS = (
    "hi there", "hey there", "hello there", "good morning", "good afternoon", "good evening", "hi", "hey", "hello",
    "hiya", "heya", "howdy", "yo", "greetings", "hola", "buenas", "bonjour", "salut", "coucou", "hallo", "servus",
    "moin", "ciao", "salve", "olá", "ola", "oi", "opa", "eae", "e aí", "oye", "привет", "здравствуйте", "hej", "hei",
    "cześć", "merhaba", "xin chào", "こんにちは", "こんばんは", "やあ", "你好", "您好", "안녕하세요", "안녕",
)  # fmt: skip
# said to close a message, or a sentence of it
_THANKS = (
    "thanks a lot", "thanks so much", "thanks in advance", "thank you so much", "thank you very much", "thank you",
    "thank u", "thanks", "thx", "thnx", "tnx", "tysm", "tyvm", "ty", "much appreciated", "appreciate it",
    "you're the best", "youre the best", "you rock", "lol", "lmao", "rofl", "haha", "hahaha", "hehe",
    "muchas gracias", "gracias", "merci beaucoup", "merci", "vielen dank", "danke schön", "danke", "grazie mille",
    "grazie", "obrigado", "obrigada", "valeu", "спасибо", "dziękuję", "dzięki", "teşekkürler", "tack", "bedankt",
    "dank je", "cảm ơn", "ありがとうございます", "ありがとう", "よろしくお願いします", "よろしく", "お願いします",
    "おねがいします", "お願い", "おねがい", "谢谢", "謝謝", "多谢", "感谢", "拜托了",
    "감사합니다", "고마워요", "고마워", "부탁해요", "부탁해", "부탁드려요",
)  # fmt: skip
# what opens a sentence without saying anything: "ok so", "well", "anyway"
_FILLERS = r"(?:ok(?:ay)?|so|well|alright|um+|uh+|hmm+|anyway|btw|also|yeah|yes|oh|ah|lol)"


def _stretched(phrase: str) -> str:
    """``phrase`` with each Latin letter typed any number of times, as chat stretches them ("heyy", "hiii", "thxx")."""
    return "".join(re.escape(c) + "+" if c.isascii() and c.isalpha() else re.escape(c) for c in phrase)


def _phrases(phrases: tuple[str, ...]) -> str:
    """One alternation, longest first, each phrase whole (Latin ones between word boundaries, stretched)."""
    return "|".join(
        rf"(?<!\w){_stretched(p)}(?!\w)" if p.isascii() else re.escape(p)
        for p in sorted(phrases, key=len, reverse=True)
    )


# emoji and the marks that join or vary them, and arrows: each ends what was said before it ("... pic time 💪 the
# missymuscle TI", "... chokehold 😭 wiz_'s marin", "lora → marin sewing")
_EMOJI = re.compile(r"[\U0001F000-\U0001FAFF\u2600-\u27BF\u2B50\u2B55\u200D\uFE0F\u2190-\u21FF]+")
_EMOTICON = re.compile(r"(?<![\w:/<])(?:[:;=]-?[)(DPpO3/\\|]+|<3+|\^_?\^|T_T)(?![\w>])")  # "uwu" may be a name
_GREETING = re.compile(rf"(?i)^\s*(?:{_phrases(_GREETINGS)})(?:\s*[!.,~]+|\s+(?=\S))\s*")
# what leads into a request before a colon or a comma, and hesitation: "quick one:", "ok so,", "next:", "ummm"
_LEAD_IN = re.compile(
    r"(?i)^\s*(?:(?:ok(?:ay)?|so|and|now|next|also|another|one\s+more|real\s+quick|quick)"
    r"(?:\s+(?:one|question|request|thing|ask))?\s*[:,!.–—-]+\s*"
    r"|(?:u+m+|u+h+|h+m+|e+r+m+)\b[\s,.]*)+"  # "so my friend runs ...": "so" keeps "my friend" from opening a name
)
# (a run of separators is tried from its start only: from inside it no match could begin that did not begin there, and
# trying every place in a long run of spaces took a second)
_THANKING = re.compile(
    rf"(?i)(?<![\s,;:.、-])[\s,;:.、-]*(?:{_phrases(_THANKS)})(?:\s+in\s+advance)?(?:\s*[!.~〜)]+)?(?=\s*(?:[.!?。]|$))"
)
_MONTH = r"(?:jan|feb|mar|apr|may|jun|jul|aug|sep|sept|oct|nov|dec)[a-z]*\.?"
# a version or a date taken back: "v2, no wait, the first one", "the newer one, actually the older one", "april 1st,
# no wait, april 2nd"
_CORRECTION = re.compile(
    r"(?i)(?:\bv(?:er(?:sion)?)?\s*\d+(?:\.\d+)*|\b\d+(?:\.\d+)+|\bthe\s+[\w-]+\s+(?:one|version)"
    rf"|\b{_MONTH}\s+\d{{1,2}}(?:st|nd|rd|th)?|\b\d{{1,2}}(?:st|nd|rd|th)?\s+(?:of\s+)?{_MONTH})\s*[,;.]?\s*"
    r"(?:no\s*,?\s*wait|wait\s*,?\s*no|oops|sorry|actually|i\s+mean|scratch\s+that|no\s+no|nein,?\s*warte"
    r"|no,?\s*espera|non,?\s*attends|no,?\s*aspetta)\b(?!\s*(?:[.!?]|$))[\s,;:.-]*"  # what replaces it follows
)
# a name taken back: "lyra venn, sorry i meant tsukishiro hana, ..."
_NAME_CORRECTION = re.compile(
    r"(?i)(?:^|(?<=[.!?;]))\s*(?:[^\s,.;!?]+\s+){0,3}[^\s,.;!?]+[,;.]\s*(?:(?:no\s*,?\s*)?wait|sorry|oops|no)?[\s,]*"
    r"(?:i\s+meant|(?<=\s)(?:i\s+mean)(?=\s*,))[\s,:]*"
)
# a sentence about oneself: "i finally got around to it", "ok last one for tonight i promise", "we tried it
# yesterday", or chat with no subject: "love that artist", "idk if i spelled that right" ("my teddy bear" is a model)
_ABOUT_ONESELF = re.compile(
    rf"(?i)\b(?:i|i'm|im|i've|ive|i'd|i'll|we|we're|we've)\b|^(?:{_FILLERS}[\s,]+)*(?:just\s+wanted"
    r"|love\s+(?:that|this|it|these|those|your)|hope|idk|tbh|imo|can'?t\s+wait|not\s+sure|no\s+idea)\b"
)
# a sentence that asks for the picture or the model, however it begins, or says which model: "i want her on a beach",
# "i'd like it at night", "i mean the older one", "the negative embedding i got in july"
_ASKS = re.compile(
    r"(?i)\b(?:want|wanna|need|like|looking|search|searching|draw|make|render|generate|create|do|give|show"
    r"|try|see|imagine|imagining|picture|picturing|thinking|put|pick|load|version|older|newer|oldest|newest|latest"
    r"|previous|original|earlier|lora|loras|model|models|style|styles|embedding|embeddings|checkpoint|ti|lycoris"
    r"|locon|downloaded|trained|uploaded|saved|yesterday|today|ago|recently)\b"
    rf"|\b{_MONTH}(?!\w)"
)
# what a sentence about the picture says: who is in it, where, in what, what it is ("i think she'd look great in the
# rain", "i'm doing a retro garage poster for my dad")
_PICTURE = re.compile(
    r"(?i)\b(?:she|he|her|him|his|hers|she's|he's|she'd|he'd|they|them|their"
    r"|poster|wallpaper|cover|portrait|illustration|painting|drawing|sketch|image|pic|picture|photo|banner|logo"
    r"|icon|sticker|thumbnail|pfp|avatar|scene|shot"
    r"|(?:in|on|at|with|under|by|near|inside|wearing|holding)\s+(?:a|an|the|some|her|his|their))\b"
)
# where a sentence or a clause ends: a talk clause may follow a comma ("..., i'll upscale it later")
_SENTENCE_END = re.compile(r"((?<=[.!?])\s+|\s+[—–]\s+|\s+-\s+|\n+|[,;]\s*)")


def _is_talk(sentence: str) -> bool:
    """A sentence or clause about oneself made of English words only (no name), asking for nothing and saying nothing
    of the picture."""
    if not _ABOUT_ONESELF.search(sentence) or _ASKS.search(sentence) or _PICTURE.search(sentence):
        return False
    words = re.findall(r"[^\W\d_]+(?:['’][^\W\d_]+)?", sentence)
    return len(words) > 2 and all(is_english(w.replace("’", "'")) for w in words)  # "my oc" is who is drawn


def without_small_talk(text: str) -> str:
    """``text`` with its talk taken out; ``text`` itself when nothing else is left ("thanks!")."""
    said = _EMOTICON.sub(" ", _EMOJI.sub(". ", text))
    for _ in range(2):  # "hi there :) hello,", "hey quick one:"
        said = _LEAD_IN.sub("", _GREETING.sub("", said))
    said = _NAME_CORRECTION.sub("", _CORRECTION.sub("", said))
    # "lyra venn, i mean the older one", "april 2nd i mean": what it means stays
    said = re.sub(r"(?i)(?<=[,;.]\s)i\s+mean\s+|(?<!\s)\s+i\s+mean(?=\s*(?:[,.;!?]|$))", "", said)
    pieces = _SENTENCE_END.split(said)  # sentences, each with the break after it
    sentences = [(pieces[k], pieces[k + 1] if k + 1 < len(pieces) else "") for k in range(0, len(pieces), 2)]
    if sum(1 for sentence, _ in sentences if sentence.strip()) > 1:
        kept = "".join(s + end for s, end in sentences if not _is_talk(s.strip(" .!?,")))
        said = kept if kept.strip() else said
    said = _THANKING.sub("", said)
    # a question or an exclamation to the assistant is no mark of the picture: a sentence break inside, nothing at
    # the end ("the ormondfan one?? at the park", "thanks!!")
    said = re.sub(r"\s*[!?¿¡]*[!?]+(?=\s+\S)", ".", " ".join(said.split()))
    said = re.sub(r"(?:\s*[,;:]?\s*\.)+(?=\s|$)", ".", re.sub(r"^[\s.]+", "", said))  # the breaks an emoji left
    said = said.strip(" ,;:.-—–!?¿¡、。")
    return said if re.search(r"\w", said) else text
