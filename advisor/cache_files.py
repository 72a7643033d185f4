"""Writing the cache's own files (result entries, the stat index, the remembered fingerprint).

Each is written to a temporary file in its folder and renamed into place, so that a concurrent
run reads either the old file or the new one, never half of one. Best effort: a cache that
cannot be written only costs time, so failures are reported as False, never raised.
"""

from __future__ import annotations

import os


def write_atomically(path: str, text: str) -> bool:
    import tempfile  # only runs that write something need it

    folder = os.path.dirname(path)
    try:
        os.makedirs(folder, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=folder, prefix=".tmp-", suffix=".json")
    except OSError:
        return False
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
        os.replace(tmp, path)
    except OSError:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        return False
    return True
