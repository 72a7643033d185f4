"""Reading and writing the cache's sealed files from tests, as the tool (holding the key) would."""

from __future__ import annotations

import json
from pathlib import Path

from advisor.cache_folder import KEY_NAME, TAG_CHARS, CacheFolder


def body(path: Path):
    """The decoded JSON of a sealed cache file (its tag line skipped)."""
    return json.loads(path.read_bytes()[TAG_CHARS + 1:])


def reseal(cache_root: Path, path: Path, kind: bytes, value, raw: bytes = b"") -> None:
    """Writes ``value`` as JSON (or the bytes ``raw``) to ``path``, sealed with the cache
    folder's key: what only the tool, or whoever can read the key, can do."""
    folder = CacheFolder(str(cache_root), (cache_root / KEY_NAME).read_bytes())
    path.write_bytes(folder.seal(kind, path.name, raw or json.dumps(value).encode()))
