"""Probe results cached on disk, per device, torch version, probe code and parameters.

Lives in the result cache's folder (advisor.cache.open_cache_folder()), in `measure/`, under the
same rules: a folder of this user's only, entries sealed with the folder's key and read as
regular files of bounded size. The key also covers the probe modules' source, so an edited probe
is measured afresh. Only verdicts (`confirmed`, `not confirmed`) are stored: errors, timeouts and
skips are retried next run. An entry that is not sealed, does not decode, or whose fields are not
of the types a probe gives (a verdict, numbers or nothing, a unit, a detail) is measured again.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
from pathlib import Path
from typing import Any, Dict, Optional

from advisor.cache import open_cache_folder
from advisor.cache_files import load_json

MAX_RESULT_BYTES = 1024 * 1024
_VERDICTS = ("confirmed", "not confirmed")
_FIGURES = ("baseline", "fixed", "ratio", "saving_per_step")

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


def valid(value: object) -> bool:
    """Whether a stored result has the shape a probe's verdict has (result.outcome)."""
    if not isinstance(value, dict) or value.get("verdict") not in _VERDICTS:
        return False
    for name in _FIGURES:
        figure = value.get(name)
        if figure is None:
            continue
        if isinstance(figure, bool) or not isinstance(figure, (int, float)):
            return False
        try:
            # An integer beyond a float's range fails in the report's formatting; NaN and
            # infinities (which Python's json reads) are no measurement either.
            if not math.isfinite(float(figure)):
                return False
        except OverflowError:
            return False
    return (isinstance(value.get("unit"), (str, type(None))) and isinstance(value.get("detail", ""), str)
            and isinstance(value.get("extra", {}), dict))


class MeasureCache:
    def __init__(self, root: Optional[Path] = None) -> None:
        self.folder = open_cache_folder(root)
        self.root = self.folder.inside("measure") if self.folder is not None else None

    def _path(self, key: str) -> Optional[str]:
        return os.path.join(self.root, f"{key}.json") if self.root is not None else None

    def get(self, key: str) -> Optional[Dict[str, Any]]:
        path = self._path(key)
        if path is None:
            return None
        value = load_json(self.folder.read_sealed(b"measure", path, MAX_RESULT_BYTES) or b"")
        return value if valid(value) else None

    def put(self, key: str, value: Dict[str, Any]) -> None:
        path = self._path(key)
        if path is None or not valid(value):
            return
        try:
            payload = json.dumps(value).encode("utf-8")
        except (TypeError, ValueError):
            return
        self.folder.write_sealed(b"measure", path, payload)  # best effort: a miss costs a measurement
