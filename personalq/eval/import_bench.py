"""Import throughput on the real Civitai metadata: cards -> SQLite + Chroma, then an index rebuild."""

from __future__ import annotations

import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from personalq.config import load_settings
from personalq.eval.civitai_cards import write_cards
from personalq.repository.embedding import embed
from personalq.repository.service import Repository


@dataclass
class ImportBenchResult:
    cards: int
    imported: int
    errors: int
    import_seconds: float
    reimport_unchanged: int
    reimport_seconds: float
    rebuild_seconds: float

    @property
    def rate(self) -> float:
        return self.imported / self.import_seconds

    def table(self) -> str:
        return "\n".join(
            [
                "| measure | value |",
                "| --- | --- |",
                f"| card files (model versions) | {self.cards} |",
                f"| imported / errors | {self.imported} / {self.errors} |",
                f"| import time (SQLite + embedding + Chroma) | {self.import_seconds:.1f} s |",
                f"| import rate | {self.rate:.0f} checkpoints/s |",
                f"| re-import: unchanged | {self.reimport_unchanged} in {self.reimport_seconds:.1f} s |",
                f"| rebuild Chroma index from SQLite | {self.rebuild_seconds:.1f} s |",
            ]
        )


def run(jsonl: Path, workdir: Path | None = None) -> ImportBenchResult:
    with tempfile.TemporaryDirectory(dir=workdir) as tmp:
        cards = Path(tmp) / "cards"
        count = write_cards(jsonl, cards)
        repository = Repository(load_settings(home=Path(tmp) / "home"))
        embed(["warm-up"])  # loading the model and opening the index are start-up costs, not import cost
        repository.dense.fingerprints()
        started = time.perf_counter()
        report = repository.import_paths([cards])
        import_seconds = time.perf_counter() - started
        again = repository.import_paths([cards])
        rebuild = repository.sync_index(rebuild=True)
        return ImportBenchResult(
            count,
            report.count("imported"),
            report.count("error"),
            import_seconds,
            again.count("unchanged"),
            again.seconds,
            rebuild.seconds,
        )
