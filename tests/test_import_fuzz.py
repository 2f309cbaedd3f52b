"""Property-based fuzzing of every importer (issue 24): hostile files next to good ones, imported together.

For any mix, the import must not raise, must not open a file outside the imported folder, must import every
good file, and must leave no row, family or index entry that no successful entry accounts for. The same
generators run at scale in ``benchmarks/fuzz_import.py``.
"""

from pathlib import Path

import pytest
from hostile_files import ReadWatch, snapshot, unexplained_changes, write_batch
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from personalq.config import load_settings
from personalq.repository.service import Repository


@pytest.fixture(scope="module")
def shared_repository(tmp_path_factory) -> Repository:
    """One repository for every example: building one per example would cost most of the time budget."""
    return Repository(load_settings(home=tmp_path_factory.mktemp("fuzz-home")))


@pytest.fixture(scope="module")
def files(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("fuzz-files")


@pytest.mark.slow
@settings(
    max_examples=120, deadline=None, database=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow]
)
@given(rng=st.randoms(use_true_random=False), hostile=st.integers(1, 4), good=st.integers(1, 2))
def test_hostile_files_never_abort_leak_or_leave_rows(shared_repository, files, rng, hostile, good):
    batch = write_batch(rng, files, hostile, good)
    before = snapshot(shared_repository)
    with ReadWatch.instance().watch(batch.outside) as watch:
        report = shared_repository.import_paths([batch.folder])
    assert watch.opened == [], "read outside the imported folder"
    outcomes = {Path(o.path): o for o in report.outcomes}
    for sample in batch.samples:
        if sample.good:
            assert outcomes[sample.path].status == "imported", (outcomes[sample.path], report.outcomes)
    assert unexplained_changes(before, snapshot(shared_repository), report) == []
