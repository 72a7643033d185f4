"""Questions still being answered, so that an answer that leaned on one of them is not kept.

The model's questions ask each other across a project (who calls this forward? what does this
parameter hold? who calls the function it belongs to? ...) and sometimes come back to a question
still open further up. That inner read gets the open question's placeholder (nothing known), a
cut that is right for breaking the cycle but wrong anywhere else. An answer computed through such a
read must not outlive the question it leaned on: kept for good, a later question would see the cut,
and which question a check meets first depends on the order files are checked in (a finding warned
when its file is checked alone and info after a neighbour).

Each memoised question opens a frame. Reading an open question's placeholder, or an answer that
leaned on one, lowers the reading frame's low mark to that question's depth (as in Tarjan's strongly
connected components). A frame that closes with its low mark above its own depth is complete and
kept; otherwise its answer is provisional: it serves the questions asked until the frame it leaned
on closes (so a cycle still costs one pass), and is then forgotten, to be answered afresh later
with nothing open.
"""
from __future__ import annotations

import threading
from typing import Any, Callable, Dict, List, MutableMapping, Tuple

_state = threading.local()


class _Frame:
    __slots__ = ("depth", "low", "provisional")

    def __init__(self, depth: int) -> None:
        self.depth = depth
        self.low = depth
        self.provisional: List[Tuple[MutableMapping, Any]] = []  # answers that leaned on this frame


class _Tracker:
    def __init__(self) -> None:
        self.frames: List[_Frame] = []
        # (id(memo), key) -> depth: placeholders of open questions and provisional answers.
        self.leaning: Dict[Tuple[int, Any], int] = {}
        # Answers already forgotten once in this file's check: the second one is kept, whatever
        # it leaned on, so that a question asked from inside a cycle again and again is not
        # answered again and again (cost stays linear; the cases seen in practice settle on
        # the second answer, found with the question that cut the first one closed).
        self.retried: set = set()

    def read(self, memo: MutableMapping, key: Any) -> None:
        depth = self.leaning.get((id(memo), key))
        if depth is not None and self.frames:
            top = self.frames[-1]
            if depth < top.low:
                top.low = depth

    def open(self, memo: MutableMapping, key: Any, placeholder: bool) -> _Frame:
        frame = _Frame(len(self.frames) + 1)
        self.frames.append(frame)
        if placeholder:
            self.leaning[(id(memo), key)] = frame.depth
        return frame

    def _pop(self, frame: _Frame) -> None:
        """Pop ``frame``: forget what leaned on it, and hand its low mark to the frame below."""
        self.frames.pop()
        for other, other_key in frame.provisional:
            other.pop(other_key, None)
            self.leaning.pop((id(other), other_key), None)
        if self.frames and frame.low < self.frames[-1].low:
            self.frames[-1].low = frame.low

    def close(self, frame: _Frame, memo: MutableMapping, key: Any, keep: bool) -> None:
        """Pop ``frame``; its answer (already in ``memo``) is kept, provisional or dropped."""
        self._pop(frame)
        self.leaning.pop((id(memo), key), None)
        if not keep:
            memo.pop(key, None)
            return
        if frame.low < frame.depth:
            slot = (id(memo), key)
            if slot in self.retried:
                return
            self.retried.add(slot)
            self.frames[frame.low - 1].provisional.append((memo, key))
            self.leaning[slot] = frame.low

    def lean(self) -> _Frame:
        """Open a frame for partial work a structure keeps itself (no memo entry, no placeholder)."""
        frame = _Frame(len(self.frames) + 1)
        self.frames.append(frame)
        return frame

    def settle(self, frame: _Frame) -> int:
        """Close a `lean` frame: the depth of the open question its work leaned on (0: none)."""
        self._pop(frame)
        return frame.low if frame.low < frame.depth else 0

    def lean_on(self, depth: int) -> None:
        """The running question read partial work of the open question at ``depth``."""
        if self.frames and depth < self.frames[-1].low:
            self.frames[-1].low = depth

    def hold_until(self, memo: MutableMapping, key: Any, depth: int) -> None:
        """``memo[key]`` holds partial work that leaned on the open question at ``depth``: it is
        forgotten when that question closes, and whoever reads it before leans on it too."""
        if not 0 < depth <= len(self.frames):
            return
        slot = (id(memo), key)
        known = self.leaning.get(slot)
        if known is not None and known <= depth:
            return
        self.frames[depth - 1].provisional.append((memo, key))
        self.leaning[slot] = depth


def new_check() -> None:
    """A file's check begins: every answer may be forgotten once again."""
    tracker = current()
    if not tracker.frames:
        tracker.retried.clear()


def current() -> _Tracker:
    """This thread's open questions (a budget-stopped analysis may still run in another)."""
    tracker = getattr(_state, "tracker", None)
    if tracker is None:
        tracker = _state.tracker = _Tracker()
    return tracker


NO_GUARD = object()


def remembered(memo: MutableMapping, key: Any, compute: Callable[[], Any], guard: Any = NO_GUARD) -> Any:
    """``memo[key]``, computed by ``compute()`` the first time. While it is being computed, the
    same question asked again reads ``guard`` (a recursion guard: False, None, an empty answer);
    without one it is computed again, nested."""
    tracker = current()
    if key in memo:
        if tracker.leaning:
            tracker.read(memo, key)
        return memo[key]
    guarded = guard is not NO_GUARD
    frame = tracker.open(memo, key, guarded)
    if guarded:
        memo[key] = guard
    try:
        value = compute()
    except BaseException:
        tracker.close(frame, memo, key, keep=False)
        raise
    memo[key] = value
    tracker.close(frame, memo, key, keep=True)
    return value
