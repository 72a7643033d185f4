"""The cache folder: whether it may be used, its key, and the seal on every file in it.

The cache folder is often named by a user (`ADVISOR_CACHE_DIR`) and may be shared (a CI runner,
umask 000), so it is used only if this user owns it, nobody else can write it, and it holds
torch-advisor's `CACHEDIR.TAG` (the cache directory tag that backup tools know). The tag is
written only into a folder the tool creates (mode 0700) or finds empty: a folder that already
holds other files is never taken over, so nothing in it is ever pruned. The folders the tool
keeps inside it must be real folders (not links) under the same rules. Otherwise one line on
stderr says why, and the run goes on without the cache (or without that part of it).

Every file the tool writes there carries a keyed BLAKE2b tag over its kind, its own name and
its body, under a 32-byte key kept in the folder (`mac-key`, mode 0600). A file without a valid
tag (planted, corrupted, or renamed from another entry) is a miss. Anyone who can read the key
can forge a tag, so the key adds to the ownership checks rather than replacing them: it is
what makes an edited or renamed file of this user's fail, and what stops a writer who cannot
read the key. BLAKE2b comes from `_blake2`, not hashlib: loading hashlib's OpenSSL costs a warm
run milliseconds, and a run over clean files hashes nothing else.
"""

from __future__ import annotations

import os
import stat

from advisor.cache_files import (notice, own_name, read_checked, read_regular, temporary_file, unsafe,
                                 write_atomically)

TYPE_CHECKING = False
if TYPE_CHECKING:  # typing is not imported at run time: start-up is most of a warm run
    from typing import Any, Dict, Optional

MARKER_NAME = "CACHEDIR.TAG"
SIGNATURE = b"Signature: 8a477f597d28d172789f06886806bc55"  # https://bford.info/cachedir/
MARKER = SIGNATURE + (
    b"\n# This folder is torch-advisor's cache. torch-advisor prunes only the files it wrote here.\n"
    b"# Cache directory tags: https://bford.info/cachedir/\n"
)
KEY_NAME = "mac-key"
KEY_BYTES = 32
TAG_CHARS = 64  # a 32-byte tag, in hex


def _keyed(key: bytes, kind: bytes) -> Any:
    try:
        from _blake2 import blake2b  # the C module hashlib wraps, without OpenSSL's load time
    except ImportError:  # another Python implementation
        from hashlib import blake2b
    return blake2b(digest_size=TAG_CHARS // 2, key=key, person=kind)


class CacheFolder:
    """A cache folder found safe to use (see the module's docstring), and its key."""

    def __init__(self, root: str, key: bytes) -> None:
        self.root = root
        self.key = key
        self._inside: Dict[str, Optional[str]] = {}
        self._keyed: Dict[bytes, Any] = {}  # per kind, the keyed state each tag starts from

    def _tag(self, kind: bytes, name: str, payload: bytes) -> bytes:
        start = self._keyed.get(kind)
        if start is None:
            start = self._keyed[kind] = _keyed(self.key, kind)
        tag = start.copy()  # a copy costs less than keying a new state, per entry of a warm run
        tag.update(name.encode("utf-8", "surrogatepass"))
        tag.update(b"\0")
        tag.update(payload)
        return tag.hexdigest().encode("ascii")

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
        return self._tag(kind, name, payload) + b"\n" + payload

    def unseal(self, kind: bytes, name: str, data: Optional[bytes]) -> Optional[bytes]:
        """The payload of a sealed file's content, or None unless the tag is the key's."""
        if data is None or len(data) <= TAG_CHARS or data[TAG_CHARS:TAG_CHARS + 1] != b"\n":
            return None
        payload = data[TAG_CHARS + 1:]
        if self._tag(kind, name, payload) != data[:TAG_CHARS]:
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
            # A concurrent first run may be writing the tag: its temporary file counts as nothing.
            empty = created or all(name.startswith(".tmp-") and own_name(name, 0) for name in os.listdir(root))
        except OSError as exc:
            return f"cannot be read ({exc.strerror or exc})"
        if not empty:
            # A concurrent first run may have written its marker (and its key) between the two
            # reads: the folder is the tool's then.
            marker, problem = read_checked(marker_path, 4096)
            if problem is None and marker is not None and marker.startswith(SIGNATURE) and b"torch-advisor" in marker:
                return None
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
        tmp = ""
        try:
            tmp = temporary_file(root, os.urandom(KEY_BYTES))
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
            if tmp:
                try:
                    os.unlink(tmp)
                except OSError:
                    pass
    return None
