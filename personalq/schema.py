"""The whole database schema: every package's tables on the one declarative ``Base``.

Each package owns its tables and declares them on :class:`personalq.repository.orm.Base` in its own module:
the repository its checkpoints (``repository/orm.py``), Check-in its sessions (``checkin/tables.py``), rating
its votes (``rating/tables.py``). Upper layers import the lower one, never the reverse: no module of
``personalq.repository`` imports Check-in or rating, so ``Base.metadata`` holds only the tables whose modules were
imported. That is all the runtime needs: each package's queries import their own table module, and the
migrations create tables with explicit operations, not from the metadata.

What needs every table at once imports this module instead: the Alembic environment
(``repository/migrations/env.py``, a script Alembic runs, not a module of the package; the one migration history
covers every package's tables, and its ``target_metadata`` is what autogenerate and ``compare_metadata`` read)
and the tests that check the models against the migrations. This module sits above all packages, beside
``config``, so importing it bends no layer. A package that adds a table adds its module here.
"""

from __future__ import annotations

import personalq.checkin.tables  # noqa: F401  (registers checkin_sessions)
import personalq.rating.tables  # noqa: F401  (registers preference_votes)
from personalq.repository.orm import Base

metadata = Base.metadata

__all__ = ["Base", "metadata"]
