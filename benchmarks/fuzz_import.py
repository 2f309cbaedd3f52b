"""Fuzz the importers at scale with the generators of tests/hostile_files.py (issue 24).

Writes batches of hostile files (cards, Civitai metadata, kohya headers, diffusers and textual-inversion
folders, symlink layouts) next to good ones, imports each batch into one repository, and counts what must
stay at zero: aborted imports, files opened outside the imported folder, rows changed by refused files, and
good files that did not import.

    HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 .venv/bin/python benchmarks/fuzz_import.py --files 5000
"""

from __future__ import annotations

import argparse
import collections
import logging
import random
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

from hostile_files import ReadWatch, snapshot, unexplained_changes, write_batch  # noqa: E402

from personalq.config import load_settings  # noqa: E402
from personalq.repository.service import Repository  # noqa: E402

log = logging.getLogger("fuzz_import")
UNANTICIPATED = "cannot import "  # how personalq.repository.importers._guarded words a failure no importer foresaw


@dataclass
class Figures:
    samples: int = 0
    files: int = 0
    good: int = 0
    imports: int = 0
    aborted: int = 0
    read_outside: int = 0
    rows_changed_by_refused: int = 0
    good_not_imported: int = 0
    unanticipated: int = 0  # errors only the importers' safety net caught (a generic message, a logged traceback)
    statuses: collections.Counter = field(default_factory=collections.Counter)
    by_generator: collections.Counter = field(default_factory=collections.Counter)
    seconds: float = 0.0

    def table(self, settings: str) -> str:
        rows = [
            ("entries generated (files, folders, links)", f"{self.samples:,}"),
            ("files on disk", f"{self.files:,}"),
            ("good entries among them", f"{self.good:,}"),
            ("imports (one per batch)", f"{self.imports:,}"),
            ("aborted imports", f"{self.aborted:,}"),
            ("files read outside the imported folder", f"{self.read_outside:,}"),
            ("rows changed by refused files", f"{self.rows_changed_by_refused:,}"),
            ("good entries that did not import", f"{self.good_not_imported:,}"),
            ("errors caught only by the safety net (no specific message)", f"{self.unanticipated:,}"),
            ("outcomes", ", ".join(f"{n:,} {s}" for s, n in sorted(self.statuses.items()))),
            ("entries by generator", ", ".join(f"{n:,} {g}" for g, n in sorted(self.by_generator.items()))),
            ("wall time", f"{self.seconds:.1f} s ({self.samples / self.seconds:,.0f} entries/s)"),
        ]
        lines = [settings, "", "| measure | value |", "| --- | --- |"]
        return "\n".join(lines + [f"| {k} | {v} |" for k, v in rows])


def run_batch(
    repository: Repository, rng: random.Random, base: Path, size: int, good_share: float, figures: Figures
) -> None:
    good = max(1, round(size * good_share))
    batch = write_batch(rng, base, size - good, good)
    figures.samples += len(batch.samples)
    figures.files += batch.files()
    figures.good += sum(s.good for s in batch.samples)
    figures.by_generator.update(f"{'good' if s.good else 'hostile'} {s.generator}" for s in batch.samples)
    before = snapshot(repository)
    figures.imports += 1
    with ReadWatch.instance().watch(batch.outside) as watch:
        try:
            report = repository.import_paths([batch.folder])
        except Exception:
            log.exception("import of %s aborted", batch.folder)
            figures.aborted += 1
            return
    figures.read_outside += len(watch.opened)
    for path in watch.opened:
        log.error("read outside the imported folder: %s", path)
    figures.statuses.update(o.status for o in report.outcomes)
    figures.unanticipated += sum(o.message.startswith(UNANTICIPATED) for o in report.outcomes if o.status == "error")
    changes = unexplained_changes(before, snapshot(repository), report)
    figures.rows_changed_by_refused += len(changes)
    for change in changes:
        log.error("%s: %s", batch.folder, change)
    outcomes = {Path(o.path): o for o in report.outcomes}
    for sample in batch.samples:
        if sample.good and (sample.path not in outcomes or outcomes[sample.path].status != "imported"):
            figures.good_not_imported += 1
            log.error("good entry %s did not import: %s", sample.path, outcomes.get(sample.path))


def main(argv: list[str] | None = None) -> Figures:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--files", type=int, default=5000, help="entries to generate (at least this many)")
    parser.add_argument("--batch", type=int, default=50, help="entries per import")
    parser.add_argument("--good-share", type=float, default=0.3, help="share of well-formed entries in a batch")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(levelname)s %(name)s: %(message)s")
    logging.getLogger("personalq.repository.importers").setLevel(
        logging.ERROR
    )  # unexpected failures are counted, not echoed
    rng = random.Random(args.seed)
    figures = Figures()
    with tempfile.TemporaryDirectory(prefix="fuzz-import-") as tmp:
        repository = Repository(load_settings(home=Path(tmp) / "home"))
        started = time.perf_counter()
        while figures.samples < args.files:
            run_batch(repository, rng, Path(tmp) / "files", args.batch, args.good_share, figures)
            if figures.imports % 20 == 0:
                log.info(
                    "%d entries, %d imports, %.0f s", figures.samples, figures.imports, time.perf_counter() - started
                )
        figures.seconds = time.perf_counter() - started
    print(figures.table(f"{args.batch} entries per import, {args.good_share:.0%} of them good, seed {args.seed}"))
    return figures


if __name__ == "__main__":
    main()
