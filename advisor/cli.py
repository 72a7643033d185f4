"""`advisor check | rules | explain`: the command-line face of the engine."""

from __future__ import annotations

import argparse
import os
import stat as stat_module
import sys
from pathlib import Path

from advisor import __version__
from advisor.collector import collector_paused, leave_to_exit
from advisor.config import (Config, ConfigError, ConfigFinder, load_config_file, parse_budget_option,
                            parse_codes_option, parse_file_size_option, parse_select_option, parse_torch_version)
from advisor.discovery import discover_root, display_name, is_notebook, path_problem, stat_or_none
from advisor.findings import FileProblem, FileResult, Finding
from advisor.runner import Job, Options, check_files, default_jobs
from advisor.source import DecodeError, decode_source, split_lines

TYPE_CHECKING = False
if TYPE_CHECKING:  # typing is not imported at run time: start-up is most of a warm run
    from typing import Any, Dict, List, Optional, Sequence, Set, Tuple

# The engine (libcst and the rules, most of the start-up time) is imported where a file is
# analysed, and fixes and notebooks where they are needed, so that a run answered from the
# result cache loads little more than this module.

EXIT_CLEAN, EXIT_FINDINGS, EXIT_ERROR = 0, 1, 2

DESCRIPTION = """\
torch-advisor finds the patterns that make PyTorch training slow or silently wrong:
host-device syncs in the training loop, unpinned DataLoaders, fp16 without a GradScaler,
DistributedSampler without set_epoch, DDP checkpoints saved with `module.` keys.
"""

CHECK_EPILOG = """\
exit codes: 0 no findings, 1 findings (or files that could not be parsed),
2 usage error, missing path, broken configuration or internal error.

configuration: [tool.advisor] in the nearest pyproject.toml above each path (or the file
--config names), with keys select, extend-select, ignore, extend-ignore, per-file-ignores,
exclude, extend-exclude, respect-gitignore, show-info, torch-version, docs-url,
analysis-budget, max-file-size. Command-line options win: --select and --ignore replace the
file's lists; the --extend-* options add to them.

colour: --color auto colours a terminal only; NO_COLOR (set, not empty) turns it off and
FORCE_COLOR (set, not empty) on; --color always|never overrides both.
"""


class _TerminalWidth:
    """argparse's formatters ask shutil for the terminal width, and argparse builds one per
    option it adds: importing shutil (and the compression modules it loads) cost every run
    2 ms. The width is worked out as shutil would: $COLUMNS, else the terminal, else 80."""

    def __init__(self, prog: str, indent_increment: int = 2, max_help_position: int = 24,
                 width: Optional[int] = None) -> None:
        if width is None:
            width = _terminal_columns() - 2
        super().__init__(prog, indent_increment, max_help_position, width)  # type: ignore[call-arg]


class _Formatter(_TerminalWidth, argparse.HelpFormatter):
    pass


class _RawFormatter(_TerminalWidth, argparse.RawDescriptionHelpFormatter):
    pass


def _terminal_columns() -> int:
    try:
        columns = int(os.environ.get("COLUMNS", ""))
    except ValueError:
        columns = 0
    if columns <= 0:
        try:
            columns = os.get_terminal_size(sys.__stdout__.fileno()).columns
        except (AttributeError, ValueError, OSError):
            columns = 0
    return columns if columns > 0 else 80


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="advisor", description=DESCRIPTION, formatter_class=_RawFormatter)
    parser.add_argument("--version", action="version", version=f"torch-advisor {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")

    check = sub.add_parser("check", help="check files and folders", description="Check Python files for "
                           "costly PyTorch patterns.", epilog=CHECK_EPILOG,
                           formatter_class=_RawFormatter)
    # Strings, not Paths: a run can be given thousands of file names (pre-commit, xargs).
    check.add_argument("paths", nargs="*", metavar="PATH",
                       help="files or folders (default: .); - reads the source from standard input")
    check.add_argument("--select", metavar="CODES",
                       help="comma-separated codes or prefixes to enable (e.g. GPU1,GPU201), replacing the configured "
                       "`select`")
    check.add_argument("--extend-select", metavar="CODES", help="codes or prefixes to enable on top of `select` "
                       "(e.g. GPU001, the opt-in unused-noqa check)")
    check.add_argument("--ignore", metavar="CODES", help="comma-separated codes or prefixes to disable, replacing the "
                       "configured `ignore`")
    check.add_argument("--extend-ignore", metavar="CODES", help="codes or prefixes to disable on top of `ignore`")
    check.add_argument("--extend-exclude", metavar="PATTERNS",
                       help="comma-separated gitignore-style patterns to leave out, on top of `exclude`")
    check.add_argument("--force-exclude", action="store_true",
                       help="leave out paths named on the command line (and --stdin-filename) that exclusions or "
                       "ignore files name, as a folder walk does; for pre-commit, which names every file")
    check.add_argument("--config", metavar="PATH",
                       help="take [tool.advisor] from this TOML file for every path, instead of the nearest "
                       "pyproject.toml")
    check.add_argument("--format", "--output-format", dest="format",
                       choices=("text", "concise", "json", "sarif", "github"), default="text",
                       help="output format (default: text); sarif for code scanning, github for workflow annotations")
    check.add_argument("--output-file", type=Path, metavar="PATH", help="write the report to PATH instead of stdout")
    check.add_argument("--color", choices=("auto", "always", "never"), default="auto",
                       help="colour the text report: auto (a terminal; NO_COLOR and FORCE_COLOR apply), always, never")
    check.add_argument("--fix", action="store_true", help="apply safe fixes in place")
    check.add_argument("--unsafe-fixes", action="store_true", help="with --fix or --diff, apply unsafe fixes too")
    check.add_argument("--fix-only", action="store_true",
                       help="apply fixes and report only what was fixed, not what remains (implies --fix; exit 0 "
                       "unless --exit-non-zero-on-fix)")
    check.add_argument("--exit-non-zero-on-fix", action="store_true",
                       help="exit 1 when --fix changed a file, even if no finding remains")
    check.add_argument("--show-fixes", action="store_true", help="after --fix, list what was fixed in each file")
    check.add_argument("--diff", action="store_true", help="print the fixes as a diff instead of writing them")
    check.add_argument("--add-noqa", action="store_true",
                       help="add a `# noqa: GPUxxx` comment for every finding, merged with any existing one")
    check.add_argument("--stdin-filename", metavar="PATH",
                       help="the name of the file read from standard input: its configuration, exclusions and "
                       "the name findings carry follow it")
    check.add_argument("--statistics", action="store_true",
                       help="print a count per rule instead of each finding")
    check.add_argument("--show-info", action="store_true", default=None, help="show info-level findings too")
    check.add_argument("--torch-version", metavar="X.Y",
                       help="oldest torch version the code must support (default: 2.4); version-dependent "
                       "rules and fixes follow it")
    check.add_argument("--analysis-budget", metavar="SECONDS",
                       help="CPU time one file's analysis may take before it is reported and skipped "
                       "(default: 60)")
    check.add_argument("--max-file-size", metavar="BYTES",
                       help="larger files are reported and skipped without being read (default: 5000000)")
    check.add_argument("--exit-zero", action="store_true", help="exit 0 even when there are findings")
    check.add_argument("-q", "--quiet", action="store_true", help="print findings only, no summary")
    check.add_argument("-j", "--jobs", type=_jobs, metavar="N", default=None,
                       help="worker processes (default: every core; 1 checks in this process)")
    check.add_argument("--no-cache", action="store_true",
                       help="neither read nor write the result cache and its stat index (ADVISOR_CACHE_DIR, "
                       "else $XDG_CACHE_HOME/torch-advisor or ~/.cache/torch-advisor)")
    check.add_argument("--measure", action="store_true",
                       help="run a short synthetic probe per finding (CPU probes anywhere, CUDA probes on a "
                       "GPU) and report a verdict and figures; needs torch: pip install 'torch-advisor[measure]'")

    rules = sub.add_parser("rules", help="list the rules", formatter_class=_Formatter)
    rules.add_argument("--format", choices=("text", "json"), default="text")

    explain = sub.add_parser("explain", help="show a rule's documentation", formatter_class=_Formatter)
    explain.add_argument("code", nargs="?", help="a rule code such as GPU101")
    explain.add_argument("--all", action="store_true", help="every rule, as one Markdown page")

    lsp = sub.add_parser("lsp", help="run the language server (stdio by default)", formatter_class=_Formatter,
                         description="Run the torch-advisor language server. Needs the `lsp` extra: "
                         "pip install 'torch-advisor[lsp]'.")
    lsp.add_argument("--tcp", metavar="HOST:PORT", help="listen on a TCP port instead of stdio")
    lsp.add_argument("--log-file", type=Path, metavar="PATH", help="write logs there instead of stderr")
    lsp.add_argument("--log-level", choices=("debug", "info", "warning", "error"), default="info")

    trace = sub.add_parser("trace", help="run a training script for a few steps and confirm findings",
                           description="Run `python SCRIPT ARGS` for N optimizer steps under the PyTorch "
                           "profiler, CUDA sync debug mode and warning capture, and match what it sees "
                           "with the static findings. This executes your code.",
                           epilog="exit codes: 0 the script ran (to N steps, the time limit or its end), "
                           "1 the script raised, 2 usage error, torch not importable or no report.",
                           usage="advisor trace [--steps N] [--time-limit S] [--out DIR] [--format text|json] "
                           "-- python train.py ARGS...", formatter_class=_Formatter)
    trace.add_argument("--steps", type=_positive_int, default=20, metavar="N",
                       help="optimizer steps to run before stopping (default: 20)")
    trace.add_argument("--time-limit", type=float, default=120.0, metavar="S",
                       help="wall-clock limit in seconds, for scripts without a torch optimizer (default: 120)")
    trace.add_argument("--out", type=Path, default=Path("advisor-trace"), metavar="DIR",
                       help="where trace-report.json and trace.json go (default: ./advisor-trace)")
    trace.add_argument("--format", choices=("text", "json"), default="text")
    trace.add_argument("target", nargs=argparse.REMAINDER, metavar="-- python train.py ARGS...")
    return parser


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError("expected 1 or more")
    return value


def _jobs(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number of processes, got {text!r}") from None
    if value < 0:
        raise argparse.ArgumentTypeError("expected 0 (every core) or more")
    return value


def main(argv: Optional[Sequence[str]] = None) -> int:
    parser = _parser()
    args = parser.parse_args(argv)
    commands = {"check": _check, "rules": _rules, "explain": lambda a: _explain(a, parser), "lsp": _lsp,
                "trace": _trace}
    command = commands.get(args.command)
    if command is None:
        parser.print_help(sys.stderr)
        return EXIT_ERROR
    # A reader that goes away (`advisor rules | head -1`) ends the output quietly, as grep's
    # does: no traceback, no error line. `check` keeps the exit code of its findings.
    status = EXIT_CLEAN if args.command in ("rules", "explain") else EXIT_ERROR
    try:
        status = command(args)
        if args.command != "lsp":
            sys.stdout.flush()  # here, not in the interpreter's exit, where a failure is a traceback
    except KeyboardInterrupt:
        return EXIT_ERROR
    except BrokenPipeError:
        _quiet_stdout()
    if argv is None:  # the program's own run (`advisor`, `python -m advisor`), not a caller's
        leave_to_exit()
    return status


def _error(message: str) -> None:
    from advisor.output.names import printable  # file names may hold newlines and stray bytes

    sys.stderr.write(f"advisor: error: {printable(message)}\n")


# -- check ---------------------------------------------------------------------------------------
def _check(args: argparse.Namespace) -> int:
    if args.fix_only:
        args.fix = True
    if args.add_noqa and (args.fix or args.diff):
        _error("--add-noqa cannot be combined with --fix, --fix-only or --diff")
        return EXIT_ERROR
    paths = args.paths or (["-"] if args.stdin_filename else ["."])
    if "-" in paths and len(paths) > 1:
        _error("`-` (standard input) cannot be combined with other paths")
        return EXIT_ERROR
    try:
        overrides = {
            "select": parse_select_option(args.select) if args.select is not None else None,
            "ignore": parse_codes_option(args.ignore, "--ignore") if args.ignore else None,
            "show_info": args.show_info,
            "torch_version": parse_torch_version(args.torch_version) if args.torch_version else None,
            "analysis_budget": parse_budget_option(args.analysis_budget) if args.analysis_budget is not None else None,
            "max_file_size": parse_file_size_option(args.max_file_size) if args.max_file_size is not None else None,
            "project_roots": tuple(os.path.abspath(p) for p in paths if p != "-" and os.path.isdir(p)) or None,
        }
        extend_select = parse_codes_option(args.extend_select, "--extend-select") if args.extend_select else ()
        extend_ignore = parse_codes_option(args.extend_ignore, "--extend-ignore") if args.extend_ignore else ()
        extend_exclude = tuple(p.strip() for p in (args.extend_exclude or "").split(",") if p.strip())
        fixed_config = load_config_file(Path(args.config)) if args.config else None
    except ConfigError as exc:
        _error(str(exc))
        return EXIT_ERROR
    if getattr(args, "measure", False) and not _torch_importable():
        _error("--measure needs torch: pip install 'torch-advisor[measure]'")
        return EXIT_ERROR
    finder = ConfigFinder(fixed=fixed_config)
    status = EXIT_CLEAN
    results: List[FileResult] = []

    def unusable(path: str, reason: str) -> None:
        nonlocal status
        _error(f"{path}: {reason}")
        status = EXIT_ERROR

    # The files of one folder share one Config object: (the finder's config, with the overrides).
    overridden: Dict[int, Tuple[Config, Config]] = {}

    def config_for(path: str, is_file: bool) -> Config:
        found = finder.for_file(path) if is_file else finder.for_path(Path(path))
        known = overridden.get(id(found))
        if known is None or known[0] is not found:  # kept alive by the entry: no id is reused
            config = found.with_overrides(**overrides)
            if extend_select or extend_ignore or extend_exclude:
                config = config.replace(extend_select=config.extend_select + extend_select,
                                        extend_ignore=config.extend_ignore + extend_ignore,
                                        extend_exclude=config.extend_exclude + extend_exclude)
            known = overridden[id(found)] = (found, config)
        return known[1]

    if paths == ["-"]:
        try:
            return _check_stdin(args, config_for)
        except ConfigError as exc:
            _error(str(exc))
            return EXIT_ERROR

    found_all = _discover_all(args, paths, config_for, unusable)
    if found_all is None:
        return EXIT_ERROR
    jobs, notebooks = found_all

    # Notebooks after the walk, with the collector back on: their analysis leaves garbage.
    for path, config_for_file in notebooks:
        result = _check_one(path, config_for_file, args)
        if result is None:
            status = EXIT_ERROR
            continue
        results.append(result)

    for result in _check_python_files(jobs, args):
        if result is None:
            status = EXIT_ERROR
            continue
        results.append(result)

    results.sort(key=lambda r: r.filename)
    if args.add_noqa:
        return _add_noqa(results, status)
    return _finish(results, status, args)


def _discover_all(args: argparse.Namespace, paths: List[str], config_for: Any,
                  unusable: Any) -> Optional[Tuple[List[Job], List[Tuple[Path, Config]]]]:
    """The Python files and notebooks under the paths, each with its configuration; None after
    a configuration error (printed). ``unusable(path, reason)`` reports a path that cannot be
    checked (missing, a symlink loop, a pipe or a device)."""
    jobs: List[Job] = []  # Python files: the cache, then in-process or on a process pool
    notebooks: List[Tuple[Path, Config]] = []
    seen: Set[Any] = set()  # files already found (one check per file, however often it is named)
    ignore_files = None  # imported once a folder is walked or --force-exclude asks; named files need neither
    try:
        with collector_paused():  # a warm run over thousands of files allocates much, frees nothing
            for root in paths:
                root = display_name(root)
                root_stat = stat_or_none(root)
                is_dir = root_stat is not None and stat_module.S_ISDIR(root_stat.st_mode)
                try:
                    config = config_for(root, root_stat is not None and not is_dir)
                except ConfigError as exc:
                    _error(str(exc))
                    return None
                if getattr(args, "docs_url", None) is None:
                    args.docs_url = config.docs_url  # the report-wide rule links (SARIF) follow the first path
                problem = path_problem(root, root_stat)
                if problem is not None:
                    unusable(root, problem)
                    continue
                if ignore_files is None and (is_dir or args.force_exclude):
                    from advisor import ignore_files
                    from advisor.cache import open_cache_folder

                    ignore_files.start_run(None if args.no_cache else open_cache_folder)
                if args.force_exclude and force_excluded(root, is_dir, config):
                    continue
                excluded = config.is_excluded if config.excludes else None
                for found in discover_root(root, root_stat, excluded, seen, config.respect_gitignore):
                    try:
                        config_for_file = config if found.explicit else config_for(found.name, True)
                    except ConfigError as exc:
                        _error(str(exc))
                        return None
                    if is_notebook(found.name):
                        notebooks.append((found.path, config_for_file))
                    else:
                        jobs.append(Job(found.name, config_for_file, found.stat))
    finally:
        if ignore_files is not None:
            ignore_files.end_run()  # pathspec's new verdicts, remembered for the next run
    return jobs, notebooks


def _finish(results: List[FileResult], status: int, args: argparse.Namespace, out: Any = None) -> int:
    """Warnings, the report and the exit code of a run whose results are in. ``out``: where the
    report goes when not stdout or --output-file (stderr, when stdout carries fixed source)."""
    _print_warnings(results)
    findings: List[Finding] = [f for r in results for f in r.findings]
    problems: List[FileProblem] = [r.problem for r in results if r.problem is not None]
    if getattr(args, "measure", False) and not args.diff:
        _measure(findings, results, args)

    if args.diff:
        try:
            changed = _print_diffs(results, args.unsafe_fixes)
            sys.stdout.flush()
        except BrokenPipeError:
            _quiet_stdout()
            changed = any(r.fixed_text is not None for r in results)
        if status == EXIT_ERROR:
            return status
        return EXIT_FINDINGS if changed and not args.exit_zero else EXIT_CLEAN

    fixed = sum(r.fixes_applied for r in results)
    try:
        _report(findings, problems, results, args, status == EXIT_ERROR, out)
        sys.stdout.flush()
    except BrokenPipeError:
        _quiet_stdout()  # the reader went away (`| head`): as grep does, say nothing
    except OSError as exc:
        _error(f"{args.output_file}: cannot write the report ({exc.strerror or exc})")
        return EXIT_ERROR
    if status == EXIT_ERROR:
        return status
    if args.exit_zero:
        return EXIT_CLEAN
    if args.exit_non_zero_on_fix and fixed:
        return EXIT_FINDINGS
    if args.fix_only:
        return EXIT_CLEAN
    if findings or problems:
        return EXIT_FINDINGS
    return EXIT_CLEAN


def _warn(message: str) -> None:
    from advisor.output.names import printable  # file names may hold newlines and stray bytes

    sys.stderr.write(f"advisor: warning: {printable(message)}\n")


def _print_warnings(results: List[FileResult]) -> None:
    from advisor.findings import location

    for result in results:
        for warning in result.warnings:
            _warn(f"{location(warning.filename, warning.cell, warning.row, warning.column)}: {warning.reason}")


def force_excluded(path: str, is_dir: bool, config: Config) -> bool:
    """`--force-exclude`: whether a folder walk would leave out this named path: a skipped
    folder (build, .venv, ...) on its way from the configuration's folder (or the working
    folder), an `exclude` or `extend-exclude` pattern, or an ignore file."""
    from advisor.discovery import SKIPPED_DIRS

    relative = None
    for base in ([config.root] if config.root is not None else []) + [Path.cwd()]:
        try:
            relative = Path(path).resolve().relative_to(base.resolve())
            break
        except (ValueError, OSError):
            continue
    if relative is not None:
        parts = relative.parts if is_dir else relative.parts[:-1]
        if any(part in SKIPPED_DIRS or part.endswith(".egg-info") for part in parts):
            return True
    if config.excludes and config.is_excluded(path, is_dir):
        return True
    if config.respect_gitignore:
        from advisor.ignore_files import path_is_ignored

        return path_is_ignored(os.path.abspath(path), is_dir)
    return False


def _quiet_stdout() -> None:
    """Points stdout at /dev/null after its reader closed the pipe, so that the flush at exit
    does not fail again with a traceback."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError, AttributeError):
        pass


def _check_stdin(args: argparse.Namespace, config_for: Any) -> int:
    """`advisor check -` (with --stdin-filename for the configuration and name): the source
    comes from standard input; with --fix the fixed source goes to stdout and the report to
    stderr, as ruff does, so that editors can pipe a buffer through it."""
    from advisor.suppression import check_text

    name = args.stdin_filename or "-"
    named = args.stdin_filename is not None
    config = config_for(name, True) if named else config_for(".", False)
    args.docs_url = config.docs_url
    data = sys.stdin.buffer.read()
    if named and args.force_exclude and force_excluded(name, False, config):
        if args.fix:
            _write_stdout_bytes(data)  # an excluded file goes through unchanged
        return EXIT_CLEAN
    if args.add_noqa:
        _error("--add-noqa writes files; it does not take standard input")
        return EXIT_ERROR
    path = Path(name) if named else None
    if is_notebook(name):
        if args.fix or args.diff:
            _error("fixing a notebook from standard input is not supported; name the file instead")
            return EXIT_ERROR
        from advisor.notebook import check_notebook_text

        try:
            raw = data.decode("utf-8-sig")
        except UnicodeDecodeError as exc:
            result: FileResult = FileResult(name, problem=FileProblem(name, f"cannot decode: not UTF-8 ({exc.reason})"))
        else:
            result, _ = check_notebook_text(raw, name, config, path)
        return _finish([result], EXIT_CLEAN, args)
    try:
        source = decode_source(data)
    except DecodeError as exc:
        result = FileResult(name, problem=FileProblem(name, f"cannot decode: {exc}"))
        if args.fix:
            _write_stdout_bytes(data)
        return _finish([result], EXIT_CLEAN, args, sys.stderr if args.fix else None)
    result = check_text(source.text, name, config, path=path)
    result.source = source
    if (args.fix or args.diff) and result.problem is None:
        result = _fixed(path or Path(name), result, config, args.unsafe_fixes)
    if args.diff:
        return _finish([result], EXIT_CLEAN, args)
    if args.fix:
        text = result.fixed_text if result.fixed_text is not None else source.text
        try:
            _write_stdout_bytes(text.encode(source.encoding))
        except UnicodeEncodeError:
            _write_stdout_bytes(data)
            result = getattr(result, "unfixed", None) or result
        return _finish([result], EXIT_CLEAN, args, sys.stderr)
    return _finish([result], EXIT_CLEAN, args)


def _write_stdout_bytes(data: bytes) -> None:
    try:
        sys.stdout.flush()
        sys.stdout.buffer.write(data)
        sys.stdout.buffer.flush()
    except BrokenPipeError:
        _quiet_stdout()


def _add_noqa(results: List[FileResult], status: int) -> int:
    """`--add-noqa`: writes a `# noqa` code for each finding into its file."""
    import ast

    from advisor.add_noqa import with_noqa

    _print_warnings(results)
    added = 0
    for result in results:
        if result.problem is not None:
            _warn(f"{result.filename}: {result.problem.reason}; no noqa added")
            continue
        if not result.findings or result.source is None:
            continue
        if _is_notebook_result(result):
            from advisor.notebook import notebook_with_noqa

            new_text, count = notebook_with_noqa(result)
            if new_text is None:
                _warn(f"{result.filename}: the noqa comments could not be mapped back to the notebook's cells; "
                      "not changed")
                continue
        else:
            new_text, count = with_noqa(result.source.text, result.findings)
            try:
                ast.parse(new_text)
            except (SyntaxError, ValueError):  # never expected: the comments go where Python allows one
                _warn(f"{result.filename}: the noqa comments would break the file; not changed")
                continue
            except RecursionError:
                pass
        if not count:
            continue
        if _is_notebook_result(result):
            from advisor.notebook import NotebookResult

            candidate: FileResult = NotebookResult(result.filename, result.findings, None, result.source, new_text,
                                                   notebook=result.notebook, unfixed=result)
        else:
            candidate = _FixedResult(result.filename, result.findings, None, result.source, new_text, 0, result)
        written = _write_fixes(result.filename, candidate, "noqa")
        if written is None:
            status = EXIT_ERROR
        elif written is candidate:
            added += count
    sys.stderr.write(f"Added {added} noqa code{'s' if added != 1 else ''}.\n")
    return status


def _torch_importable() -> bool:
    import warnings

    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # e.g. "Failed to initialize NumPy"
            import torch  # noqa: F401 - only `check --measure` imports torch
    except ImportError:
        return False
    return True


def _measure(findings: List[Finding], results: List[FileResult], args: argparse.Namespace) -> None:
    """Runs the probes of the findings (advisor.runtime) and attaches their measurements."""
    from advisor.runtime.measure import measure_findings

    texts: Dict[str, str] = {}
    for r in results:
        if r.findings and not _is_notebook_result(r):
            if r.source is not None:
                texts[r.filename] = _checked_text(r)
            else:
                try:
                    texts[r.filename] = decode_source(Path(r.filename).read_bytes()).text
                except (OSError, ValueError):
                    pass
    measure_findings(findings, texts, use_cache=not args.no_cache)


def _check_python_files(jobs: List[Job], args: argparse.Namespace) -> List[Optional[FileResult]]:
    """Results in the jobs' order; None for a file that failed (the error is printed)."""
    count = args.jobs if args.jobs else default_jobs()
    # The progress bar goes to stderr: only on a terminal, never with --quiet, and not while a
    # machine-readable report goes to a pipe.
    progress = (not args.quiet and sys.stderr.isatty()
                and (args.format == "text" or (sys.stdout.isatty() and getattr(args, "output_file", None) is None)))
    options = Options(jobs=count, use_cache=not args.no_cache, fix=args.fix or args.diff,
                      unsafe=args.unsafe_fixes, progress=progress)
    out: List[Optional[FileResult]] = []
    for job, (result, error) in zip(jobs, check_files(jobs, options, _fixed)):
        if result is None:
            _error(f"{job.display}: internal error ({error}); please report it")
            out.append(None)
            continue
        if args.fix and not args.diff and result.fixed_text is not None and result.source is not None:
            result = _write_fixes(job.display, result)
        out.append(result)
    return out


class _FixedResult(FileResult):
    """A result after fixes that also holds the result of the file as it was read
    (``unfixed``): that one is reported if the fixes cannot be written."""

    __slots__ = ("unfixed",)
    _fields = FileResult._fields + __slots__

    def __init__(self, filename: str, findings: Optional[List[Finding]] = None, problem: Optional[FileProblem] = None,
                 source: Any = None, fixed_text: Optional[str] = None, fixes_applied: int = 0,
                 unfixed: Optional[FileResult] = None) -> None:
        super().__init__(filename, findings, problem, source, fixed_text, fixes_applied)
        self.unfixed = unfixed


def _fixed(path: Path, result: FileResult, config: Config, unsafe: bool) -> FileResult:
    """The fixes of one file, applied until stable, without writing (runs in a worker).
    ``result`` is the file's first analysis: fixing starts from it, not from a second one."""
    from advisor.fixes import fix_until_stable
    from advisor.suppression import check_text

    source = result.source

    def check(text: str) -> FileResult:
        return check_text(text, result.filename, config, path=path)

    unfixed = FileResult(result.filename, result.findings, result.problem, source, warnings=result.warnings)
    done: List[Finding] = []
    new_text, applied, final = fix_until_stable(source.text, check, unsafe=unsafe, checked=result, applied=done)
    if not applied:
        return result
    # The rounds left the fixed text in this process's project view: a neighbour checked next
    # would see it here but not in another worker (--jobs must not change what is reported).
    from advisor.project.view import reread

    reread(str(path))
    fixed = _FixedResult(final.filename, final.findings, final.problem, source, new_text, applied, unfixed)
    fixed.warnings = final.warnings
    fixed.fixed = done
    return fixed


def _check_one(path: Path, config: Config, args: argparse.Namespace) -> Optional[FileResult]:
    """One notebook (Python files go through the runner)."""
    from advisor.notebook import check_notebook

    display = str(path)
    try:
        result = check_notebook(path, config, display, fix=args.fix or args.diff, unsafe=args.unsafe_fixes)
    except Exception as exc:  # noqa: BLE001 - one file's crash must not end the run
        _error(f"{display}: internal error ({type(exc).__name__}: {exc}); please report it")
        return None
    if args.fix and not args.diff and result.fixed_text is not None:
        return _write_fixes(display, result)
    return result


def _is_notebook_result(result: FileResult) -> bool:
    # advisor.notebook is imported when the first notebook is checked: before that, no result
    # can be a NotebookResult, and a run without notebooks never loads it.
    notebook = sys.modules.get("advisor.notebook")
    return notebook is not None and isinstance(result, notebook.NotebookResult)


def _write_fixes(display: str, result: FileResult, what: str = "fixes") -> Optional[FileResult]:
    """Writes a fixed file with `--fix` (``what``: "noqa" for `--add-noqa`). Returns the result
    to report: the fixed one; the file as it was read when the write is refused (one line says
    why; its findings are still there, so the run exits 1 as for any finding); None when the
    write failed or the file changed during the run (one line, and the run exits 2)."""
    from advisor.file_writes import FileChangedOnDisk, WriteRefused, write_fixed

    source = result.source
    original = source.text.encode(source.encoding) if _is_notebook_result(result) else None

    def unchanged(data: bytes) -> bool:
        if original is not None:
            return data == original  # a notebook's UTF-8 bytes round-trip exactly
        try:
            return decode_source(data) == source  # the same text, read with the same codec
        except DecodeError:
            return False

    try:
        try:
            data = result.fixed_text.encode(source.encoding)
        except UnicodeEncodeError:
            raise WriteRefused(f"the fixed text cannot be encoded as {source.encoding}") from None
        write_fixed(display, unchanged, data)
        _forget_read(display)
    except WriteRefused as exc:
        from advisor.output.names import printable

        what_not = "changed" if what == "noqa" else "fixed"
        sys.stderr.write(f"advisor: warning: {printable(f'{display}: {exc}')}; not {what_not}\n")
        return result.unfixed
    except FileChangedOnDisk:
        _error(f"{display}: changed on disk while it was being checked; not {'changed' if what == 'noqa' else 'fixed'}")
        return None
    except OSError as exc:
        _error(f"{display}: cannot write the {what} ({exc.strerror or exc})")
        return None
    return result


def _forget_read(path: str) -> None:
    """What this process remembers of a file it has just rewritten (its digest for cached
    results' dependencies, its text in the project views) is dropped: a later check in the same
    process (the language server, a caller of `main`) must read the new bytes."""
    from advisor.project.view import reread
    from advisor.runner import forget_digest

    forget_digest(path)
    reread(path)


def _checked_text(result: FileResult) -> str:
    """The text a Python file's findings refer to: after --fix, the fixed text (findings left
    after the fixes are in its rows)."""
    return result.fixed_text if result.fixed_text is not None else result.source.text


def _print_diffs(results: List[FileResult], unsafe: bool) -> bool:
    changed = 0
    fixes = 0
    for result in results:
        new_text = result.fixed_text
        if new_text is None or result.source is None:
            continue
        if _is_notebook_result(result):
            sys.stdout.write(result.diff())  # per cell, not the notebook's JSON
        else:
            from advisor.fixes import unified_diff

            sys.stdout.write(unified_diff(result.source.text, new_text, result.filename))
        changed += 1
        fixes += result.fixes_applied
    if changed:
        sys.stderr.write(f"Would fix {fixes} finding{'s' if fixes != 1 else ''} in {changed} file{'s' if changed != 1 else ''}.\n")
    else:
        sys.stderr.write("No fixes available.\n")
    return changed > 0


def _report(findings: List[Finding], problems: List[FileProblem], results: List[FileResult], args,
            errors: bool = False, out: Any = None) -> None:
    if args.output_file is None:
        _print(findings, problems, results, args, out if out is not None else sys.stdout, errors)
        return
    with open(args.output_file, "w", encoding="utf-8", newline="\n") as handle:
        _print(findings, problems, results, args, handle, errors)


def _print(findings: List[Finding], problems: List[FileProblem], results: List[FileResult], args, out,
           errors: bool = False) -> None:
    fixed = sum(r.fixes_applied for r in results)
    if args.fix_only:
        findings = []  # what is left is not reported (--fix-only), only what was fixed
    if args.statistics and args.format == "json":
        from advisor.output.json_output import write_statistics_json

        write_statistics_json(out, findings)
    elif args.format == "concise" and not args.statistics:
        from advisor.output.concise import write_concise

        write_concise(out, findings, problems)
    elif args.format == "json":
        from advisor.output.json_output import write_json

        write_json(out, findings, problems)
    elif args.format == "sarif" and not args.statistics:
        from advisor.output.sarif import write_sarif

        write_sarif(out, findings, problems, getattr(args, "docs_url", None))
    elif args.format == "github" and not args.statistics:
        from advisor.output.github import write_github

        write_github(out, findings, problems)
    else:
        from advisor.output.console import report_console
        from advisor.output.text import write_fixes, write_statistics, write_summary, write_text

        console = report_console(out, args.color)
        if args.statistics:
            write_statistics(console, findings)
        else:
            sources: Dict = {}
            for r in results:
                if _is_notebook_result(r):
                    sources.update(r.cell_lines())
                elif r.findings and r.source is not None:
                    sources[r.filename] = split_lines(_checked_text(r))
            write_text(console, findings, problems, sources)
        if args.show_fixes:
            write_fixes(console, results)
        if args.fix_only:
            if not args.quiet:
                console.print(f"Fixed {fixed} finding{'s' if fixed != 1 else ''}." if fixed else "No fixes applied.")
        elif not args.quiet:
            write_summary(console, findings, problems, args.unsafe_fixes, fixed, errors)
        if getattr(args, "measure", False):
            from advisor.output.text import write_measurements

            write_measurements(console, findings)
        return
    if args.show_fixes:
        from advisor.output.console import report_console
        from advisor.output.text import write_fixes

        write_fixes(report_console(sys.stderr, args.color), results)
    if fixed and not args.quiet:
        sys.stderr.write(f"Fixed {fixed} finding{'s' if fixed != 1 else ''}.\n")


# -- rules and explain ---------------------------------------------------------------------------
def _rules(args: argparse.Namespace) -> int:
    from advisor.rule_docs import rules_json, rules_text
    from advisor.rules import ALL_RULES

    if args.format == "json":
        import json

        try:  # links only where the project names its hosted pages
            docs_url = ConfigFinder().for_path(Path(".")).docs_url
        except ConfigError as exc:
            _error(str(exc))
            return EXIT_ERROR
        json.dump(rules_json(ALL_RULES, docs_url), sys.stdout, indent=2)
        sys.stdout.write("\n")
        return EXIT_CLEAN
    # Plain text on a terminal too: the width is the terminal's (or $COLUMNS, else 80).
    sys.stdout.write(rules_text(ALL_RULES, _terminal_columns()))
    return EXIT_CLEAN


def _explain(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    from advisor.rule_docs import explain_markdown, rules_markdown

    if args.all:
        sys.stdout.write(rules_markdown())
        return EXIT_CLEAN
    if not args.code:
        _error("give a rule code (such as GPU101) or --all")
        return EXIT_ERROR
    text = explain_markdown(args.code)
    if text is None:
        from advisor.rules import ALL_RULES

        known = ", ".join(r.code for r in ALL_RULES)
        _error(f"unknown rule {args.code!r}; known rules: {known}")
        return EXIT_ERROR
    sys.stdout.write(text)
    return EXIT_CLEAN


# -- trace -------------------------------------------------------------------------------------
def _trace(args: argparse.Namespace) -> int:
    from advisor.runtime.trace import TraceError, trace

    if args.time_limit <= 0:
        _error("--time-limit must be positive")
        return EXIT_ERROR
    try:
        return trace(args.target, args.steps, args.time_limit, args.out, args.format)
    except TraceError as exc:
        _error(str(exc))
        return EXIT_ERROR


# -- lsp -----------------------------------------------------------------------------------------
def _lsp(args: argparse.Namespace) -> int:
    try:
        from advisor.lsp.server import serve
    except ImportError as exc:
        if (exc.name or "").split(".")[0] not in ("pygls", "lsprotocol", "cattrs", "attrs"):
            raise
        _error(f"the language server needs pygls ({exc}); install it with: pip install 'torch-advisor[lsp]'")
        return EXIT_ERROR
    import logging

    if args.tcp and (":" not in args.tcp or not args.tcp.rpartition(":")[2].isdigit()):
        _error(f"--tcp expects HOST:PORT, got {args.tcp!r}")
        return EXIT_ERROR
    # Logs never go to stdout: on stdio that is the protocol channel.
    handler = logging.FileHandler(args.log_file, encoding="utf-8") if args.log_file else logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(logging.WARNING)
    logging.getLogger("advisor").setLevel(args.log_level.upper())
    # pygls logs every message body at INFO and DEBUG: far too much for a log file.
    logging.getLogger("pygls").setLevel(logging.WARNING)
    return serve(args.tcp)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
