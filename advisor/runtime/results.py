"""Probe results cached on disk, per device, torch version, probe code and parameters.

Lives under the result cache's folder (advisor.cache.cache_dir()), in `measure/`. The key also
covers the probe modules' source, so an edited probe is measured afresh. Only verdicts
(`confirmed`, `not confirmed`) are stored: errors, timeouts and skips are retried next run.
An entry is read only from a regular file of bounded size, and used only if every field has
the type a probe gives it; anything else is a miss, measured again.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import stat
import tempfile
from pathlib import Path
from typing import Any, Dict, Optional

from advisor.cache import cache_dir

_SOURCES = ("probes_cpu.py", "probes_cuda.py", "result.py", "child.py")
_MAX_ENTRY = 1 << 20  # an entry is a few hundred bytes
_FIGURES = ("baseline", "fixed", "ratio", "saving_per_step")


def _probe_fingerprint() -> str:
    digest = hashlib.sha256()
    here = Path(__file__).resolve().parent
    for name in _SOURCES:
        try:
            digest.update((here / name).read_bytes())
        except OSError:
            pass
    return digest.hexdigest()


def result_key(device: Dict[str, Any], code: str, params: Dict[str, Any]) -> str:
    body = json.dumps({"device": device.get("name"), "torch": device.get("torch"), "cuda": device.get("cuda"),
                       "code": code, "params": params, "probes": _probe_fingerprint()},
                      sort_keys=True, default=str)
    return hashlib.sha256(body.encode()).hexdigest()


class MeasureCache:
    def __init__(self, root: Optional[Path] = None) -> None:
        self.root = (root or cache_dir()) / "measure"

    def get(self, key: str) -> Optional[Dict[str, Any]]:
        data = _read_regular(self.root / f"{key}.json")
        if data is None:
            return None
        try:
            value = json.loads(data.decode("utf-8"))
        except (ValueError, RecursionError):
            return None
        return value if _well_formed(value) else None

    def put(self, key: str, value: Dict[str, Any]) -> None:
        if value.get("verdict") not in ("confirmed", "not confirmed"):
            return
        try:
            self.root.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(dir=str(self.root), suffix=".tmp")
            with os.fdopen(fd, "w", encoding="utf-8") as handle:
                json.dump(value, handle)
            os.replace(tmp, self.root / f"{key}.json")
        except OSError:
            pass  # a read-only cache only costs a re-measurement


def _read_regular(path: Path) -> Optional[bytes]:
    """The file's bytes if it is a regular file (not a link, FIFO or device) of at most
    _MAX_ENTRY bytes; None otherwise. Non-blocking open: a FIFO must not hang the run."""
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOFOLLOW", 0)
    try:
        fd = os.open(path, flags)
    except OSError:
        return None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode) or info.st_size > _MAX_ENTRY:
            return None
        with os.fdopen(fd, "rb", closefd=False) as handle:
            return handle.read(_MAX_ENTRY + 1)[:_MAX_ENTRY]
    except OSError:
        return None
    finally:
        os.close(fd)


def _well_formed(value: Any) -> bool:
    """Whether a cached entry has the shape result.outcome() gives (what the report prints)."""
    if not isinstance(value, dict) or value.get("verdict") not in ("confirmed", "not confirmed"):
        return False
    for name in _FIGURES:
        figure = value.get(name)
        if figure is not None and (isinstance(figure, bool) or not isinstance(figure, (int, float))
                                   or not math.isfinite(figure)):
            return False
    for name in ("unit", "detail"):
        if value.get(name) is not None and not isinstance(value.get(name), str):
            return False
    return value.get("extra") is None or isinstance(value.get("extra"), dict)
