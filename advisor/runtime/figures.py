"""Recorded probe figures: what each rule's probe measured, on which device and torch, kept in
figures.json beside this module so that the rule pages and `advisor explain` can show them.

    python -m advisor.runtime.figures record               # every probe this machine can run
    python -m advisor.runtime.figures record GPU501 GPU402 # only these rules' probes
    python -m advisor.runtime.figures record --only cuda   # the CUDA probes (scripts/gpu-check)
    python -m advisor.runtime.figures show                 # what is recorded

Each probe runs once, in a child process, with the registry's default parameters. A probe that
needs CUDA is recorded only where a CUDA device is present; elsewhere its entry is left as it
was, so figures from a GPU machine and from a CPU-only one can be recorded in turn into the
same file. Only verdicts are recorded (errors, timeouts and skips are reported, not kept).
After recording, regenerate the pages: `python -m advisor.docsite generate`.

Reading the file needs no torch; recording does.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import sys
import tempfile
from pathlib import Path
from typing import Any, Callable, Dict, Iterable, Optional, Sequence

from advisor.runtime.registry import PROBES, Probe

FIGURES = Path(__file__).resolve().with_name("figures.json")
FORMAT = 1
_KEPT = ("verdict", "baseline", "fixed", "unit", "ratio", "saving_per_step", "detail")
_VERDICTS = ("confirmed", "not confirmed")


def load_figures(path: Path = FIGURES) -> Dict[str, Dict[str, Any]]:
    """Rule code -> recorded figure; {} when the file is missing or not of this format."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    if not isinstance(data, dict) or data.get("format") != FORMAT or not isinstance(data.get("figures"), dict):
        return {}
    return {code: entry for code, entry in data["figures"].items()
            if isinstance(entry, dict) and entry.get("verdict") in _VERDICTS}


def recorded_figure(code: str, path: Path = FIGURES) -> Optional[Dict[str, Any]]:
    return load_figures(path).get(code)


def _device(probe: Probe, cuda_device: Dict[str, Any]) -> Dict[str, Any]:
    """A CPU probe runs on the CPU even on a GPU machine: say so rather than name the GPU."""
    if probe.needs_cuda:
        return dict(cuda_device)
    return {"name": f"cpu ({platform.machine() or 'unknown'})", "torch": cuda_device.get("torch"), "cuda": None}


def record(codes: Iterable[str], only: Optional[str] = None, path: Path = FIGURES,
           runner: Optional[Callable[[str, Dict[str, Any], float], Dict[str, Any]]] = None,
           timeout: Optional[float] = None, today: Optional[str] = None,
           out=sys.stderr) -> int:
    """Runs the probes and merges their figures into ``path``; 0 when every probe that could run
    here gave a verdict, 1 otherwise."""
    from advisor.runtime.child import run_in_child
    from advisor.runtime.device import device_facts, has_cuda
    from advisor.runtime.measure import probe_timeout

    runner = runner or run_in_child
    timeout = timeout if timeout is not None else probe_timeout()
    facts = device_facts()
    cuda = has_cuda(facts)
    wanted = [code.upper() for code in codes] or sorted(PROBES)
    figures = dict(load_figures(path))
    status = 0
    for code in wanted:
        probe = PROBES.get(code)
        if probe is None:
            out.write(f"{code}: no probe\n")
            status = 1
            continue
        if (only == "cuda" and not probe.needs_cuda) or (only == "cpu" and probe.needs_cuda):
            continue
        if probe.needs_cuda and not cuda:
            out.write(f"{code}: skipped, {probe.probe} needs a CUDA device\n")
            continue
        params = probe.params()
        result = runner(code, params, timeout)
        if result.get("verdict") not in _VERDICTS:
            out.write(f"{code}: {result.get('verdict')}; not recorded\n")
            status = 1
            continue
        entry: Dict[str, Any] = {"probe": probe.probe}
        entry.update({key: result.get(key) for key in _KEPT})
        entry["params"] = {k: v for k, v in params.items() if k != "apply_fix"}
        entry["device"] = _device(probe, facts)
        entry["recorded"] = today or datetime.date.today().isoformat()
        figures[code] = entry
        out.write(f"{code}: {entry['verdict']} ({probe.probe}) {entry['baseline']} -> {entry['fixed']} "
                  f"{entry['unit'] or ''}\n")
    _write_all(path, figures)
    return status


def _write_all(path: Path, figures: Dict[str, Dict[str, Any]]) -> None:
    body = json.dumps({"format": FORMAT, "figures": dict(sorted(figures.items()))}, indent=2, sort_keys=False)
    fd, tmp = tempfile.mkstemp(dir=str(path.parent), suffix=".tmp")
    with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as handle:
        handle.write(body + "\n")
    os.replace(tmp, path)


def _show(path: Path, out=sys.stdout) -> int:
    figures = load_figures(path)
    for code, probe in sorted(PROBES.items()):
        entry = figures.get(code)
        if entry is None:
            out.write(f"{code}  {probe.probe:14} not measured yet{' (needs CUDA)' if probe.needs_cuda else ''}\n")
            continue
        device = entry.get("device") or {}
        out.write(f"{code}  {probe.probe:14} {entry['verdict']}: {entry.get('baseline')} -> {entry.get('fixed')} "
                  f"{entry.get('unit') or ''} [{device.get('name')}, torch {device.get('torch')}, "
                  f"{entry.get('recorded')}]\n")
    return 0


def main(argv: Optional[Sequence[str]] = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m advisor.runtime.figures", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    rec = sub.add_parser("record", help="run probes and record their figures")
    rec.add_argument("codes", nargs="*", metavar="CODE", help="rule codes (default: every probe)")
    rec.add_argument("--only", choices=("cpu", "cuda"), help="only the CPU or only the CUDA probes")
    rec.add_argument("--file", type=Path, default=FIGURES, help="the figures file (default: the committed one)")
    show = sub.add_parser("show", help="print what is recorded")
    show.add_argument("--file", type=Path, default=FIGURES)
    args = parser.parse_args(argv)
    if args.command == "show":
        return _show(args.file)
    import warnings

    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # e.g. "Failed to initialize NumPy"
            import torch  # noqa: F401 - recording runs the probes
    except ImportError:
        sys.stderr.write("recording figures needs torch: pip install 'torch-advisor[measure]'\n")
        return 2
    return record(args.codes, args.only, args.file)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
