"""The stat index: which files are unchanged since a run found them clean, told by `stat` alone.

The result cache is keyed by a file's bytes, so a warm run would still read and hash every
file. This index lets it skip that for the files that matter most, the clean ones, the way
git's index does: for each file found clean from one working folder it keeps the file's stat
signature (device, inode, size, mtime and ctime, in nanoseconds) as it was just before the file
was read, the configuration it was checked under, and the content digest of the bytes read
(the result cache holds their clean result under it). A file whose signature still matches,
under the same tool and configuration, is clean without being opened. A file with findings is
not indexed: it is read, hashed and answered from the result cache as before, and its text is
needed anyway to show the findings.

What a matching signature proves, and what it does not. Like git, the index trusts stat data:
a write through write(2) moves the file's mtime and ctime forward, and nothing short of
changing the system clock sets a ctime back. Two gaps remain:
- A write in the same clock tick as the signature was taken that keeps the size (git's "racily
  clean" case). Closed: a signature is only recorded when the file's mtime and ctime are at
  least RACY_MARGIN_NS older than the run's start, so a later write gets a later ctime, on file
  systems with coarse timestamps too (FAT's 2 s). A file edited in the last seconds is simply
  read and hashed again on the next run.
- Writes that move no time at all. A write through a shared memory map (mmap) moves the times
  only when the kernel first marks the page written; further writes to a page not yet written
  back (on tmpfs: never written back) change the bytes and no field of the signature. A network
  file system whose server clock runs well behind this machine's can defeat the margin too.
  Not closed, as in git: `ADVISOR_STAT_INDEX=off` answers nothing from the index (every file is
  read and hashed; the result cache still answers unchanged bytes), and still records what the
  run read, so one such run also refreshes the index, as `git update-index --really-refresh`
  does; touching the file works too. A tool that edits sources through a shared mapping should
  run with the index off.
The stat recorded is the one of the file as opened for reading (runner._read), never the
discovery stat: a link re-pointed in between would otherwise file one file's signature for
another's bytes. Windows is left out (the runner opens no index there): its st_ctime is the
creation time, so no field moves on every write.

Who may write it. The index decides without reading the file, so an entry planted by someone
who can write the cache folder would hide a file's findings. The folder must be this user's
and closed to others (cache_folder.open_folder), and each index file is sealed with the folder's
key: an index that was not written by the tool, or was edited or moved from another working
folder, is ignored whole. An entry is only recorded right after the result cache answered or
stored a clean result for the same content digest, so every entry stands for bytes the tool
read and found clean. A hit does not open that result entry again: the seal over the whole
index is checked once per run instead. On all of torch (2,277 clean files, a 400 KB index) the
seal costs under 1 ms of a warm run of about 105 to 135 ms of CPU; opening, unsealing and
decoding each clean file's entry cost 160 to 200 ms more, and even a bare stat of each 22 ms.

One JSON file per working folder (named by checksums of its real path), under the cache
folder's `index-v3/`, for one tool fingerprint (another tool version starts afresh). It is
written only when something changed: to a temporary file renamed into place, after merging
what a concurrent run may have written meanwhile. An index that does not decode, or is too big
to be the tool's, is ignored. Entries are bounded per file, and index files per cache folder;
pruning removes only files named as index files.
"""

from __future__ import annotations

import itertools
import json
import os
import time
import zlib

from advisor.cache_files import load_json, own_name, prune_oldest

TYPE_CHECKING = False
if TYPE_CHECKING:  # typing is not imported at run time: start-up is most of a warm run
    from typing import Dict, List, Optional, Set, Tuple

    from advisor.cache_folder import CacheFolder

FORMAT = 3
RACY_MARGIN_NS = 3_000_000_000
MAX_ENTRIES = 200_000  # per working folder
MAX_INDEX_FILES = 256  # working folders per cache folder
MAX_INDEX_BYTES = 128 * 1024 * 1024  # read no more of one index file
DIGEST_CHARS = 64  # the content digest (SHA-256, hex) that ends an entry
# Entries of files this run did not see, checked on each save (oldest first) and dropped when
# their file is gone or changed: renamed and deleted files do not pile up.
SWEEP = 256


def open_stat_index(cache: CacheFolder, tool: str, trust: bool = True) -> Optional[StatIndex]:
    """The index of the current working folder in ``cache``, or None when its folder there
    may not be used. ``trust``: False answers no file from the index (every file is read) but
    still records what this run reads."""
    folder = cache.inside(f"index-v{FORMAT}")
    return StatIndex(cache, folder, tool, trust=trust) if folder is not None else None


def _own_index(name: str) -> bool:
    return own_name(name, 16)


def _entry(st: os.stat_result, config_number: int) -> str:
    """The start of an entry: ctime, mtime, size, inode and device in hex, then the
    configuration's number and a space; the content digest of the file as read ends it. A
    string, not a list: JSON decodes ten thousand strings five times faster."""
    return "%x %x %x %x %x %d " % (st.st_ctime_ns, st.st_mtime_ns, st.st_size, st.st_ino, st.st_dev, config_number)


class StatIndex:
    """The clean files of one working folder, for one tool fingerprint."""

    def __init__(self, cache: CacheFolder, folder: str, tool: str, scope: Optional[str] = None,
                 trust: bool = True) -> None:
        self.cache = cache
        self.folder = folder
        self.tool = tool
        self.trust = trust
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
        body = self._read()
        if body is None or body.get("tool") != self.tool or body.get("scope") != self.scope:
            return
        configs, entries = body.get("configs"), body.get("entries")
        if isinstance(configs, list) and all(isinstance(c, str) for c in configs) and isinstance(entries, dict):
            self._configs = configs
            self._config_numbers = {c: i for i, c in enumerate(configs)}
            self._entries = entries

    def is_clean(self, name: str, st: os.stat_result, config: str) -> bool:
        """True when the file was found clean under ``config`` and is unchanged since."""
        self._seen.add(name)
        stored = self._entries.get(name)
        if stored is None or not self.trust or type(stored) is not str:
            return False
        number = self._config_numbers.get(config)
        if number is None:
            return False
        start = _entry(st, number)
        return len(stored) == len(start) + DIGEST_CHARS and stored.startswith(start)

    def trusted(self, st: os.stat_result) -> bool:
        return st.st_mtime_ns < self.trusted_before and st.st_ctime_ns < self.trusted_before

    def record(self, name: str, st: os.stat_result, config: str, clean: bool, content: str) -> None:
        """What checking the bytes read after ``st`` was taken gave: ``content`` is their
        content digest, under which the result cache holds that result. Only a clean result
        with a signature old enough to trust is kept; anything else drops the name's entry."""
        self._seen.add(name)
        if not clean or not self.trusted(st) or len(content) != DIGEST_CHARS:
            if name in self._entries:
                del self._entries[name]
                self._changed[name] = ""
            return
        number = self._config_numbers.get(config)
        if number is None:
            number = self._config_numbers[config] = len(self._configs)
            self._configs.append(config)
        entry = _entry(st, number) + content
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
        body = self._read()
        if body is not None and body.get("tool") == self.tool and body.get("scope") == self.scope:
            base_configs, base = body.get("configs"), body.get("entries")
        else:
            base_configs, base = self._configs, self._entries
        entries: Dict[str, Tuple[str, int, str]] = {}
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
                    entries[name] = (parsed[0], remap[parsed[1]], parsed[2])
        for name, entry in self._changed.items():
            parsed = _split(entry)
            if parsed is not None:
                entries[name] = parsed
            else:
                entries.pop(name, None)
        self._sweep(entries)
        if len(entries) > MAX_ENTRIES:
            # This run's own entries first, then the others in the order they came.
            keep: Dict[str, Tuple[str, int, str]] = {}
            for name in [n for n in self._changed if n in entries] + list(entries):
                if len(keep) >= MAX_ENTRIES:
                    break
                keep.setdefault(name, entries[name])
            entries = keep
        used = sorted({number for _, number, _ in entries.values()})
        renumber = {old: new for new, old in enumerate(used)}
        body = {
            "format": FORMAT,
            "tool": self.tool,
            "scope": self.scope,
            "configs": [configs[i] for i in used],
            "entries": {name: f"{signature} {renumber[number]} {content}"
                        for name, (signature, number, content) in entries.items()},
        }
        if not self.cache.write_sealed(b"index", self.path, json.dumps(body, separators=(",", ":")).encode()):
            return False
        prune_oldest(self.folder, _own_index, MAX_INDEX_FILES, 1 << 62, MAX_INDEX_FILES, 1 << 62)
        return True

    def _read(self) -> Optional[dict]:
        body = load_json(self.cache.read_sealed(b"index", self.path, MAX_INDEX_BYTES) or b"")
        if not isinstance(body, dict) or body.get("format") != FORMAT:
            return None
        return body

    def _sweep(self, entries: Dict[str, Tuple[str, int, str]]) -> None:
        """Checks the SWEEP oldest entries this run did not see: gone or changed files are
        dropped, the others move to the end (the next save checks the next ones)."""
        stale = [name for name in itertools.islice((n for n in entries if n not in self._seen), SWEEP)]
        for name in stale:
            signature, number, content = entries.pop(name)
            try:
                st = os.stat(os.path.join(self.scope, name))
            except (OSError, ValueError):
                continue
            if _entry(st, number) == f"{signature} {number} ":
                entries[name] = (signature, number, content)


def _split(entry: object) -> Optional[Tuple[str, int, str]]:
    """(the stat part, the configuration's number, the content digest) of an entry, or None
    for anything else."""
    if not isinstance(entry, str):
        return None
    rest, _, content = entry.rpartition(" ")
    signature, _, number = rest.rpartition(" ")
    if not signature or not (number.isascii() and number.isdigit()) or len(content) != DIGEST_CHARS:
        return None
    return signature, int(number), content
