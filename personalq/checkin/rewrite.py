"""Putting the chosen checkpoint's trigger into the prompt.

Generic nouns that name the checkpoint's subject ("dog", "puppies", "teddy bear") are replaced by the
canonical trigger, every occurrence, everything else left as written. Only the first of the card's subjects
that the prompt names is replaced: cards list their subjects most important first, and the later ones are often
scenery the training images shared (a kohya LoRA of a corgi tagged "beach"), which the prompt means literally.
When nothing in the prompt names the
subject, the trigger is added once where it conventionally goes: in front for objects, "in <t> style" for
style checkpoints. A card without a trigger leaves the prompt unchanged: triggers are never invented.
"""

from __future__ import annotations

import re

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


def is_style_checkpoint(card: StoredCheckpoint) -> bool:
    return not card.subjects or "style" in [t.lower() for t in card.tags] or card.name.lower().endswith(" style")


def rewrite_prompt(prompt: str, card: StoredCheckpoint) -> str:
    trigger = card.canonical_trigger
    if not trigger:
        return prompt
    if trigger.lower() in prompt.lower():
        return prompt
    rewritten = prompt
    for phrase in _named_subject(prompt, card):
        rewritten = _naming(phrase).sub(lambda _: trigger, rewritten)  # a trigger is text, never a template
    if rewritten != prompt:
        return re.sub(r"\ban(\s+)(?=" + re.escape(trigger) + ")", r"a\1", rewritten)
    if is_style_checkpoint(card):
        style = trigger if trigger.lower().endswith("style") else f"{trigger} style"
        return f"{prompt}, in {style}" if prompt else f"a picture in {style}"
    return f"{trigger}, {prompt}" if prompt else f"a photo of {trigger}"
