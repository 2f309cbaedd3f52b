"""Large tensors reuse freed memory instead of mapping fresh pages for every allocation.

glibc serves allocations above its mmap threshold (128 KiB to 32 MiB, adjusted dynamically) with fresh ``mmap``
pages and returns them on free, so every layer output of a UNet step at 512x512 (tens of MB each) is page-faulted
in anew, which on a small VM costs several times the work done on the tensor itself (figures: docs/architecture.md,
Integer kernels). Raising the mmap and trim thresholds keeps freed blocks in the heap for the next step, which is
what the jemalloc / tcmalloc preloads recommended for PyTorch CPU inference achieve; ``mallopt`` does it in process,
with no preload. The cost is that the heap keeps its high-water mark instead of shrinking between requests, which a
server that holds its models resident expects anyway.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import functools
import logging

log = logging.getLogger(__name__)

M_TRIM_THRESHOLD = -1
M_MMAP_THRESHOLD = -3
THRESHOLD = 1 << 30  # larger allocations are rare (and then mapped as before)


@functools.lru_cache(maxsize=1)
def reuse_freed_memory() -> bool:
    """Set glibc's thresholds once per process; False where the C library is not glibc (nothing changes)."""
    name = ctypes.util.find_library("c")
    try:
        libc = ctypes.CDLL(name)
        mallopt = libc.mallopt
    except (OSError, AttributeError, TypeError):
        return False
    applied = bool(mallopt(M_MMAP_THRESHOLD, THRESHOLD)) and bool(mallopt(M_TRIM_THRESHOLD, THRESHOLD))
    log.debug("glibc mmap/trim thresholds %s", "raised" if applied else "unchanged")
    return applied
