"""Probe results cached on disk, per device, torch version, probe code and parameters.

Lives under the result cache's folder (advisor.cache.cache_dir()), in `measure/`. The key also
covers the probe modules' source, so an edited probe is measured afresh. Only verdicts
(`confirmed`, `not confirmed`) are stored: errors, timeouts and skips are retried next run.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from pathlib import Path
from typing import Any, Dict, Optional

from advisor.cache import cache_dir

_SOURCES = ("probes_cpu.py", "probes_cuda.py", "result.py", "child.py")


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
        try:
            value = json.loads((self.root / f"{key}.json").read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None
        return value if isinstance(value, dict) and "verdict" in value else None

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
