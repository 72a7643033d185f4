"""What one file may cost before it is refused: its size, checked before it is read, and the
CPU time of its analysis (budget.py stops it). A refused file is one `FileProblem` line, and
the run goes on.

Such a problem says nothing about the file's content, only about this run's limits (and, for
the budget, this machine): it is a ``LimitProblem``, which the result cache and the stat index
never keep, so that a later run with other limits or on a faster machine checks the file.
"""

from __future__ import annotations

import os
import stat as stat_module

from advisor.findings import FileProblem

TYPE_CHECKING = False
if TYPE_CHECKING:  # typing is not imported at run time: start-up is most of a warm run
    from typing import Tuple


class LimitProblem(FileProblem):
    """A file left unanalysed because it would cost more than the limits allow."""

    __slots__ = ()


def over_budget(filename: str, seconds: float) -> LimitProblem:
    return LimitProblem(filename, f"skipped: the analysis used up its budget of {seconds:g} s of CPU time "
                                  "(analysis-budget)")


def too_large(filename: str, size: int, limit: int) -> LimitProblem:
    return LimitProblem(filename, f"skipped: {size:,} bytes, more than the {limit:,} bytes allowed (max-file-size)")


def text_too_large(text: str, limit: int) -> int:
    """The text's size in UTF-8 bytes when over ``limit``, else 0 (counted only when it could be)."""
    if len(text) * 4 <= limit:  # no character takes more than 4 bytes
        return 0
    size = len(text) if len(text) > limit else len(text.encode("utf-8", "surrogatepass"))
    return size if size > limit else 0


class NotRegularFile(OSError):
    """A path that names a pipe, a device, a socket or a folder where a file was expected."""


class FileTooLarge(Exception):
    def __init__(self, size: int) -> None:
        super().__init__(size)
        self.size = size


def kind_of(mode: int) -> str:
    """What a non-regular file is, in words."""
    if stat_module.S_ISDIR(mode):
        return "a folder"
    if stat_module.S_ISFIFO(mode):
        return "a named pipe"
    if stat_module.S_ISCHR(mode):
        return "a character device"
    if stat_module.S_ISBLK(mode):
        return "a block device"
    if stat_module.S_ISSOCK(mode):
        return "a socket"
    return "not a file"


def read_regular(path: str, limit: int) -> Tuple[bytes, os.stat_result]:
    """The bytes of a regular file of at most ``limit`` bytes, and the stat of the file they came
    from (taken on the open file). Opened without blocking, so that a name that has become a
    named pipe since it was found does not hang the run; raises NotRegularFile or FileTooLarge
    instead of reading anything else."""
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0)
    fd = os.open(path, flags)
    try:
        st = os.fstat(fd)
        if not stat_module.S_ISREG(st.st_mode):
            raise NotRegularFile(0, f"not a regular file ({kind_of(st.st_mode)})", path)
        if st.st_size > limit:
            raise FileTooLarge(st.st_size)
        chunks = []
        remaining = limit + 1  # one byte more than allowed tells a file that grew meanwhile
        while remaining > 0:
            chunk = os.read(fd, min(remaining, 1 << 20))
            if not chunk:
                break
            chunks.append(chunk)
            remaining -= len(chunk)
        data = b"".join(chunks)
        if len(data) > limit:
            raise FileTooLarge(max(len(data), st.st_size))
        return data, st
    finally:
        os.close(fd)
