"""Putting the chosen checkpoint's trigger into the prompt.

Generic nouns that name the checkpoint's subject ("dog", "puppies", "teddy bear") are replaced by the
canonical trigger, every occurrence, everything else left as written. When nothing in the prompt names the
subject, the trigger is added once where it conventionally goes: in front for objects, "in <t> style" for
style checkpoints. A card without a trigger leaves the prompt unchanged: triggers are never invented.
"""

from __future__ import annotations

import re

from personalq.checkin.lexicon import SUBJECT_SYNONYMS, canonical_subject
from personalq.repository.card import StoredCheckpoint


def subject_phrases(card: StoredCheckpoint) -> list[str]:
    """Words and phrases that name the card's subject, synonyms included, longest first."""
    phrases = set()
    for subject in card.subjects:
        phrases.add(subject.lower())
        canonical = canonical_subject(subject)
        phrases.update(SUBJECT_SYNONYMS.get(canonical, ()))
        if " " not in subject:
            phrases.add(canonical)
    return sorted(phrases, key=len, reverse=True)


def is_style_checkpoint(card: StoredCheckpoint) -> bool:
    return not card.subjects or "style" in [t.lower() for t in card.tags] or card.name.lower().endswith(" style")


def rewrite_prompt(prompt: str, card: StoredCheckpoint) -> str:
    trigger = card.canonical_trigger
    if not trigger:
        return prompt
    if trigger.lower() in prompt.lower():
        return prompt
    rewritten = prompt
    for phrase in subject_phrases(card):
        words = phrase.split()
        body = r"[\s-]+".join(re.escape(w) for w in words[:-1]) + (r"[\s-]+" if len(words) > 1 else "") + re.escape(words[-1])
        pattern = re.compile(rf"(?<![<\w-])(?:{body})(?:e?s)?(?![\w>-])", re.I)
        rewritten = pattern.sub(lambda _: trigger, rewritten)  # a trigger is text, never a replacement template
    if rewritten != prompt:
        return re.sub(r"\ban(\s+)(?=" + re.escape(trigger) + ")", r"a\1", rewritten)
    if is_style_checkpoint(card):
        style = trigger if trigger.lower().endswith("style") else f"{trigger} style"
        return f"{prompt}, in {style}" if prompt else f"a picture in {style}"
    return f"{trigger}, {prompt}" if prompt else f"a photo of {trigger}"
