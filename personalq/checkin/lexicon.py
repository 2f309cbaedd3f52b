"""Words people use for subjects and styles, mapped to canonical terms.

Subjects cover the paper's 20 concept categories with plural and colloquial forms; anything else a person
asks for is matched against the words of the repository's own cards. Styles are canonical so that a card
tagged "realistic" answers a request for a "photo".
"""

from __future__ import annotations

import re

# nouns that make "model" a thing drawn rather than a checkpoint: "a girl model kit", "a model train", "model sheet"
MODEL_COMPOUNDS = frozenset(
    "kit kits train trains ship ships car cars plane planes figure figures sheet sheets".split()
)
# what a person who models does, after "model": "a model strutting down a runway", "a model posing"
MODEL_DOING = r"[a-z]+ing"


def a_model_of(following: str) -> bool:
    """Is "model" before ``following`` no kind of checkpoint: what it is a model of ("model kit"), or someone
    doing something ("a model strutting")?"""
    return following in MODEL_COMPOUNDS or re.fullmatch(MODEL_DOING, following) is not None


# "draw me", "make", "generate" as requests in other languages open them ("dibuja a ...", "gera a athenams ...");
# none is an English word, so one opening a request is never the picture's ("male", "mach" and "genera" are)
DRAW_ME = frozenset(
    "dibuja dibújame dibujame haz hazme dessine dessinez dessine-moi fais génère zeichne zeichnen erstelle "
    "desenhe desenha faça faca faz gere gera gerar disegna disegnami fai fammi crea "
    "gambar gambarkan buat buatkan bikin "
    "нарисуй нарисуйте сделай сгенерируй maak teken genereer wygeneruj narysuj vygeneruj nakresli generuj skapa "
    "generera çiz".split()
)

# "do you have", "is there", "I'm looking for" as other languages ask ("¿tienes la ...", "finns det en ...", "vous
# avez la ...", "cho mình xin ..."): said before the model asked for, they name nothing
ASKING_PHRASES = (
    "est-ce que vous avez", "vous avez", "avez-vous", "as-tu", "tu as", "y a-t-il", "je cherche", "cherche",
    "gibt es", "gibts", "hast du", "habt ihr", "haben sie", "ich suche", "suche",
    "finns det", "har du", "har ni", "heb je", "hebben jullie", "is er",
    "czy masz", "czy jest", "masz", "macie", "szukam",
    "у тебя есть", "у вас есть", "есть ли", "есть", "ищу",
    "vocês têm", "você tem", "tem", "tens", "têm", "procuro", "tienes", "tenés", "tienen", "hay", "busco",
    "cerco", "avete", "c'è", "esiste", "cho mình xin", "cho mình", "cho tôi", "mình xin", "có",
)  # fmt: skip
# their words, but those that are names too ("cho" chang, "xin" yan) and those too short to tell
ASKING = frozenset(word for phrase in ASKING_PHRASES for word in phrase.split() if len(word) > 2 or word == "có") - {
    "cho",
    "xin",
}

# a request written as labelled fields, one model each: "character: dehya / style: ... / outfit: ... / scene: ..."
FIELD_LABEL = re.compile(
    r"(?i)(?:^|(?<=[/|;\n]))\s*(?:character|char|subject|style|art\s*style|pose|outfit|clothing|clothes|costume"
    r"|background|bg|concept|detail|lora|embedding)\s*:\s*"
)
# where one field ends and the next begins
FIELD_BREAK = re.compile(r"[/|;\n]")

SUBJECT_SYNONYMS: dict[str, tuple[str, ...]] = {
    "dog": ("dog", "puppy", "pup", "doggo", "doggy", "doggie", "pooch", "hound", "canine"),
    "cat": ("cat", "kitty", "kitten", "kitteh", "feline"),
    "person": ("person", "people", "man", "woman", "guy", "human", "portrait", "selfie"),
    "bear": ("bear", "grizzly", "panda"),
    "horse": ("horse", "pony", "stallion", "mare", "unicorn"),
    "car": ("car", "vehicle", "automobile", "auto", "taxi", "sedan", "suv"),
    "toy": ("toy", "plushie", "plush", "plushy", "stuffed animal", "teddy", "figurine", "yoyo", "kite"),
    "watch": ("watch", "wristwatch", "clock", "timepiece", "alarm clock"),
    "bag": ("bag", "handbag", "purse", "backpack", "tote", "clutch"),
    "chair": ("chair", "seat", "armchair", "stool"),
    "house": ("house", "home", "cottage", "cabin"),
    "building": ("building", "tower", "skyscraper", "castle", "office"),
    "bridge": ("bridge",),
    "flower": ("flower", "blossom", "bloom", "rose", "tulip", "sunflower"),
    "tree": ("tree", "pine", "oak", "palm"),
    "mountain": ("mountain", "peak", "volcano", "hill"),
    "painting": ("painting", "artwork", "canvas", "palette"),
    "drawing": ("drawing", "doodle", "pencil", "crayon", "memo"),
    "logo": ("logo", "emblem", "icon", "badge", "symbol"),
    "shoe": ("shoe", "sneaker", "boot", "heel", "trainer", "footwear"),
}

STYLE_SYNONYMS: dict[str, tuple[str, ...]] = {
    "photo": (
        "photo",
        "photograph",
        "photographic",
        "photorealistic",
        "realistic",
        "realism",
        "lifelike",
        "hyperrealistic",
        "real life",
    ),
    "anime": ("anime", "manga", "cartoon", "toon", "cel shaded", "flat"),
    "sketch": ("sketch", "sketchy", "pencil sketch", "line art", "lineart"),
    "watercolor": ("watercolor", "watercolour", "aquarelle"),
    "pixel": ("pixel", "pixel art", "pixelated", "8-bit", "8bit", "16-bit", "sprite"),
    "oil painting": ("oil painting", "oil", "impasto"),
    "polaroid": ("polaroid", "vintage", "retro", "film photo"),
    "3d": ("3d", "3d render", "cgi", "blender"),
}


def singular(word: str) -> str:
    """A light singulariser, enough for nouns in requests ("puppies" -> "puppy", "boxes" -> "box")."""
    w = word.lower()
    if len(w) > 4 and w.endswith("ies"):
        return w[:-3] + "y"
    if len(w) > 4 and w.endswith(("ches", "shes", "sses", "xes")):
        return w[:-2]
    if len(w) > 3 and w.endswith("s") and not w.endswith(("ss", "us", "is")):
        return w[:-1]
    return w


def _plural_pattern(word: str) -> str:
    """``puppy`` -> ``pupp(?:y|ies)``, ``box`` -> ``box(?:es)?``, ``dog`` -> ``dog(?:s)?``."""
    if word.endswith("y") and len(word) > 2 and word[-2] not in "aeiou":
        return re.escape(word[:-1]) + "(?:y|ies)"
    return re.escape(word) + "(?:e?s)?"


def _phrase_table(table: dict[str, tuple[str, ...]]) -> list[tuple[re.Pattern, str, str]]:
    entries = []
    for canonical, phrases in table.items():
        for phrase in phrases:
            parts = phrase.split()
            words = [re.escape(w) for w in parts[:-1]] + [_plural_pattern(parts[-1])]
            entries.append((re.compile(r"\b" + r"[\s-]+".join(words) + r"\b", re.I), canonical, phrase))
    # Longer phrases first, so "pencil sketch" wins over "pencil"
    return sorted(entries, key=lambda e: -len(e[2]))


SUBJECT_PATTERNS = _phrase_table(SUBJECT_SYNONYMS)
STYLE_PATTERNS = _phrase_table(STYLE_SYNONYMS)
_SUBJECT_LOOKUP = {singular(p): c for c, ps in SUBJECT_SYNONYMS.items() for p in ps}
_STYLE_LOOKUP = {p: c for c, ps in STYLE_SYNONYMS.items() for p in ps}


def canonical_subject(word: str) -> str:
    w = singular(word.strip().lower())
    return _SUBJECT_LOOKUP.get(w, w)


def canonical_style(word: str) -> str:
    w = word.strip().lower()
    return _STYLE_LOOKUP.get(w, _STYLE_LOOKUP.get(singular(w), w))
