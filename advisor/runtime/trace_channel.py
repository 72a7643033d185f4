"""The report channel between `advisor trace` and the traced interpreter: a pipe.

The traced script runs in the child and can do anything its user's code does: change folder,
delete the output folder, close files. A file path it could reach is therefore not a safe
place for the record. A pipe is: the parent keeps the read end, the child writes to the
inherited write end, which exists on no file system and which the child marks
non-inheritable, so that programs the script starts do not get it (forked copies of the
interpreter do, and the parent accepts messages only from the child's own pid).

Messages are JSON objects, one per line, each with `event` and `pid`:
`started` (the script's first line is about to run: the time limit counts from here),
`stopping` (the script has stopped; advisor is finishing the profile), `report` (the record,
in `record`), `no-torch` (torch could not be imported). Standard library only: the
child side runs in whatever interpreter the user names.
"""

from __future__ import annotations

import json
import os
import select
from typing import Any, Dict, Iterator, List, Optional

STARTED, STOPPING, REPORT, NO_TORCH = "started", "stopping", "report", "no-torch"
MAX_MESSAGE = 64 * 1024 * 1024  # a record is kilobytes; anything near this is not one


def send(fd: int, event: str, **fields: Any) -> bool:
    """Writes one message; False when the channel is gone (the script closed it)."""
    data = (json.dumps({"event": event, "pid": os.getpid(), **fields}, default=str) + "\n").encode("utf-8")
    try:
        while data:
            written = os.write(fd, data)
            data = data[written:]
    except OSError:
        return False
    return True


class Receiver:
    """The parent's end: reads whatever has arrived without ever blocking past `wait_s`."""

    def __init__(self, fd: int, pid: int) -> None:
        self.fd = fd
        self.pid = pid
        self._buffer = b""
        self.closed = False
        self.ignored = 0  # lines that were not a message of the child's own

    def poll(self, wait_s: float) -> List[Dict[str, Any]]:
        """Messages received within `wait_s` seconds (none if nothing came)."""
        if self.closed or not self._readable(wait_s):
            return []
        return list(self._read_available())

    def drain(self) -> List[Dict[str, Any]]:
        """Everything already written (after the child has exited); never waits for EOF,
        which a forked descendant holding the write end could put off forever."""
        out: List[Dict[str, Any]] = []
        while not self.closed and self._readable(0):
            out.extend(self._read_available())
        return out

    def _readable(self, wait_s: float) -> bool:
        try:
            return bool(select.select([self.fd], [], [], max(0.0, wait_s))[0])
        except (OSError, ValueError):
            self.closed = True
            return False

    def _read_available(self) -> Iterator[Dict[str, Any]]:
        try:
            chunk = os.read(self.fd, 1 << 16)
        except OSError:
            chunk = b""
        if not chunk:
            self.closed = True
        self._buffer += chunk
        if len(self._buffer) > MAX_MESSAGE:
            self._buffer = b""
            self.ignored += 1
        while b"\n" in self._buffer:
            line, _, self._buffer = self._buffer.partition(b"\n")
            message = _parse(line)
            if message is None or message.get("pid") != self.pid:
                self.ignored += 1
                continue
            yield message

    def close(self) -> None:
        try:
            os.close(self.fd)
        except OSError:
            pass
        self.closed = True


def _parse(line: bytes) -> Optional[Dict[str, Any]]:
    try:
        value = json.loads(line.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError):
        return None
    return value if isinstance(value, dict) and isinstance(value.get("event"), str) else None
