"""Putting the chosen checkpoint's trigger into the prompt.

An embedding's token stands for its subject: generic nouns that name the subject ("dog", "puppies", "teddy bear")
are replaced by it, every occurrence, everything else left as written ("a <corgi-v3> in the park"). Another
checkpoint's trained word replaces only its name as the prompt says it ("yoruichi" -> "shihouin yoruichi"); the
picture's common words stay, because a LoRA's tags make the scene's things its subjects too ("a tuba player in a
marching band" of a marching band uniform LoRA keeps its band). Only the first of the card's subjects that the
prompt names is replaced: cards list their subjects most important first. When nothing is replaced, the trigger is
added once where it conventionally goes: in front for objects, "in <t> style" for style checkpoints. A card without a
trigger leaves the prompt unchanged: triggers are never invented.
"""

from __future__ import annotations

import re

from personalq.checkin import tokens
from personalq.checkin.intent import SLOT, SLOT_RANGE
from personalq.checkin.lexicon import SUBJECT_SYNONYMS, canonical_subject
from personalq.repository.card import StoredCheckpoint


def phrases_of(subject: str) -> list[str]:
    """Words and phrases that name one subject, synonyms included, longest first (then alphabetical: the order
    decides overlapping replacements, so it must not depend on the hash seed)."""
    canonical = canonical_subject(subject)
    phrases = {subject.lower(), *SUBJECT_SYNONYMS.get(canonical, ())}
    if " " not in subject:
        phrases.add(canonical)
    return sorted(phrases, key=lambda p: (-len(p), p))


def subject_phrases(card: StoredCheckpoint) -> list[str]:
    """Words and phrases that name any of the card's subjects, synonyms included, longest first, then alphabetical."""
    return sorted({phrase for subject in card.subjects for phrase in phrases_of(subject)}, key=lambda p: (-len(p), p))


def _naming(phrase: str) -> re.Pattern:
    """The phrase as a whole word or words (hyphen or space between them, a plural ending), never inside a trigger."""
    words = phrase.split()
    body = (
        r"[\s-]+".join(re.escape(w) for w in words[:-1]) + (r"[\s-]+" if len(words) > 1 else "") + re.escape(words[-1])
    )
    return re.compile(rf"(?<![<\w-])(?:{body})(?:e?s)?(?![\w>-])", re.I)


def _named_subject(prompt: str, card: StoredCheckpoint) -> list[str]:
    """The phrases of the first subject the prompt names, with any longer phrase of the card's other subjects
    that contains one of them ("teddy bear" when "bear" comes first), longest first, then alphabetical; none when it
    names none."""
    for subject in card.subjects:
        own = phrases_of(subject)
        if any(_naming(phrase).search(prompt) for phrase in own):
            wider = {p for other in card.subjects for p in phrases_of(other) if any(_naming(o).search(p) for o in own)}
            return sorted({*own, *wider}, key=lambda p: (-len(p), p))
    return []


def is_negative_embedding(card: StoredCheckpoint) -> bool:
    """Is ``card`` an embedding trained for the negative prompt ("EasyNegative", one tagged "negative embedding")?
    Its trigger belongs there: in the prompt it would draw what it was trained to keep out."""
    if card.kind != "textual_inversion":
        return False
    tags = {t.casefold() for t in card.tags}
    return bool(tags & {"negative", "negative embedding"}) or "negative" in tokens.squash(
        " ".join([card.name, *card.trigger_words])
    )


def with_negative(negative: str, card: StoredCheckpoint, request: str = "") -> str:
    """The negative prompt with a negative embedding's trigger added once (the person's own words first)."""
    trigger = prompt_trigger_for(card, request)
    if not trigger or trigger.casefold() in negative.casefold():
        return negative
    return f"{negative}, {trigger}" if negative else trigger


def is_style_checkpoint(card: StoredCheckpoint) -> bool:
    return not card.subjects or "style" in [t.lower() for t in card.tags] or card.name.lower().endswith(" style")


def prompt_trigger_for(card: StoredCheckpoint, prompt: str) -> str | None:
    """The trained word the prompt should carry: one the prompt already says ("autumn" of a LoRA trained with a word
    per season, for "an autumn lake"; "saten ruiko" of "saten_ruiko"), else, of trained words that are variants of
    one ("shiroko (blue archive)", "nonomi (blue archive)", ... of a pack), the one whose own words are said
    ("nonomi"), else the card's first (see :attr:`Card.prompt_triggers`: a character's name before the outfit tags
    it lists)."""
    triggers = card.prompt_triggers
    said = [t for t in triggers if re.search(rf"(?<![\w<-]){re.escape(t)}(?![\w>-])", prompt, re.I)]
    # or said with other spacing: "saten ruiko" of "saten_ruiko"
    said = said or [
        t for t in triggers if len(squashed := tokens.squash(t)) >= 6 and squashed in tokens.squash(prompt)
    ]
    if said or len(triggers) < 2:
        return (said or triggers or [None])[0]
    words = [set(tokens.words(t)) for t in triggers]
    shared = set.intersection(*words)  # the words that make them variants of one (see :func:`variants`)
    request = set(tokens.words(prompt))
    own = [len((w - shared) & request) if shared else 0 for w in words]
    return triggers[own.index(max(own))]


def variants(triggers: list[str]) -> bool:
    """Are ``triggers`` variants of one name, each calling one of a pack's characters or outfits ("shiroko (blue
    archive)", "nonomi (blue archive)"; "LeMalinDefault", "LeMalinSundress"), rather than a name and the tags of its
    training images?"""
    return len(triggers) >= 2 and bool(set.intersection(*(set(tokens.words(t)) for t in triggers)))


def _article_before(trigger: str, text: str) -> str:
    """ "an <otter-pal>" -> "a <otter-pal>": the article before the trigger, as its replaced noun had it."""
    return re.sub(r"\ban(\s+)(?=" + re.escape(trigger) + ")", r"a\1", text)


def _fill_slot(prompt: str, card: StoredCheckpoint, request: str, mark: str = SLOT, stand_in: str = "") -> str:
    """The trigger where the name stood (``mark``), or nothing there when the prompt already says a trained word;
    a card with no trained word gets ``stand_in`` there, the name as the person wrote it, when there is one.
    A trigger that opens the picture as its subject takes an article, as DreamBooth's "a <t> dog" does ("a
    <corgi-v3> in the park"); one that was a clause of its own ("zharbor, fishing boats at dawn") or names a style
    does not."""
    trained = prompt_trigger_for(card, request or SLOT_RANGE.sub(" ", prompt))
    trigger = trained or stand_in
    said = not trigger or trigger.lower() in prompt.lower()
    if trained and not said and re.match(rf"{mark}\s*\w", prompt) and not is_style_checkpoint(card):
        prompt = "a " + prompt
    text = prompt.replace(mark, "" if said else trigger)
    text = re.sub(r"\s+([,.!?;:])", r"\1", re.sub(r"\s+", " ", text)).strip(" ,.;:-–—")
    text = re.sub(r"^(?:an?|the)\s*(?=[,.;:]|$)", "", text).strip(" ,.;:-–—")
    if not said:
        text = _article_before(trigger, text)
    return text or (f"a photo of {trigger}" if trigger else "")


def _learned_token(card: StoredCheckpoint, trigger: str) -> bool:
    """Does ``trigger`` stand for the subject noun itself: an embedding's token, or a token written as one
    ("<corgi-v3>")? It then takes the noun's place ("a <corgi-v3> in the park"). Another checkpoint's trained word
    takes the place of its name only (:func:`_a_name`: "yoruichi" -> "shihouin yoruichi") and goes beside the
    picture's words, which may be the scene's own ("a tuba player in a marching band" of a marching band uniform LoRA
    keeps its band)."""
    return card.kind == "textual_inversion" or trigger.startswith("<")


def _a_name(phrase: str) -> bool:
    """Is ``phrase`` a name rather than words of the picture: a word in it no English text uses?"""
    return not all(tokens.is_english(word) for word in tokens.words(phrase))


def rewrite_prompt(
    prompt: str, card: StoredCheckpoint, request: str = "", mark: str = SLOT, stand_in: str = ""
) -> str:
    """``prompt`` with ``card``'s trigger put in once: where the person named the model when the prompt keeps
    that place (``mark``, one of :data:`~personalq.checkin.intent.SLOTS`), else for the card's subject noun ("my
    dog" -> "<biscuit-v2>"), in front, or as "in <trigger> style" for a style; unchanged when it already says a
    trained word or the card has none. The trained word is the one the ``request`` said, when it said one
    ("autumn" of a LoRA with a word per season). A card with no trained word keeps ``stand_in`` at ``mark``: the
    words the person named it with (see :func:`~personalq.checkin.reference.name_as_said`)."""
    if mark in prompt:
        return _fill_slot(prompt, card, request, mark, stand_in)
    trigger = prompt_trigger_for(card, prompt)
    if not trigger:
        return prompt
    if trigger.lower() in prompt.lower():
        return prompt
    rewritten = prompt
    for phrase in _named_subject(prompt, card):
        if not (_learned_token(card, trigger) or _a_name(phrase)):
            continue
        rewritten = _naming(phrase).sub(lambda _: trigger, rewritten)  # a trigger is text, never a template
    if rewritten != prompt:
        return _article_before(trigger, rewritten)
    if is_style_checkpoint(card):
        style = trigger if trigger.lower().endswith("style") else f"{trigger} style"
        style = style if style.lower().startswith("in ") else f"in {style}"  # a trained word "in hedcut style"
        return f"{prompt}, {style}" if prompt else f"a picture {style}"
    return f"{trigger}, {prompt}" if prompt else f"a photo of {trigger}"
