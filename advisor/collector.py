"""Pausing Python's cyclic garbage collector around phases that allocate much and free little.

Each automatic collection traverses every live container object. While a file is parsed, or
while thousands of cached results are gathered, the live set only grows, so those traversals
find nothing to free and cost a quarter of the work. Whatever cyclic garbage the phase leaves
is collected once the collector is back on. Nested pauses leave it off until the outermost ends.
"""

from __future__ import annotations

import gc
from contextlib import contextmanager
TYPE_CHECKING = False
if TYPE_CHECKING:  # typing is not imported at run time: start-up is most of a warm run
    from typing import Iterator


@contextmanager
def collector_paused() -> Iterator[None]:
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()
