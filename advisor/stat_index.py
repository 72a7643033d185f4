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
A file edited in the last seconds is simply read and hashed again on the next run. The stat
recorded is the one of the file as opened for reading (runner._read), never the discovery
stat: a link re-pointed in between would otherwise file one file's signature for another's
bytes. Like git, this trusts the file system's clock: a network file system whose server clock
runs well behind this machine's can defeat the margin. Windows is left out (the runner opens no
index there): its st_ctime is the creation time, so no field moves on every write.

One JSON file per working folder (named by checksums of its real path), under the cache
folder's `index-v2/`, for one tool fingerprint (another tool version starts afresh). It is written only
when something changed: to a temporary file renamed into place, after merging what a
concurrent run may have written meanwhile. An index that does not decode is ignored. Entries
are bounded per file, and index files per cache folder.
"""

from __future__ import annotations

import itertools
import json
import os
import time
import zlib

from advisor.cache_files import write_atomically

TYPE_CHECKING = False
if TYPE_CHECKING:  # typing is not imported at run time: start-up is most of a warm run
    from typing import Dict, List, Optional, Set, Tuple

FORMAT = 2
RACY_MARGIN_NS = 3_000_000_000
MAX_ENTRIES = 200_000  # per working folder
MAX_INDEX_FILES = 256  # working folders per cache folder
# Entries of files this run did not see, checked on each save (oldest first) and dropped when
# their file is gone or changed: renamed and deleted files do not pile up.
SWEEP = 256


def index_folder(cache_root: str) -> str:
    """Where the index files live, beside the result cache's entries."""
    return os.path.join(cache_root, f"index-v{FORMAT}")


def _entry(st: os.stat_result, config_number: int) -> str:
    """One entry: ctime, mtime, size, inode and device in hex, then the configuration's number.
    A string, not a list of numbers: JSON decodes ten thousand strings five times faster."""
    return "%x %x %x %x %x %d" % (st.st_ctime_ns, st.st_mtime_ns, st.st_size, st.st_ino, st.st_dev, config_number)


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
        # Named by two checksums of the folder: zlib loads in a fraction of hashlib's time. The
        # folder is stored inside too, so a collision costs time, never a wrong answer.
        raw = scope.encode("utf-8", "surrogatepass")
        self.path = os.path.join(folder, f"{zlib.crc32(raw):08x}{zlib.adler32(raw):08x}.json")
        # Signatures are trusted only when older than this (the run's start, less the margin).
        self.trusted_before = time.time_ns() - RACY_MARGIN_NS
        self._configs: List[str] = []
        self._config_numbers: Dict[str, int] = {}
        self._entries: Dict[str, str] = {}
        self._changed: Dict[str, str] = {}  # an empty entry: the name is to be removed
        self._seen: Set[str] = set()  # names this run asked about or recorded
        self._load()

    def _load(self) -> None:
        body = _read(self.path)
        if body is None or body.get("tool") != self.tool or body.get("scope") != self.scope:
            return
        configs, entries = body.get("configs"), body.get("entries")
        if isinstance(configs, list) and all(isinstance(c, str) for c in configs) and isinstance(entries, dict):
            self._configs = configs
            self._config_numbers = {c: i for i, c in enumerate(configs)}
            self._entries = entries  # a value that is not a string never equals an entry

    def is_clean(self, name: str, st: os.stat_result, config: str) -> bool:
        """True when the file was found clean under ``config`` and is unchanged since."""
        self._seen.add(name)
        stored = self._entries.get(name)
        if stored is None:
            return False
        number = self._config_numbers.get(config)
        return number is not None and stored == _entry(st, number)

    def trusted(self, st: os.stat_result) -> bool:
        return st.st_mtime_ns < self.trusted_before and st.st_ctime_ns < self.trusted_before

    def record(self, name: str, st: os.stat_result, config: str, clean: bool) -> None:
        """What checking the bytes read after ``st`` was taken gave. Only a clean result with a
        signature old enough to trust is kept; anything else drops the name's entry."""
        self._seen.add(name)
        if not clean or not self.trusted(st):
            if name in self._entries:
                del self._entries[name]
                self._changed[name] = ""
            return
        number = self._config_numbers.get(config)
        if number is None:
            number = self._config_numbers[config] = len(self._configs)
            self._configs.append(config)
        entry = _entry(st, number)
        if self._entries.get(name) != entry:
            self._entries[name] = entry
            self._changed[name] = entry

    def save(self) -> bool:
        """Best effort; True when the index file was written."""
        if not self._changed:
            return False
        # Start from the file as it is now, not as it was loaded: a concurrent run may have
        # written since. (Every entry is a fact, "these bytes were clean under that
        # configuration", true for as long as the signature matches: no merge makes a wrong one.)
        configs = list(self._configs)
        numbers = dict(self._config_numbers)
        body = _read(self.path)
        if body is not None and body.get("tool") == self.tool and body.get("scope") == self.scope:
            base_configs, base = body.get("configs"), body.get("entries")
        else:
            base_configs, base = self._configs, self._entries
        entries: Dict[str, Tuple[str, int]] = {}
        if isinstance(base_configs, list) and isinstance(base, dict):
            remap: Dict[int, int] = {}
            for i, config in enumerate(base_configs):
                if isinstance(config, str):
                    if config not in numbers:
                        numbers[config] = len(configs)
                        configs.append(config)
                    remap[i] = numbers[config]
            for name, entry in base.items():
                parsed = _split(entry)
                if parsed is not None and parsed[1] in remap:  # a number that names no configuration: dropped
                    entries[name] = (parsed[0], remap[parsed[1]])
        for name, entry in self._changed.items():
            parsed = _split(entry)
            if parsed is not None:
                entries[name] = parsed
            else:
                entries.pop(name, None)
        self._sweep(entries)
        if len(entries) > MAX_ENTRIES:
            # This run's own entries first, then the others in the order they came.
            keep: Dict[str, Tuple[str, int]] = {}
            for name in [n for n in self._changed if n in entries] + list(entries):
                if len(keep) >= MAX_ENTRIES:
                    break
                keep.setdefault(name, entries[name])
            entries = keep
        used = sorted({number for _, number in entries.values()})
        renumber = {old: new for new, old in enumerate(used)}
        body = {
            "format": FORMAT,
            "tool": self.tool,
            "scope": self.scope,
            "configs": [configs[i] for i in used],
            "entries": {name: f"{signature} {renumber[number]}" for name, (signature, number) in entries.items()},
        }
        return _write(self.folder, self.path, json.dumps(body, separators=(",", ":")))

    def _sweep(self, entries: Dict[str, Tuple[str, int]]) -> None:
        """Checks the SWEEP oldest entries this run did not see: gone or changed files are
        dropped, the others move to the end (the next save checks the next ones)."""
        stale = [name for name in itertools.islice((n for n in entries if n not in self._seen), SWEEP)]
        for name in stale:
            signature, number = entries.pop(name)
            try:
                st = os.stat(os.path.join(self.scope, name))
            except (OSError, ValueError):
                continue
            if _entry(st, number) == f"{signature} {number}":
                entries[name] = (signature, number)


def _split(entry: object) -> Optional[Tuple[str, int]]:
    """(the stat part, the configuration's number) of an entry, or None for anything else."""
    if not isinstance(entry, str):
        return None
    signature, _, number = entry.rpartition(" ")
    if not signature or not number.isdigit():
        return None
    return signature, int(number)


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
    if not write_atomically(path, text):
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
