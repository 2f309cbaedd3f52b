"""The same Check-in requests typed differently: does the answer depend on how a request is typed?

Draws ``--count`` requests with a fixed seed from the single-pick blind sets given (their truth unchanged) and writes
one copy per way of typing them, each a set ``personalq bench checkin --prompts`` scores:

- ``base``: as written;
- ``lower`` / ``upper``: in small letters / in capitals;
- ``nopunct``: without commas, colons, semicolons, full stops, dashes and marks (a decimal's point kept, a request
  with a WebUI tag left as it is);
- ``typo``: two adjacent letters of one word of six letters or more swapped (the word drawn with a second fixed seed).

The scene annotations are dropped: a changed request no longer holds them verbatim, so only the selection is scored.
A drop from ``base`` to another copy is an answer that depends on the typing, not on what was asked::

    .venv/bin/python benchmarks/perturb_checkin.py --out /tmp/perturbed benchmarks/checkin-twentyfourth-blind.jsonl ...
    personalq bench checkin --prompts /tmp/perturbed/typo.jsonl --home H
"""

from __future__ import annotations

import argparse
import json
import random
import re
from collections.abc import Callable
from pathlib import Path

_LONG_WORD = re.compile(r"[A-Za-z]{6,}")
_MARKS = re.compile(r"[,;:!?—–]+|\.(?!\d)")


def _swapped(query: str, rng: random.Random) -> str:
    """Two adjacent letters inside one long word swapped, as a fast typist does."""
    found = list(_LONG_WORD.finditer(query))
    if not found:
        return query
    m = rng.choice(found)
    word, i = m.group(), rng.randrange(1, len(m.group()) - 2)
    return query[: m.start()] + word[:i] + word[i + 1] + word[i] + word[i + 2 :] + query[m.end() :]


TYPINGS: dict[str, Callable[[str, random.Random], str]] = {
    "base": lambda q, _: q,
    "lower": lambda q, _: q.lower(),
    "upper": lambda q, _: q.upper(),
    "nopunct": lambda q, _: q if "<" in q else _MARKS.sub(" ", q),
    "typo": _swapped,
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("sets", nargs="+", type=Path, help="single-pick Check-in sets (JSONL)")
    parser.add_argument("--out", type=Path, required=True, help="folder for <typing>.jsonl")
    parser.add_argument("--count", type=int, default=600)
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args()
    rows = []
    for path in sorted(args.sets):
        for line in path.read_text(encoding="utf-8").splitlines():
            row = json.loads(line)
            row["instance_id"] = f"{path.stem}:{row['instance_id']}"
            rows.append(row)
    sample = random.Random(args.seed).sample(rows, min(args.count, len(rows)))
    args.out.mkdir(parents=True, exist_ok=True)
    for name, typed in TYPINGS.items():
        rng = random.Random(args.seed + 4)
        with (args.out / f"{name}.jsonl").open("w", encoding="utf-8") as out:
            for row in sample:
                changed = {k: v for k, v in row.items() if k not in ("scene", "drop")} | {
                    "query": typed(row["query"], rng)
                }
                out.write(json.dumps(changed, ensure_ascii=False) + "\n")
    print(f"{len(sample)} of {len(rows)} requests, typed {len(TYPINGS)} ways, in {args.out}")


if __name__ == "__main__":
    main()
