"""Reading, writing and pruning the cache's files, none of which is taken on trust.

- **Reading.** Only regular files are read: opened with O_NONBLOCK (a FIFO must not hang the
  run) and O_NOFOLLOW (a link to /dev/zero is not an entry), checked with fstat, and read up to a
  bound. A file another user owns or others can write is refused, and said so once. JSON that
  does not decode, or nests deeper than the parser goes, is None. Whatever is odd is a miss,
  never an error.
- **Writing.** A temporary file (mode 0600, created exclusively, never through a link) renamed
  into place: a concurrent run reads the old file or the new one, never half of one. Its
  folder is created 0700 when missing. Best effort: a cache that cannot be written only costs
  time, so failures are reported as False, never raised.
- **Pruning.** Only names the tool gives its files, only regular files of this user, never
  through a link: the folder is opened with O_NOFOLLOW and its files are removed relative to
  that open folder.

Whose folder the cache is, and the seal on each file, are cache_folder's. Both modules are on
the warm path: they import nothing a warm run does not load anyway.
"""

from __future__ import annotations

import os
import stat
import sys

TYPE_CHECKING = False
if TYPE_CHECKING:  # typing is not imported at run time: start-up is most of a warm run
    from typing import Callable, List, Optional, Tuple, Union

_POSIX_OWNERS = hasattr(os, "geteuid")  # Windows: no owners or permission bits to check
_READ_FLAGS = (os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOFOLLOW", 0)
               | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_BINARY", 0))
_CREATE_FLAGS = (os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)
                 | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_BINARY", 0))
_FOLDER_FLAGS = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
_HEX = frozenset("0123456789abcdef")


# -- saying so once ----------------------------------------------------------------------------
_noticed = False


def notice(message: str) -> None:
    """One line on stderr, the first time per process: one cache problem is enough to know of."""
    global _noticed
    if not _noticed:
        _noticed = True
        sys.stderr.write(f"advisor: warning: {message}\n")


# -- whose file --------------------------------------------------------------------------------
def unsafe(st: os.stat_result, private: bool = False) -> Optional[str]:
    """Why a folder or file with this stat may not be trusted, or None. ``private``: nobody else
    may read it either (the key)."""
    if not _POSIX_OWNERS:
        return None
    if st.st_uid != os.geteuid():
        return f"is owned by another user (uid {st.st_uid})"
    mode = stat.S_IMODE(st.st_mode)
    if mode & 0o022:
        return f"is writable by others (mode {mode:o})"
    if private and mode & 0o077:
        return f"is readable by others (mode {mode:o})"
    return None


def own_name(name: str, hex_chars: int) -> bool:
    """A name the tool gives its files: `<hex_chars hex digits>.json`, or one of its temporary
    files (`.tmp-<16 hex digits>.json`)."""
    if not name.endswith(".json"):
        return False
    stem = name[:-5]
    if stem.startswith(".tmp-"):
        stem, hex_chars = stem[5:], 16
    return len(stem) == hex_chars and _HEX.issuperset(stem)


# -- reading -----------------------------------------------------------------------------------
def read_checked(path: str, limit: int, private: bool = False) -> Tuple[Optional[bytes], Optional[str]]:
    """(the bytes of a regular file of at most ``limit`` bytes, None) or (None, why it may not
    be trusted) or (None, None) for anything else: missing, a link, a FIFO, a device, too big."""
    try:
        fd = os.open(path, _READ_FLAGS)
    except (OSError, ValueError):
        return None, None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode) or st.st_size > limit:
            return None, None
        problem = unsafe(st, private)
        if problem is not None:
            return None, problem
        chunks: List[bytes] = []
        size = 0
        want = st.st_size + 1  # the size fstat gave, then more while the file grows
        while size <= limit:
            chunk = os.read(fd, min(want, limit + 1 - size))
            want = 1 << 20
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
        return (b"".join(chunks), None) if size <= limit else (None, None)
    except OSError:
        return None, None
    finally:
        os.close(fd)


def read_regular(path: str, limit: int) -> Optional[bytes]:
    """The file's bytes, or None: see read_checked. A file that may not be trusted is said so once."""
    data, problem = read_checked(path, limit)
    if problem is not None:
        notice(f"cache file {path} {problem}; not used")
    return data


def load_json(data: Union[bytes, str]) -> object:
    """The decoded JSON, or None for anything that does not decode (nesting too deep included)."""
    try:
        if isinstance(data, bytes):
            data = data.decode("utf-8", "surrogatepass")
        import json

        return json.loads(data)
    except (ValueError, RecursionError, MemoryError):
        return None


# -- writing -----------------------------------------------------------------------------------
def _make_folder(folder: str) -> None:
    try:
        os.mkdir(folder, 0o700)
    except FileExistsError:
        pass


def temporary_file(folder: str, data: bytes) -> str:
    """The path of a new file in ``folder`` (mode 0600, named as the tool's temporary files)
    holding ``data``. Raises OSError."""
    for _ in range(8):
        tmp = os.path.join(folder, f".tmp-{os.urandom(8).hex()}.json")
        try:
            fd = os.open(tmp, _CREATE_FLAGS, 0o600)
        except FileExistsError:
            continue
        try:
            with os.fdopen(fd, "wb") as handle:
                handle.write(data)
        except OSError:
            _remove(tmp)
            raise
        return tmp
    raise FileExistsError(folder)


def _remove(path: str) -> None:
    try:
        os.unlink(path)
    except OSError:
        pass


def write_atomically(path: str, data: Union[bytes, str]) -> bool:
    """Writes ``data`` to ``path`` through a temporary file in its folder (created 0700 if
    missing); False when anything fails."""
    if isinstance(data, str):
        data = data.encode("utf-8", "surrogatepass")
    folder = os.path.dirname(path)
    try:
        _make_folder(folder)
        tmp = temporary_file(folder, data)
    except OSError:
        return False
    try:
        os.replace(tmp, path)
    except OSError:
        _remove(tmp)
        return False
    return True


# -- pruning -----------------------------------------------------------------------------------
def prune_oldest(folder: str, own: Callable[[str], bool], max_files: int, max_bytes: int,
                 keep_files: int, keep_bytes: int) -> int:
    """When the tool's own files in ``folder`` are more than max_files or max_bytes, deletes
    the oldest of them down to keep_files and keep_bytes. Returns how many it deleted."""
    if os.scandir in os.supports_fd and os.unlink in os.supports_dir_fd:
        try:
            fd = os.open(folder, _FOLDER_FLAGS)  # O_NOFOLLOW: a linked folder is not opened
        except OSError:
            return 0
        try:
            st = os.fstat(fd)
            if not stat.S_ISDIR(st.st_mode) or unsafe(st) is not None:
                return 0
            return _prune(fd, own, max_files, max_bytes, keep_files, keep_bytes)
        finally:
            os.close(fd)
    try:  # no folder descriptors (Windows): by path, after checking it is no link
        if not stat.S_ISDIR(os.lstat(folder).st_mode):
            return 0
    except OSError:
        return 0
    return _prune(folder, own, max_files, max_bytes, keep_files, keep_bytes)


def _prune(where: Union[int, str], own: Callable[[str], bool], max_files: int, max_bytes: int,
           keep_files: int, keep_bytes: int) -> int:
    found = []
    try:
        with os.scandir(where) as scan:
            for entry in scan:
                if not own(entry.name):
                    continue
                try:
                    st = entry.stat(follow_symlinks=False)
                except OSError:
                    continue
                if stat.S_ISREG(st.st_mode) and (not _POSIX_OWNERS or st.st_uid == os.geteuid()):
                    found.append((st.st_mtime_ns, entry.name, st.st_size))
    except OSError:
        return 0
    count, total = len(found), sum(size for _, _, size in found)
    if count <= max_files and total <= max_bytes:
        return 0
    found.sort()
    removed = 0
    for _, name, size in found:
        if count <= keep_files and total <= keep_bytes:
            break
        try:
            if isinstance(where, int):
                os.unlink(name, dir_fd=where)
            else:
                os.unlink(os.path.join(where, name))
            removed += 1
        except OSError:
            pass
        count -= 1
        total -= size
    return removed
