"""Start-up of a PersonalQ process: settings -> repository -> index check -> bundled demo import.

The app, the Space and the CLI's ``serve`` all start through :func:`start`, so they behave the same.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

from personalq.bundled import cards_dir
from personalq.config import Settings
from personalq.repository.index import SyncReport
from personalq.repository.service import ImportReport, Repository

log = logging.getLogger(__name__)


@dataclass
class Runtime:
    settings: Settings
    repository: Repository
    index_sync: SyncReport  # what start-up patched in the dense index
    demo_import: ImportReport | None = None


def start(settings: Settings, import_demo: bool = True) -> Runtime:
    repository = Repository(settings)
    report = repository.sync_index()
    if report.changed:
        log.info("dense index patched from the database: %s", report)
    demo_import = None
    cards = cards_dir(settings)
    if import_demo and cards.is_dir() and repository.count() == 0:
        demo_import = repository.import_paths([cards])
        log.info("bundled demo zoo imported: %s", demo_import.summary())
    return Runtime(settings, repository, report, demo_import)
