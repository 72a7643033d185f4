"""`--measure`: run each measured finding's probe once (per code and parameters) and attach
the result to the finding as `finding.measurement`."""

from __future__ import annotations

import os
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

from advisor.findings import Finding
from advisor.runtime.child import DEFAULT_TIMEOUT_S, run_in_child
from advisor.runtime.device import device_facts, has_cuda
from advisor.runtime.registry import get_probe
from advisor.runtime.result import skipped
from advisor.runtime.results import MeasureCache, result_key
from advisor.runtime.site import parse, site_params


def probe_timeout() -> float:
    try:
        return max(1.0, float(os.environ.get("ADVISOR_PROBE_TIMEOUT", "")))
    except ValueError:
        return DEFAULT_TIMEOUT_S


def measure_findings(findings: Sequence[Finding], texts: Dict[str, str], use_cache: bool = True,
                     runner: Callable[[str, Dict[str, Any], float], Dict[str, Any]] = run_in_child) -> None:
    """Sets `measurement` on every finding that has a probe; `texts` maps filename -> source."""
    device = device_facts()
    cuda = has_cuda(device)
    cache = MeasureCache() if use_cache else None
    done: Dict[Tuple[str, str], Dict[str, Any]] = {}
    trees: Dict[str, Any] = {}
    timeout = probe_timeout()
    for f in findings:
        probe = get_probe(f.code)
        if probe is None:
            continue
        if f.filename not in trees:
            text = texts.get(f.filename)
            trees[f.filename] = parse(text) if text is not None and f.cell is None else None
        params = probe.params(site_params(f, tree=trees[f.filename]))
        memo = (f.code, repr(sorted(params.items())))
        if memo not in done:
            done[memo] = _measure_one(f.code, params, probe.needs_cuda, cuda, device, cache, timeout, runner)
        value = dict(done[memo])
        f.measurement = {
            "verdict": value.get("verdict"),
            "probe": probe.probe,
            "baseline": value.get("baseline"),
            "fixed": value.get("fixed"),
            "unit": value.get("unit"),
            "ratio": value.get("ratio"),
            "saving_per_step": value.get("saving_per_step"),
            "detail": value.get("detail", ""),
            "device": device,
            "params": params,
            "cached": bool(value.get("cached")),
        }


def _measure_one(code: str, params: Dict[str, Any], needs_cuda: bool, cuda: bool, device: Dict[str, Any],
                 cache: Optional[MeasureCache], timeout: float, runner) -> Dict[str, Any]:
    if needs_cuda and not cuda:
        return skipped("no CUDA device")
    key = result_key(device, code, params)
    if cache is not None:
        hit = cache.get(key)
        if hit is not None:
            return dict(hit, cached=True)
    value = runner(code, params, timeout)
    if cache is not None:
        cache.put(key, value)
    return value


def measured(findings: Sequence[Finding]) -> List[Finding]:
    return [f for f in findings if getattr(f, "measurement", None) is not None]
