"""The traced script's processes, and ending every one of them when `advisor trace` returns.

The traced interpreter starts in a session (and process group) of its own, so one `killpg`
ends it with everything it forked or spawned that stayed in that group: DataLoader workers,
`multiprocessing` children, a plain `os.fork`. A descendant can leave the group (`setsid`,
a daemonising double fork); on Linux advisor becomes a child subreaper for the length of the
trace, so that such a process, once its parent is gone, is re-parented to advisor instead of
init, where it can be found (its parent is advisor) and killed. Elsewhere only the group is
ended.
"""

from __future__ import annotations

import os
import signal
import sys
import time
from typing import Dict, List, Optional, Set, Tuple

_PR_SET_CHILD_SUBREAPER = 36
_ROUNDS = 50  # re-parented escapees can have children of their own: a few rounds end them all


def _prctl_subreaper(on: bool) -> bool:
    if not sys.platform.startswith("linux"):
        return False
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        return libc.prctl(_PR_SET_CHILD_SUBREAPER, 1 if on else 0, 0, 0, 0) == 0
    except (OSError, AttributeError):
        return False


def _processes() -> List[Tuple[int, bytes, int, int]]:
    """(pid, state, ppid, pgrp) of every process in /proc (empty where there is no /proc)."""
    out: List[Tuple[int, bytes, int, int]] = []
    try:
        names = os.listdir("/proc")
    except OSError:
        return out
    for name in names:
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as handle:
                stat = handle.read()
        except OSError:
            continue
        # pid (comm) state ppid pgrp ...: comm may hold spaces and parentheses, so split after the last ')'.
        fields = stat[stat.rfind(b")") + 2:].split()
        if len(fields) > 2 and fields[1].isdigit() and fields[2].isdigit():
            out.append((int(name), fields[0], int(fields[1]), int(fields[2])))
    return out


def _children() -> Dict[int, bool]:
    """This process's children, each with whether it is still running (not a zombie)."""
    me = os.getpid()
    return {pid: state != b"Z" for pid, state, ppid, _ in _processes() if ppid == me}


def _running_in_group(pgid: int) -> Set[int]:
    return {pid for pid, state, _, pgrp in _processes() if pgrp == pgid and state != b"Z"}


class ProcessTree:
    """Used around one traced run: `start()` before the child is spawned, `end(pid)` after."""

    def __init__(self) -> None:
        self.subreaper = False
        self._before: Set[int] = set()

    def start(self) -> None:
        # Children this process already had are not the script's and are left alone.
        self._before = set(_children())
        self.subreaper = _prctl_subreaper(True)

    def end(self, pid: Optional[int]) -> int:
        """Kills the child's group and every re-parented descendant; returns how many
        processes other than the child itself were still running and had to be killed."""
        victims: Set[int] = set()
        if pid is not None:
            victims |= _running_in_group(pid)
            _kill_group(pid)
        if self.subreaper:
            handled: Set[int] = set()
            for _ in range(_ROUNDS):
                strays = {p: running for p, running in _children().items()
                          if p not in self._before and p != pid and p not in handled}
                if not strays:
                    break
                for stray, running in strays.items():
                    victims |= _running_in_group(stray) | ({stray} if running else set())
                    _kill_group(stray)  # an escapee that called setsid leads its own group
                    _kill(stray)
                    _reap(stray)
                    handled.add(stray)
            _prctl_subreaper(False)
            self.subreaper = False
        victims.discard(pid)
        return len(victims)


def _kill(pid: int) -> None:
    try:
        os.kill(pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def _kill_group(pgid: int) -> None:
    if not hasattr(os, "killpg"):
        return
    try:
        os.killpg(pgid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def _reap(pid: int, wait_s: float = 5.0) -> None:
    """Collects a killed child's exit status (SIGKILL is not instant on a loaded machine)."""
    deadline = time.monotonic() + wait_s
    while True:
        try:
            done, _ = os.waitpid(pid, os.WNOHANG)
        except ChildProcessError:
            return
        if done or time.monotonic() > deadline:
            return
        time.sleep(0.01)
