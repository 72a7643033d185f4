"""Memory housekeeping: pausing Python's cyclic garbage collector around phases that allocate
much and free little, and handing freed memory back to the operating system after large files.

Each automatic collection traverses every live container object. While a file is parsed, or
while thousands of cached results are gathered, the live set only grows, so those traversals
find nothing to free and cost a quarter of the work. Whatever cyclic garbage the phase leaves
is collected once the collector is back on. Nested pauses leave it off until the outermost ends.
"""

from __future__ import annotations

import gc
import sys
from contextlib import contextmanager
TYPE_CHECKING = False
if TYPE_CHECKING:  # typing is not imported at run time: start-up is most of a warm run
    from typing import Iterator


@contextmanager
def collector_paused(keep: bool = False) -> Iterator[None]:
    """With ``keep``, for a phase whose survivors stay for the rest of the run (a checked file's
    tree and model, which the command line's project views keep): as the outermost pause ends,
    everything alive is moved to the oldest generation, which only a full collection looks at.
    Otherwise the next young collection traverses the whole new tree, and a middle one again a
    little later: a twentieth of a cold check. Cyclic garbage the phase left waits for the next
    full collection."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            if keep:
                gc.freeze()
                gc.unfreeze()  # the frozen objects go back to the oldest generation
            gc.enable()


def leave_to_exit() -> None:
    """The program is about to exit: whatever is alive now (every checked file's syntax tree and
    model, which the project views keep for the whole run) is left to the end of the process.
    Otherwise the interpreter's last collection traverses all of it, and the teardown frees it
    object by object: together a twelfth of a cold check of corpus (b). Objects made after this
    are collected as usual."""
    gc.freeze()


LARGE_FILE_BYTES = 256 * 1024
_trim = None


def release_free_memory() -> None:
    """glibc keeps freed heap for later allocations, so what earlier files left behind sits
    under the next large file's syntax tree, and a worker's peak climbs file after file. The
    runner calls this before and after each large file: malloc_trim(0) returns the free pages.
    A no-op without glibc."""
    global _trim
    if _trim is None:
        _trim = False
        if sys.platform.startswith("linux"):
            try:
                import ctypes

                _trim = ctypes.CDLL("libc.so.6").malloc_trim
            except (OSError, AttributeError):
                pass
    if _trim:
        _trim(0)
