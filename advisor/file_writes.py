"""Writing a fixed file back over the user's file without damaging it.

`--fix` rewrites files the user cares about, so it writes the way a careful editor does:

- the new bytes go to a temporary file in the same folder, which is renamed over the file: a
  crash or a full disk never leaves half a file;
- a symbolic link is followed: its target is rewritten and the link stays a link;
- a file the user protected is left alone. The rename would succeed on a read-only file in a
  writable folder (it replaces the folder entry, not the file), so the file's own write
  permission is checked first, mode bits included (root may write anything, but a file with no
  write bit is meant to stay as it is);
- a file with several hard links is refused: the rename would give one name the fixed text
  and leave the others on the old one, and writing in place would change files under names the
  user never gave (a snapshot made with `cp -al`, a package cache linked into environments);
- the new file gets the old one's mode, and its owner and group where this process may set
  them. Where it may not, or where the folder takes no new files, the file is written in place
  instead (it is known to be writable), which keeps owner, group, ACLs and inode.

Line endings and the encoding are the caller's: the bytes given are written as they are.
"""

from __future__ import annotations

import os
import stat as stat_module

TYPE_CHECKING = False
if TYPE_CHECKING:  # typing is not imported at run time: start-up is most of a warm run
    from typing import Callable

_BINARY = getattr(os, "O_BINARY", 0)  # Windows: no newline translation
# A FIFO put in the file's place must not block the open: fstat then sees what it is.
_NONBLOCK = getattr(os, "O_NONBLOCK", 0)


class WriteRefused(Exception):
    """The file is not written, for a reason the user can act on; the message says which."""


class FileChangedOnDisk(Exception):
    """The file no longer holds what was analysed: a fix must not overwrite it."""


def write_fixed(path: str, unchanged: Callable[[bytes], bool], data: bytes) -> None:
    """Replaces the file at ``path`` (or, for a link, the file it leads to) with ``data``, if
    ``unchanged(the bytes it holds now)``. Raises WriteRefused, FileChangedOnDisk or OSError."""
    target = os.path.realpath(path)
    fd = os.open(target, os.O_RDONLY | _BINARY | _NONBLOCK)
    try:
        st = os.fstat(fd)
        _check_writable(target, st)
        current = _read_all(fd)
    finally:
        os.close(fd)
    if not unchanged(current):
        raise FileChangedOnDisk()
    _replace(target, st, data)


def _check_writable(target: str, st: os.stat_result) -> None:
    if not stat_module.S_ISREG(st.st_mode):
        raise WriteRefused("not a regular file")
    if st.st_nlink > 1:
        raise WriteRefused(f"the file has {st.st_nlink} hard links, and rewriting it under one name would "
                           "split it from the others")
    if not st.st_mode & 0o222:
        raise WriteRefused("the file is read-only")
    effective = os.access in os.supports_effective_ids
    if not os.access(target, os.W_OK, effective_ids=effective):
        raise WriteRefused("no permission to write the file")


def _read_all(fd: int) -> bytes:
    chunks = []
    while True:
        chunk = os.read(fd, 1 << 20)
        if not chunk:
            return b"".join(chunks)
        chunks.append(chunk)


def _replace(target: str, st: os.stat_result, data: bytes) -> None:
    import tempfile  # only runs that write a fix need it

    folder, name = os.path.split(target)
    try:
        fd, tmp = tempfile.mkstemp(dir=folder, prefix=f".{name}.", suffix=".advisor-fix")
    except PermissionError:
        _write_in_place(target, data)  # the folder takes no new files; the file itself is writable
        return
    try:
        with os.fdopen(fd, "wb") as handle:
            owned = _take_owner(handle.fileno(), st)
            if owned:
                handle.write(data)
                handle.flush()
                os.chmod(tmp, stat_module.S_IMODE(st.st_mode))  # after chown, which clears set-id bits
                os.fsync(handle.fileno())
        if owned:
            os.replace(tmp, target)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
    if not owned:
        os.unlink(tmp)
        _write_in_place(target, data)


def _take_owner(fd: int, st: os.stat_result) -> bool:
    """Gives the new file the old one's owner and group; False where this process may not."""
    if not hasattr(os, "fchown"):
        return True  # Windows: no owner in the stat to keep
    new = os.fstat(fd)
    if (new.st_uid, new.st_gid) == (st.st_uid, st.st_gid):
        return True
    try:
        os.fchown(fd, st.st_uid, st.st_gid)
    except PermissionError:
        return False
    return True


def _write_in_place(target: str, data: bytes) -> None:
    """Overwrites the file's own bytes: keeps everything about it, but a crash half-way leaves
    half a file, so this is only the fallback."""
    fd = os.open(target, os.O_WRONLY | _BINARY | _NONBLOCK)
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view):]
        os.ftruncate(fd, len(data))
        os.fsync(fd)
    finally:
        os.close(fd)
