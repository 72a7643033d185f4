"""The measurement a probe returns, as a plain JSON-ready dict (no torch here)."""

from __future__ import annotations

import statistics
from typing import Any, Dict, List, Optional, Sequence

CONFIRMED = "confirmed"
NOT_CONFIRMED = "not confirmed"


_AUTO: Any = object()


def outcome(confirmed: bool, baseline: Optional[float], fixed: Optional[float], unit: str,
            ratio: Optional[float] = _AUTO, saving_per_step: Optional[float] = None,
            detail: str = "", **extra: Any) -> Dict[str, Any]:
    """A probe's answer. `baseline` is the pattern as written, `fixed` its fixed form."""
    if ratio is _AUTO:  # baseline / fixed where both are figures; pass None where it means nothing
        ratio = baseline / fixed if baseline is not None and fixed else None
    out: Dict[str, Any] = {
        "verdict": CONFIRMED if confirmed else NOT_CONFIRMED,
        "baseline": _round(baseline),
        "fixed": _round(fixed),
        "unit": unit,
        "ratio": _round(ratio),
        "saving_per_step": _round(saving_per_step),
        "detail": detail,
    }
    if extra:
        out["extra"] = {k: _round(v) if isinstance(v, float) else v for k, v in extra.items()}
    return out


def skipped(reason: str) -> Dict[str, Any]:
    return {"verdict": f"skipped: {reason}", "baseline": None, "fixed": None, "unit": None,
            "ratio": None, "saving_per_step": None, "detail": ""}


def error(reason: str) -> Dict[str, Any]:
    out = skipped("")
    out["verdict"] = f"error: {reason}"
    return out


def _round(value: Optional[float]) -> Optional[float]:
    if value is None or isinstance(value, bool) or not isinstance(value, (int, float)):
        return value
    if value != value or value in (float("inf"), float("-inf")):
        return None
    return float(f"{value:.4g}")


def median_iqr(samples: Sequence[float]) -> Dict[str, float]:
    """Median and interquartile range of repeated runs (the spread the report shows)."""
    data: List[float] = sorted(samples)
    if len(data) < 2:
        return {"median": data[0], "iqr": 0.0, "n": len(data)}
    q = statistics.quantiles(data, n=4, method="inclusive")
    return {"median": statistics.median(data), "iqr": q[2] - q[0], "n": len(data)}
