"""The cache folder and its files: whose folder it is, reading what may be hostile, writing,
sealing and pruning.

The cache folder is often named by a user (`ADVISOR_CACHE_DIR`) and may be shared (a CI runner,
umask 000), so nothing in it is taken on trust:

- **Whose folder.** A folder is used only if this user owns it, nobody else can write it, and it
  holds torch-advisor's `CACHEDIR.TAG` (the cache directory tag that backup tools know). The tag
  is written only into a folder the tool creates (mode 0700) or finds empty: a folder that
  already holds other files is never taken over, so its files are never pruned. The folders
  the tool keeps inside it must be real folders (not links) under the same rules. Otherwise one
  line on stderr says why, and the run goes on without the cache.
- **Reading.** Only regular files are read: opened with O_NONBLOCK (a FIFO must not hang the
  run) and O_NOFOLLOW (a link to /dev/zero is not an entry), checked with fstat, and read up to a
  bound. A file another user owns or others can write is refused, and said so once. Whatever
  is odd is a miss, never an error.
- **Sealing.** Every file the tool writes carries a keyed BLAKE2b tag over its name and body,
  under a 32-byte key kept in the folder (`mac-key`, mode 0600). A file without a valid tag
  (planted, corrupted, renamed from another entry) is a miss. Anyone who can read the key can
  forge a tag, so the key only adds to the ownership checks above: it is what makes a renamed
  or edited file of this user's fail, and what stops a writer who cannot read the key.
- **Writing.** A temporary file (mode 0600, created exclusively, never through a link) renamed
  into place: a concurrent run reads the old file or the new one, never half of one. Best
  effort: a cache that cannot be written only costs time.
- **Pruning.** Only names the tool gives its files, only regular files of this user, never
  through a link: the folder is opened with O_NOFOLLOW and its files are removed relative to
  that open folder.

This module is on the warm path: it imports nothing that a warm run would not load anyway, and
hashes nothing but the small files it reads (keyed BLAKE2b from `_blake2`, not OpenSSL: loading
hashlib's OpenSSL costs milliseconds).
"""

from __future__ import annotations

import os
import stat
import sys

TYPE_CHECKING = False
if TYPE_CHECKING:  # typing is not imported at run time: start-up is most of a warm run
    from typing import Callable, Dict, List, Optional, Tuple, Union

MARKER_NAME = "CACHEDIR.TAG"
SIGNATURE = b"Signature: 8a477f597d28d172789f06886806bc55"  # https://bford.info/cachedir/
MARKER = SIGNATURE + (
    b"\n# This folder is torch-advisor's cache. torch-advisor prunes only the files it wrote here.\n"
    b"# Cache directory tags: https://bford.info/cachedir/\n"
)
KEY_NAME = "mac-key"
KEY_BYTES = 32
TAG_CHARS = 64  # a 32-byte tag, in hex

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


def write_atomically(path: str, data: Union[bytes, str]) -> bool:
    """Writes ``data`` to ``path`` through a temporary file in its folder (created 0700 if
    missing); False when anything fails."""
    if isinstance(data, str):
        data = data.encode("utf-8", "surrogatepass")
    folder = os.path.dirname(path)
    try:
        _make_folder(folder)
        for _ in range(8):
            tmp = os.path.join(folder, f".tmp-{os.urandom(8).hex()}.json")
            try:
                fd = os.open(tmp, _CREATE_FLAGS, 0o600)
                break
            except FileExistsError:
                continue
        else:
            return False
    except OSError:
        return False
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
        os.replace(tmp, path)
    except OSError:
        try:
            os.unlink(tmp)
        except OSError:
            pass
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


# -- the folder --------------------------------------------------------------------------------
def _mac(key: bytes, kind: bytes, name: str, payload: bytes) -> str:
    try:
        from _blake2 import blake2b  # the C module hashlib wraps, without OpenSSL's load time
    except ImportError:  # another Python implementation
        from hashlib import blake2b
    tag = blake2b(digest_size=32, key=key, person=kind)
    tag.update(name.encode("utf-8", "surrogatepass"))
    tag.update(b"\0")
    tag.update(payload)
    return tag.hexdigest()


class CacheFolder:
    """A cache folder found safe to use (see the module's docstring), and its key."""

    def __init__(self, root: str, key: bytes) -> None:
        self.root = root
        self.key = key
        self._inside: Dict[str, Optional[str]] = {}

    def path(self, *parts: str) -> str:
        return os.path.join(self.root, *parts)

    def inside(self, name: str) -> Optional[str]:
        """The path of the tool's folder ``name`` in this one, or None when something else is
        in its place (a link, a file, a folder of another user's): said once, and not used."""
        if name not in self._inside:
            path = self.path(name)
            problem = _odd_folder(path)
            if problem is not None:
                notice(f"cache folder {path} {problem}; running without that part of the cache")
            self._inside[name] = path if problem is None else None
        return self._inside[name]

    def seal(self, kind: bytes, name: str, payload: bytes) -> bytes:
        """The file's content: a tag over its kind, its own name and the payload, then the payload."""
        return _mac(self.key, kind, name, payload).encode("ascii") + b"\n" + payload

    def unseal(self, kind: bytes, name: str, data: Optional[bytes]) -> Optional[bytes]:
        """The payload of a sealed file's content, or None unless the tag is the key's."""
        if data is None or len(data) <= TAG_CHARS or data[TAG_CHARS:TAG_CHARS + 1] != b"\n":
            return None
        payload = data[TAG_CHARS + 1:]
        if _mac(self.key, kind, name, payload).encode("ascii") != data[:TAG_CHARS]:
            return None
        return payload

    def read_sealed(self, kind: bytes, path: str, limit: int) -> Optional[bytes]:
        """The payload of the sealed file at ``path``, or None for a miss."""
        return self.unseal(kind, os.path.basename(path), read_regular(path, limit))

    def write_sealed(self, kind: bytes, path: str, payload: bytes) -> bool:
        return write_atomically(path, self.seal(kind, os.path.basename(path), payload))


_opened: Dict[str, Optional[CacheFolder]] = {}


def open_folder(root: str) -> Optional[CacheFolder]:
    """The cache folder at ``root``, created if missing, or None when it may not be used (said
    once on stderr). Decided once per process (forked workers inherit it)."""
    if root not in _opened:
        problem = _claim(root)
        key = _key(root) if problem is None else None
        if problem is None and key is None:
            problem = "cannot keep its key"
        if problem is not None:
            notice(f"cache folder {root} {problem}; running without the cache")
        _opened[root] = None if problem is not None else CacheFolder(root, key)
    return _opened[root]


def _claim(root: str) -> Optional[str]:
    """None when ``root`` may be used as the tool's cache folder, else why not."""
    created = False
    try:
        os.makedirs(root, 0o700)  # the mode applies to the cache folder itself
        created = True
    except FileExistsError:
        pass
    except (OSError, ValueError) as exc:
        return f"cannot be created ({getattr(exc, 'strerror', None) or exc})"
    try:
        st = os.stat(root)  # the folder may be a link the user made; what it leads to is checked
    except (OSError, ValueError) as exc:
        return f"cannot be read ({getattr(exc, 'strerror', None) or exc})"
    if not stat.S_ISDIR(st.st_mode):
        return "is not a folder"
    problem = unsafe(st)
    if problem is not None:
        return problem
    marker_path = os.path.join(root, MARKER_NAME)
    marker, problem = read_checked(marker_path, 4096)
    if problem is not None:
        return f"has a {MARKER_NAME} that {problem}"
    if marker is None:
        try:
            empty = created or not os.listdir(root)
        except OSError as exc:
            return f"cannot be read ({exc.strerror or exc})"
        if not empty:
            return (f"already holds other files and no {MARKER_NAME} of torch-advisor, so it is not taken "
                    "over as a cache (name a new or empty folder)")
        if not write_atomically(marker_path, MARKER):
            return "cannot be written"
    elif not (marker.startswith(SIGNATURE) and b"torch-advisor" in marker):
        return f"has a {MARKER_NAME} of another program"
    return None


def _odd_folder(path: str) -> Optional[str]:
    """None when ``path`` is missing or a real folder that may be trusted, else what it is."""
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return None
    except (OSError, ValueError) as exc:
        return f"cannot be read ({getattr(exc, 'strerror', None) or exc})"
    if stat.S_ISLNK(st.st_mode):
        return "is a link"
    if not stat.S_ISDIR(st.st_mode):
        return "is not a folder"
    return unsafe(st)


def _key(root: str) -> Optional[bytes]:
    """The folder's key, made on first use. A key that is not a private regular file of this
    user, of the right size, is replaced: what was sealed with it becomes a miss."""
    path = os.path.join(root, KEY_NAME)
    for _ in range(3):
        key, problem = read_checked(path, KEY_BYTES, private=True)
        if problem is not None:
            notice(f"cache file {path} {problem}; replaced")
        if key is not None and len(key) == KEY_BYTES:
            return key
        missing = key is None and problem is None and not os.path.lexists(path)
        tmp = os.path.join(root, f".tmp-{os.urandom(8).hex()}.json")
        try:
            fd = os.open(tmp, _CREATE_FLAGS, 0o600)
            with os.fdopen(fd, "wb") as handle:
                handle.write(os.urandom(KEY_BYTES))
            if missing:
                try:
                    os.link(tmp, path)  # never over a key a concurrent run has just made
                except FileExistsError:
                    pass
                except OSError:  # a file system without hard links
                    os.replace(tmp, path)
            else:
                os.replace(tmp, path)
        except OSError:
            return None
        finally:
            try:
                os.unlink(tmp)
            except OSError:
                pass
    return None
