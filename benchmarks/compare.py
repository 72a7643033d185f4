"""torch-advisor against its peers, side by side on the same files. A benchmark, never a test.

    python benchmarks/compare.py --quick        # fixed subset of torch, peers capped at 180 s a run
    python benchmarks/compare.py                # all of torch (TorchFix and Fixit: ~22 min a run)
    python benchmarks/compare.py --tools advisor,advisor-j1,parse --corpus torch

Tools (each run as a child process on the same explicit file list):
  advisor        advisor check, all rules, --no-cache, every core (--jobs default)
  advisor-j1     the same in one process
  advisor-warm   the same with a filled result cache (ADVISOR_CACHE_DIR in a temporary folder);
                 the filling run waits until the copied files are older than the stat index's
                 3 s margin, as a user's files are between two runs
  list-hash      stat, read and SHA-256-hash every file: the warm-cache target's yardstick
  parse          a bare libcst.parse_module of every file, one process (the project's libcst)
  torchfix       TorchFix --select ALL (its own parallelism, every core)
  fixit          Fixit's default rules, `fixit lint` (its own parallelism)
  flake8         flake8 --select F (pyflakes codes only), --jobs auto

Corpora:
  torch          the installed torch package's .py files (torch==2.13.0 in the peers' venv);
                 --quick takes torch/optim, torch/utils/data and torch/nn/modules only
  scripts-sized  corpus (b): tests/corpus/*.py and examples/*.py (realistic training scripts)
                 concatenated into 24 files of 100 to 2,000 lines, four of each of six sizes
                 (in a temporary folder)
  scripts        the same scripts as they are: short (about 60 to 200 lines each), so start-up
                 weighs more

The peers live in their own virtual environment, never in the project's: by default
benchmarks/.venv-peers (git-ignored), or $ADVISOR_PEERS_VENV; flake8 in one of its own (it runs
every installed plugin, TorchFix's included, whatever --select says), benchmarks/.venv-flake8 or
$ADVISOR_FLAKE8_VENV. To create them:

    python -m venv benchmarks/.venv-peers
    benchmarks/.venv-peers/bin/pip install torch==2.13.0 torchfix fixit
    python -m venv benchmarks/.venv-flake8
    benchmarks/.venv-flake8/bin/pip install flake8

Every child runs with bytecode caching on (PYTHONDONTWRITEBYTECODE removed from its
environment), as an installed package runs: some sandboxes set it, and then every run compiles
the project's modules afresh, which is no user's start-up.

Reported per tool: median wall seconds over --runs runs, files/s and lines/s from that median,
the peak resident memory of the largest single process (children included, from wait4), and
the ratio of the tool's time to torch-advisor's (advisor) and to the bare parse.
"""

from __future__ import annotations

import argparse
import os
import shutil
import signal
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Dict, List, Optional, Sequence, Tuple

ROOT = Path(__file__).resolve().parent.parent
PROJECT_PYTHON = Path(sys.executable)
QUICK_TORCH = ("optim", "utils/data", "nn/modules")
ALL_TOOLS = ("advisor", "advisor-j1", "advisor-warm", "list-hash", "parse", "torchfix", "fixit", "flake8")

PARSE_SCRIPT = """
import sys, libcst
failed = 0
for name in open(sys.argv[1], encoding="utf-8").read().splitlines():
    try:
        libcst.parse_module(open(name, "rb").read())
    except Exception:
        failed += 1
"""
HASH_SCRIPT = """
import sys, os, hashlib
for name in open(sys.argv[1], encoding="utf-8").read().splitlines():
    os.stat(name)
    with open(name, "rb") as f:
        hashlib.sha256(f.read()).hexdigest()
"""


def peers_venv() -> Path:
    return Path(os.environ.get("ADVISOR_PEERS_VENV", ROOT / "benchmarks" / ".venv-peers"))


def flake8_venv() -> Path:
    # flake8 runs every installed plugin whatever --select says: TorchFix's (and ours) must not
    # be there, so it gets a venv of its own.
    return Path(os.environ.get("ADVISOR_FLAKE8_VENV", ROOT / "benchmarks" / ".venv-flake8"))


def peer_bin(name: str) -> Optional[Path]:
    path = (flake8_venv() if name == "flake8" else peers_venv()) / "bin" / name
    return path if path.exists() else None


def torch_dir() -> Optional[Path]:
    for candidate in sorted((peers_venv() / "lib").glob("python3*/site-packages/torch")):
        if (candidate / "__init__.py").is_file():
            return candidate
    return None


def py_files(folder: Path) -> List[Path]:
    found = []
    for dirpath, dirs, files in os.walk(folder):
        dirs.sort()
        found.extend(Path(dirpath) / f for f in sorted(files) if f.endswith(".py"))
    return found


def count_lines(files: Sequence[Path]) -> int:
    return sum(path.read_bytes().count(b"\n") for path in files)


SIZED_TARGETS = (100, 250, 500, 1000, 1500, 2000)


def sized_scripts(files: Sequence[Path], into: Path, rounds: int = 4) -> List[Path]:
    """Corpus (b): the scripts concatenated, in file-name order and round after round, into
    files of at least 100, 250, 500, 1,000, 1,500 and 2,000 lines (``rounds`` of each)."""
    into.mkdir(parents=True, exist_ok=True)
    texts = [t if t.endswith("\n") else t + "\n" for t in (p.read_text(encoding="utf-8") for p in files)]
    made: List[Path] = []
    index = 0
    for _ in range(rounds):
        for target in SIZED_TARGETS:
            parts: List[str] = []
            lines = 0
            while lines < target:
                text = texts[index % len(texts)]
                index += 1
                parts.append(text)
                lines += text.count("\n")
            path = into / f"script_{len(made):02}_{target}.py"
            path.write_text("".join(parts), encoding="utf-8")
            made.append(path)
    return made


# -- running one child ---------------------------------------------------------------------------
def run_child(command: List[str], timeout: Optional[float], env: Optional[Dict[str, str]] = None
              ) -> Tuple[Optional[float], float, int]:
    """(wall seconds or None when timed out, peak RSS in MB of the largest process, exit code)."""
    start = time.perf_counter()
    import subprocess

    proc = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            env=env, start_new_session=True)
    deadline = None if timeout is None else start + timeout
    while True:
        # Without a time limit, a blocking wait: polling would round a 40 ms run to its interval.
        pid, status, usage = os.wait4(proc.pid, os.WNOHANG if deadline is not None else 0)
        if pid:
            break
        if deadline is not None and time.perf_counter() > deadline:
            os.killpg(proc.pid, signal.SIGKILL)
            _, status, usage = os.wait4(proc.pid, 0)
            proc.returncode = -9
            return None, usage.ru_maxrss / 1024, -9
        time.sleep(0.005)
    wall = time.perf_counter() - start
    proc.returncode = os.waitstatus_to_exitcode(status)
    return wall, usage.ru_maxrss / 1024, proc.returncode


def commands(tool: str, files: List[Path], listing: Path, cache: Path) -> Optional[List[str]]:
    names = [str(f) for f in files]
    advisor = [str(PROJECT_PYTHON), "-m", "advisor", "check", "--format", "concise", "--exit-zero", "-q"]
    if tool == "advisor":
        return advisor + ["--no-cache"] + names
    if tool == "advisor-j1":
        return advisor + ["--no-cache", "--jobs", "1"] + names
    if tool == "advisor-warm":
        return advisor + names
    if tool == "list-hash":
        return [str(PROJECT_PYTHON), "-c", HASH_SCRIPT, str(listing)]
    if tool == "parse":
        return [str(PROJECT_PYTHON), "-c", PARSE_SCRIPT, str(listing)]
    if tool == "torchfix":
        exe = peer_bin("torchfix")
        return None if exe is None else [str(exe), "--select", "ALL"] + names
    if tool == "fixit":
        exe = peer_bin("fixit")
        return None if exe is None else [str(exe), "lint"] + names
    if tool == "flake8":
        exe = peer_bin("flake8")
        return None if exe is None else [str(exe), "--select", "F", "--jobs", "auto"] + names
    raise ValueError(tool)


def _seconds(value: float) -> str:
    return f"{value:.3f}" if value < 1 else f"{value:.2f}"


def bench_corpus(label: str, files: List[Path], tools: Sequence[str], runs: int,
                 peer_timeout: Optional[float]) -> None:
    lines = count_lines(files)
    print(f"\n## {label}: {len(files):,} files, {lines:,} lines")
    work = Path(tempfile.mkdtemp(prefix="advisor-bench-"))
    # Copied out of the repository: Fixit (trailrunner) skips git-ignored files, and the peers'
    # venv is git-ignored. Every tool reads the same copies.
    base = Path(os.path.commonpath([str(f.parent) for f in files]))
    copies = []
    for f in files:
        target = work / "src" / f.relative_to(base)
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(f, target)
        copies.append(target)
    files = copies
    listing = work / "files.txt"
    listing.write_text("\n".join(str(f) for f in files), encoding="utf-8")
    cache = work / "cache"
    env = dict(os.environ, ADVISOR_CACHE_DIR=str(cache))
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    copied_at = time.time()
    rows = []
    try:
        for tool in tools:
            command = commands(tool, files, listing, cache)
            if command is None:
                print(f"- {tool}: not installed (see above), skipped")
                continue
            timeout = peer_timeout if tool in ("torchfix", "fixit", "flake8") else None
            if tool == "advisor-warm":
                # The stat index does not trust files changed in the last 3 s (a later write in
                # the same clock tick could go unseen): wait until the copies are older.
                time.sleep(max(0.0, copied_at + 3.5 - time.time()))
                run_child(command, None, env)  # fills the cache
            walls, peaks, codes = [], [], set()
            timed_out = False
            for _ in range(runs):
                wall, peak, code = run_child(command, timeout, env)
                peaks.append(peak)
                if wall is None:
                    timed_out = True
                    break
                walls.append(wall)
                codes.add(code)
            rows.append((tool, walls, max(peaks), timed_out, timeout, codes))
            sys.stderr.write(f"  {tool}: {', '.join(_seconds(w) for w in walls) or '-'}"
                             f"{' (timed out)' if timed_out else ''}\n")
    finally:
        shutil.rmtree(work, ignore_errors=True)
    medians = {tool: statistics.median(walls) for tool, walls, _, timed_out, _, _ in rows if walls and not timed_out}
    print()
    print("| tool | median s (runs) | files/s | lines/s | peak MB/process | x advisor time | x bare parse time |")
    print("| --- | --- | --- | --- | --- | --- | --- |")
    for tool, walls, peak, timed_out, timeout, codes in rows:
        if timed_out:
            ratio = f"> {timeout / medians['advisor']:.0f}" if "advisor" in medians else ""
            print(f"| {tool} | timed out after {timeout:.0f} s | | | {peak:,.0f} | {ratio} | |")
            continue
        median = medians[tool]
        vs_advisor = f"{median / medians['advisor']:.2f}" if "advisor" in medians else ""
        vs_parse = f"{median / medians['parse']:.2f}" if "parse" in medians else ""
        bad = {c for c in codes if c not in (0, 1)}
        note = f" (exit {sorted(bad)})" if bad else ""
        print(f"| {tool}{note} | {_seconds(median)} ({len(walls)}) | {len(files) / median:,.0f} | {lines / median:,.0f} "
              f"| {peak:,.0f} | {vs_advisor} | {vs_parse} |")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="torch subset only, peers capped (--timeout)")
    parser.add_argument("--runs", type=int, default=3, help="runs per tool (default 3); the median is reported")
    parser.add_argument("--timeout", type=float, default=None,
                        help="seconds per peer run before it is killed (default: 180 with --quick, none without)")
    parser.add_argument("--tools", default=",".join(ALL_TOOLS), help=f"comma-separated, of {', '.join(ALL_TOOLS)}")
    parser.add_argument("--corpus", default="torch,scripts-sized,scripts",
                        help="comma-separated: torch, scripts-sized, scripts")
    args = parser.parse_args()
    tools = [t.strip() for t in args.tools.split(",") if t.strip()]
    for tool in tools:
        if tool not in ALL_TOOLS:
            parser.error(f"unknown tool {tool!r}")
    timeout = args.timeout if args.timeout is not None else (180.0 if args.quick else None)

    print(f"# torch-advisor benchmark: {os.cpu_count()} cores, Python {sys.version.split()[0]}, "
          f"{args.runs} runs per tool{', quick' if args.quick else ''}")
    for tool in ("torchfix", "fixit", "flake8"):
        if tool in tools and peer_bin(tool) is None:
            venv = flake8_venv() if tool == "flake8" else peers_venv()
            print(f"{tool} is missing (not in {venv}); install it with:\n"
                  f"  python -m venv {venv} && {venv}/bin/pip install {tool}")
    corpora = [c.strip() for c in args.corpus.split(",") if c.strip()]
    if "torch" in corpora:
        torch = torch_dir()
        if torch is None:
            print(f"torch corpus skipped: no torch in {peers_venv()}; "
                  f"{peers_venv()}/bin/pip install torch==2.13.0")
        else:
            folders = [torch / sub for sub in QUICK_TORCH] if args.quick else [torch]
            files = [f for folder in folders for f in py_files(folder)]
            what = " + ".join(f"torch/{s}" for s in QUICK_TORCH) if args.quick else "torch"
            bench_corpus(f"(a) {what} (torch 2.13.0)", files, tools, args.runs, timeout)
    scripts = sorted((ROOT / "tests" / "corpus").glob("*.py")) + sorted((ROOT / "examples").glob("*.py"))
    if "scripts" in corpora:
        sizes = [p.read_bytes().count(b"\n") for p in scripts]
        bench_corpus(f"(b-short) training scripts, tests/corpus + examples as they are ({min(sizes)}-{max(sizes)} "
                     "lines each)", scripts, tools, args.runs, timeout)
    if "scripts-sized" in corpora:
        with tempfile.TemporaryDirectory(prefix="advisor-sized-") as folder:
            sized = sized_scripts(scripts, Path(folder))
            sizes = [p.read_bytes().count(b"\n") for p in sized]
            bench_corpus(f"(b) training scripts of 100 to 2,000 lines: tests/corpus + examples concatenated into "
                         f"{len(sized)} files of {min(sizes):,}-{max(sizes):,} lines", sized, tools, args.runs, timeout)
    return 0


if __name__ == "__main__":
    sys.exit(main())
