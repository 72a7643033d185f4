"""The stat index: which files are unchanged since a run found them clean, told by `stat` alone.

The result cache is keyed by a file's bytes, so a warm run would still read and hash every
file. This index lets it skip that for the files that matter most, the clean ones, the way
git's index does: for each file found clean from one working folder it keeps the file's stat
signature (device, inode, size, mtime and ctime, in nanoseconds) as it was just before the file
was read, and the configuration it was checked under. A file whose signature still matches,
under the same tool and configuration, is clean without being opened. A file with findings is
not indexed: it is read, hashed and answered from the result cache as before, and its text is
needed anyway to show the findings.

Why a matching signature is enough: any write to a file moves its ctime forward, and nothing
short of changing the system clock sets a ctime back. The one gap is a write that lands in the
same clock tick as the signature was taken and keeps the size: the next signature would look
the same with other bytes behind it (git calls this "racily clean"). So a signature is only
recorded when the file's mtime and ctime are at least RACY_MARGIN_NS older than the run's start:
a later write then gets a later ctime, on file systems with coarse timestamps too (FAT's 2 s).
A file edited in the last seconds is simply read and hashed again on the next run.

One JSON file per working folder (its real path, hashed), under the cache folder's
`index-v1/`, for one tool fingerprint (another tool version starts afresh). It is written only
when something changed: to a temporary file renamed into place, after merging what a
concurrent run may have written meanwhile. An index that does not decode is ignored. Entries
are bounded per file, and index files per cache folder.
"""

from __future__ import annotations

import hashlib
import json
import os
import time
TYPE_CHECKING = False
if TYPE_CHECKING:  # typing is not imported at run time: start-up is most of a warm run
    from typing import Dict, List, Optional

FORMAT = 1
RACY_MARGIN_NS = 3_000_000_000
MAX_ENTRIES = 200_000  # per working folder
MAX_INDEX_FILES = 256  # working folders per cache folder

# One entry: [st_dev, st_ino, st_size, st_mtime_ns, st_ctime_ns, configuration number]
Entry = list
ENTRY_LENGTH = 6


def index_folder(cache_root: str) -> str:
    """Where the index files live, beside the result cache's entries."""
    return os.path.join(cache_root, f"index-v{FORMAT}")


class StatIndex:
    """The clean files of one working folder, for one tool fingerprint."""

    def __init__(self, folder: str, tool: str, scope: Optional[str] = None) -> None:
        self.folder = folder
        self.tool = tool
        if scope is None:
            try:
                scope = os.path.realpath(os.getcwd())
            except OSError:
                scope = ""
        self.scope = scope
        self.path = os.path.join(folder, hashlib.sha256(scope.encode("utf-8", "surrogatepass")).hexdigest()[:32] + ".json")
        # Signatures are trusted only when older than this (the run's start, less the margin).
        self.trusted_before = time.time_ns() - RACY_MARGIN_NS
        self._configs: List[str] = []
        self._config_numbers: Dict[str, int] = {}
        self._entries: Dict[str, Entry] = {}
        self._changed: Dict[str, Entry] = {}  # an empty entry: the name is to be removed
        self._load()

    def _load(self) -> None:
        body = _read(self.path)
        if body is None or body.get("tool") != self.tool or body.get("scope") != self.scope:
            return
        configs, entries = body.get("configs"), body.get("entries")
        if isinstance(configs, list) and all(isinstance(c, str) for c in configs) and isinstance(entries, dict):
            self._configs = configs
            self._config_numbers = {c: i for i, c in enumerate(configs)}
            self._entries = entries

    def is_clean(self, name: str, st: os.stat_result, config: str) -> bool:
        """True when the file was found clean under ``config`` and is unchanged since."""
        entry = self._entries.get(name)
        # The fields most likely to differ first: an edit moves ctime.
        return (entry is not None and len(entry) == ENTRY_LENGTH and entry[4] == st.st_ctime_ns
                and entry[3] == st.st_mtime_ns and entry[2] == st.st_size and entry[1] == st.st_ino
                and entry[0] == st.st_dev and entry[5] == self._config_numbers.get(config))

    def trusted(self, st: os.stat_result) -> bool:
        return st.st_mtime_ns < self.trusted_before and st.st_ctime_ns < self.trusted_before

    def record(self, name: str, st: os.stat_result, config: str, clean: bool) -> None:
        """What checking the bytes read after ``st`` was taken gave. Only a clean result with a
        signature old enough to trust is kept; anything else drops the name's entry."""
        if not clean or not self.trusted(st):
            if name in self._entries:
                del self._entries[name]
                self._changed[name] = []
            return
        number = self._config_numbers.get(config)
        if number is None:
            number = self._config_numbers[config] = len(self._configs)
            self._configs.append(config)
        entry = [st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns, number]
        if self._entries.get(name) != entry:
            self._entries[name] = entry
            self._changed[name] = entry

    def save(self) -> bool:
        """Best effort; True when the index file was written."""
        if not self._changed:
            return False
        # Merge what another run wrote since this one loaded: its entries for other names stay.
        configs = list(self._configs)
        numbers = dict(self._config_numbers)
        entries: Dict[str, Entry] = {}
        body = _read(self.path)
        if body is not None and body.get("tool") == self.tool and body.get("scope") == self.scope:
            theirs_configs, theirs = body.get("configs"), body.get("entries")
            if isinstance(theirs_configs, list) and isinstance(theirs, dict):
                remap: Dict[int, int] = {}
                for i, config in enumerate(theirs_configs):
                    if isinstance(config, str):
                        if config not in numbers:
                            numbers[config] = len(configs)
                            configs.append(config)
                        remap[i] = numbers[config]
                for name, entry in theirs.items():
                    if isinstance(entry, list) and len(entry) == ENTRY_LENGTH and entry[5] in remap:
                        entries[name] = entry[:5] + [remap[entry[5]]]
        entries.update(self._entries)
        for name, entry in self._changed.items():
            if entry:
                entries[name] = entry
            else:
                entries.pop(name, None)
        if len(entries) > MAX_ENTRIES:
            # This run's own entries first, then the others in the order they came.
            keep: Dict[str, Entry] = {}
            for name in [n for n in self._changed if n in entries] + list(entries):
                if len(keep) >= MAX_ENTRIES:
                    break
                keep.setdefault(name, entries[name])
            entries = keep
        used = sorted({entry[5] for entry in entries.values()})
        renumber = {old: new for new, old in enumerate(used)}
        body = {
            "format": FORMAT,
            "tool": self.tool,
            "scope": self.scope,
            "configs": [configs[i] for i in used],
            "entries": {name: entry[:5] + [renumber[entry[5]]] for name, entry in entries.items()},
        }
        return _write(self.folder, self.path, json.dumps(body, separators=(",", ":")))


def _read(path: str) -> Optional[dict]:
    try:
        with open(path, "rb") as handle:
            body = json.loads(handle.read())
    except (OSError, ValueError):
        return None
    if not isinstance(body, dict) or body.get("format") != FORMAT:
        return None
    return body


def _write(folder: str, path: str, text: str) -> bool:
    import tempfile  # only runs that record something write

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
    _prune(folder)
    return True


def _prune(folder: str) -> None:
    """At most MAX_INDEX_FILES index files: the least recently written go first."""
    try:
        with os.scandir(folder) as scan:
            found = []
            for entry in scan:
                try:
                    found.append((entry.stat().st_mtime_ns, entry.path))
                except OSError:
                    continue
    except OSError:
        return
    if len(found) <= MAX_INDEX_FILES:
        return
    found.sort()
    for _, path in found[: len(found) - MAX_INDEX_FILES]:
        try:
            os.unlink(path)
        except OSError:
            pass
