"""`[tool.advisor]` in pyproject.toml: finding it, validating it, and asking it about codes."""

from __future__ import annotations

import os
import re
import sys
from pathlib import Path, PurePath

from advisor.values import Value

TYPE_CHECKING = False
if TYPE_CHECKING:  # typing is not imported at run time: start-up is most of a warm run
    from typing import Any, Callable, Dict, Optional, Tuple

    Warn = Callable[[str], None]  # takes one line about a setting that works but does nothing

# tomllib and fnmatch are imported where a pyproject.toml or a glob is met: most files of a
# warm run need neither.

_CODE = re.compile(r"^[A-Z]{1,3}[0-9]{0,3}$")
KNOWN_KEYS = ("select", "extend-select", "ignore", "extend-ignore", "per-file-ignores", "exclude", "extend-exclude",
              "respect-gitignore", "show-info", "torch-version", "docs-url", "analysis-budget", "max-file-size")
# The oldest torch release line the default advice assumes; version-dependent rules read it.
DEFAULT_TORCH_VERSION = (2, 4)
# A handful of digits per part: a longer number is no torch release (and Python refuses to turn
# one of over 4,300 digits into an int).
_VERSION = re.compile(r"^(\d{1,6})\.(\d{1,6})(?:\.\d{1,6})?$")
# What one file may cost (see advisor/limits.py): seconds of CPU time for its analysis, and
# bytes on disk, checked before it is read.
DEFAULT_ANALYSIS_BUDGET = 60.0
DEFAULT_MAX_FILE_SIZE = 5_000_000
# A budget longer than a week is as good as none, and keeps timeouts within what threads accept.
MAX_ANALYSIS_BUDGET = 7 * 24 * 3600.0


class ConfigError(Exception):
    """A configuration the tool cannot use; the message names the file and the key."""


class Config(Value):
    """One folder's settings. Immutable: derive another with replace() or with_overrides()."""

    __slots__ = ("select", "ignore", "per_file_ignores", "exclude", "show_info", "torch_version", "docs_url",
                 "root", "source", "analysis_budget", "max_file_size", "extend_select", "extend_ignore",
                 "extend_exclude", "respect_gitignore", "project_roots")
    _fields = __slots__
    __hash__ = Value.value_hash

    def __init__(self, select: Tuple[str, ...] = ("GPU",), ignore: Tuple[str, ...] = (),
                 per_file_ignores: Tuple[Tuple[str, Tuple[str, ...]], ...] = (), exclude: Tuple[str, ...] = (),
                 show_info: bool = False, torch_version: Tuple[int, int] = DEFAULT_TORCH_VERSION,
                 docs_url: Optional[str] = None, root: Optional[Path] = None, source: Optional[Path] = None,
                 analysis_budget: float = DEFAULT_ANALYSIS_BUDGET, max_file_size: int = DEFAULT_MAX_FILE_SIZE,
                 extend_select: Tuple[str, ...] = (), extend_ignore: Tuple[str, ...] = (),
                 extend_exclude: Tuple[str, ...] = (), respect_gitignore: bool = True,
                 project_roots: Tuple[str, ...] = ()) -> None:
        self.select = select
        self.ignore = ignore
        self.per_file_ignores = per_file_ignores
        self.exclude = exclude
        self.show_info = show_info
        self.torch_version = torch_version  # the oldest torch the project supports
        self.docs_url = docs_url  # where the rule pages are hosted: "https://host/rules/{code}"
        self.root = root  # folder of the pyproject.toml it came from
        self.source = source
        self.analysis_budget = analysis_budget  # CPU seconds one file's analysis may take
        self.max_file_size = max_file_size  # bytes: a larger file is refused before it is read
        # extend-*: added to select, ignore and exclude whichever of those wins (the file's or
        # the command line's)
        self.extend_select = extend_select
        self.extend_ignore = extend_ignore
        self.extend_exclude = extend_exclude
        self.respect_gitignore = respect_gitignore  # .gitignore, .ignore and git's excludes
        # Folders named on the command line (absolute): the project root of a file under one of
        # them when no pyproject.toml, setup.cfg or .git marks one (an unpacked archive).
        self.project_roots = project_roots

    def with_overrides(self, **changes: Any) -> Config:
        return self.replace(**{k: v for k, v in changes.items() if v is not None})

    def relative(self, path: Any) -> str:
        path = Path(path)
        if self.root is not None:
            try:
                return path.resolve().relative_to(self.root.resolve()).as_posix()
            except (ValueError, OSError):
                pass
        return path.as_posix()

    def is_enabled(self, code: str, path: Optional[Path] = None) -> bool:
        """flake8's rule: the longest matching prefix wins between select and ignore. A
        meta-rule needs a selector longer than the tool's prefix (rule_codes.enables)."""
        from advisor.rule_codes import enables  # here: a warm run asks no configuration about codes

        ignore = list(self.ignore + self.extend_ignore)
        if path is not None and self.per_file_ignores:
            relative = self.relative(path)
            for pattern, codes in self.per_file_ignores:
                if _matches(pattern, relative):
                    ignore.extend(codes)
        selected = max((len(p) for p in self.select + self.extend_select if enables(p, code)), default=0)
        ignored = max((len(p) for p in ignore if code.startswith(p)), default=-1)
        return selected > 0 and selected > ignored

    @property
    def excludes(self) -> Tuple[str, ...]:
        return self.exclude + self.extend_exclude

    def is_excluded(self, path: Path, is_dir: bool = False) -> bool:
        """Whether ``exclude`` or ``extend-exclude`` (gitignore patterns, relative to this
        file's folder) names the path or a folder above it."""
        patterns = self.excludes
        if not patterns:
            return False
        from advisor.ignore_files import pattern_spec  # pathspec: only where a pattern is set

        relative = self.relative(path)
        return pattern_spec(patterns).matches(relative + "/" if is_dir else relative)


def _matches(pattern: str, relative: str) -> bool:
    import fnmatch

    pattern = pattern.rstrip("/")
    if fnmatch.fnmatch(relative, pattern) or fnmatch.fnmatch(PurePath(relative).name, pattern):
        return True
    # A pattern naming a folder excludes what is under it.
    parts = PurePath(relative).parts
    return any(fnmatch.fnmatch("/".join(parts[: i + 1]), pattern) for i in range(len(parts) - 1))


def _codes(value: Any, key: str, where: str, warn: Optional[Warn] = None) -> Tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ConfigError(f"{where}: `{key}` must be a list of rule codes, such as [\"GPU101\"]")
    for code in value:
        if not _CODE.match(code.strip().upper()):
            raise ConfigError(f"{where}: `{key}` holds {code!r}, which is not a rule code or prefix")
    codes = tuple(code.strip().upper() for code in value)
    for code in codes:
        _check_selector(code, key, f"{where}: `{key}`", warn)
    return codes


def parse_codes_option(text: str, option: str = "", warn: Optional[Warn] = None) -> Tuple[str, ...]:
    """`--select GPU1,GPU201` on the command line (``option``: the flag, for messages)."""
    codes = tuple(part.strip().upper() for part in text.split(",") if part.strip())
    where = f"{option}: " if option else ""
    for code in codes:
        if not _CODE.match(code):
            raise ConfigError(f"{where}{code!r} is not a rule code or prefix")
        _check_selector(code, option.lstrip("-"), option, warn)
    return codes


def _check_selector(code: str, key: str, where: str, warn: Optional[Warn]) -> None:
    """A selector must name a rule, a meta-rule or a prefix of some; a typo would otherwise
    turn checks off without a word. A retired or reserved code (GPU404) selects nothing: naming
    it to select is an error, naming it to ignore only a warning (it hides nothing either)."""
    from advisor.retired_codes import retired_code
    from advisor.rule_codes import selects_something

    prefix = f"{where}: " if where else ""
    entry = retired_code(code)
    if entry is not None:
        message = f"`{code}` is {entry.status}: no rule has it (see `advisor explain {code}`)"
        if key.endswith("select"):
            raise ConfigError(f"{prefix}{message}")
        (warn or warn_on_stderr)(f"{prefix}{message}; it has no effect")
        return
    if not selects_something(code):
        raise ConfigError(f"{prefix}Unknown rule selector: `{code}`")


def warn_on_stderr(message: str) -> None:
    sys.stderr.write(f"advisor: warning: {message}\n")


def parse_select_option(text: str, option: str = "--select") -> Tuple[str, ...]:
    """`--select`: like parse_codes_option, but a selection of nothing is refused."""
    codes = parse_codes_option(text, option)
    if not codes:
        raise ConfigError(f"--select {text!r} enables no rule; name codes or prefixes such as GPU1")
    return codes


def _number(value: Any) -> Optional[float]:
    """An int or float that is finite; None for anything else (booleans included)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    try:
        number = float(value)
    except OverflowError:  # an int too large for a float
        return float("inf")
    return number if number == number else None  # NaN is no number of seconds


def check_budget(value: Any) -> float:
    """Seconds of CPU time for one file's analysis: more than 0, at most a week."""
    seconds = _number(value)
    if seconds is None or not 0 < seconds <= MAX_ANALYSIS_BUDGET:
        raise ConfigError(f"{_shown(value)} is not a number of seconds between 0 and {MAX_ANALYSIS_BUDGET:.0f}")
    return seconds


def check_file_size(value: Any) -> int:
    """A file size limit in bytes: a whole number, 1 or more."""
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ConfigError(f"{_shown(value)} is not a number of bytes (a whole number, 1 or more)")
    return value


def parse_budget_option(text: str) -> float:
    """`--analysis-budget 30`."""
    try:
        value: Any = float(text)
    except ValueError:
        value = text
    try:
        return check_budget(value)
    except ConfigError as exc:
        raise ConfigError(f"--analysis-budget: {exc}") from None


def parse_file_size_option(text: str) -> int:
    """`--max-file-size 10000000`; underscores are allowed, as in TOML and Python."""
    value: Any = text
    if isinstance(text, str) and re.match(r"^\s*\d[\d_]{0,30}\s*$", text):
        value = int(text.replace("_", ""))
    try:
        return check_file_size(value)
    except ConfigError as exc:
        raise ConfigError(f"--max-file-size: {exc}") from None


def _shown(value: Any) -> str:
    """A value as a message quotes it: its repr, cut short when long."""
    text = repr(value) if not isinstance(value, int) or abs(value) < 10 ** 30 else "a number of 30 digits or more"
    return text if len(text) <= 60 else text[:57] + "..."


def parse_torch_version(text: str) -> Tuple[int, int]:
    """"2.3" or "2.3.1" -> (2, 3)."""
    match = _VERSION.match(text.strip()) if isinstance(text, str) else None
    if match is None:
        raise ConfigError(f"{_shown(text)} is not a torch version such as \"2.4\"")
    return int(match.group(1)), int(match.group(2))


def config_from_table(table: Dict[str, Any], where: str, root: Optional[Path], warn: Optional[Warn] = None) -> Config:
    if not isinstance(table, dict):
        raise ConfigError(f"{where}: [tool.advisor] must be a table")
    for key in table:
        if key not in KNOWN_KEYS:
            raise ConfigError(f"{where}: unknown key `{key}` (known: {', '.join(KNOWN_KEYS)})")
    config = Config(root=root)
    for key in ("select", "extend-select", "ignore", "extend-ignore"):
        if key in table:
            codes = _codes(table[key], key, where, warn)
            if key == "select" and not codes:
                raise ConfigError(f"{where}: `select` is empty, so the selection enables no rule "
                                  "(leave it out to enable every rule)")
            config = config.replace(**{key.replace("-", "_"): codes})
    for key in ("exclude", "extend-exclude"):
        if key in table:
            value = table[key]
            if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
                raise ConfigError(f"{where}: `{key}` must be a list of gitignore-style patterns")
            config = config.replace(**{key.replace("-", "_"): tuple(value)})
    if "per-file-ignores" in table:
        value = table["per-file-ignores"]
        if not isinstance(value, dict):
            raise ConfigError(f"{where}: `per-file-ignores` must be a table of pattern = [codes]")
        pairs = tuple((str(pattern), _codes(codes, f"per-file-ignores.{pattern}", where, warn))
                      for pattern, codes in value.items())
        config = config.replace(per_file_ignores=pairs)
    if "respect-gitignore" in table:
        if not isinstance(table["respect-gitignore"], bool):
            raise ConfigError(f"{where}: `respect-gitignore` must be true or false")
        config = config.replace(respect_gitignore=table["respect-gitignore"])
    if "torch-version" in table:
        value = table["torch-version"]
        try:
            config = config.replace(torch_version=parse_torch_version(value))
        except ConfigError as exc:
            raise ConfigError(f"{where}: `torch-version`: {exc}") from None
    if "docs-url" in table:
        value = table["docs-url"]
        if not isinstance(value, str) or not re.match(r"^(https?|file)://", value):
            raise ConfigError(f"{where}: `docs-url` must be an absolute http(s) or file URL")
        config = config.replace(docs_url=value)
    if "analysis-budget" in table:
        try:
            config = config.replace(analysis_budget=check_budget(table["analysis-budget"]))
        except ConfigError as exc:
            raise ConfigError(f"{where}: `analysis-budget`: {exc}") from None
    if "max-file-size" in table:
        try:
            config = config.replace(max_file_size=check_file_size(table["max-file-size"]))
        except ConfigError as exc:
            raise ConfigError(f"{where}: `max-file-size`: {exc}") from None
    if "show-info" in table:
        if not isinstance(table["show-info"], bool):
            raise ConfigError(f"{where}: `show-info` must be true or false")
        config = config.replace(show_info=table["show-info"])
    return config


def load_pyproject(path: Path, warn: Optional[Warn] = None) -> Optional[Config]:
    """The config in one pyproject.toml, or None when it has no [tool.advisor] table."""
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover - exercised on older interpreters only
        import tomli as tomllib

    try:
        # utf-8-sig: a byte order mark, which some Windows editors write, is read past, as pip
        # and setuptools do.
        text = path.read_text(encoding="utf-8-sig")
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{path}: cannot read: {exc}") from None
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: invalid TOML: {exc}") from None
    except ValueError as exc:  # an integer of more digits than Python converts
        raise ConfigError(f"{path}: invalid TOML: {str(exc).split(';')[0]}") from None
    except (RecursionError, MemoryError):
        raise ConfigError(f"{path}: invalid TOML: arrays or tables nested too deeply") from None
    tool = data.get("tool")
    if not isinstance(tool, dict) or "advisor" not in tool:
        return None
    config = config_from_table(tool["advisor"], f"{path} [tool.advisor]", path.parent, warn)
    return config.replace(source=path)


def load_config_file(path: Path, warn: Optional[Warn] = None) -> Config:
    """`--config PATH`: the [tool.advisor] table of that TOML file, which must have one."""
    if not os.path.isfile(path):
        raise ConfigError(f"--config {path}: no such file")
    config = load_pyproject(path, warn)
    if config is None:
        raise ConfigError(f"--config {path}: the file has no [tool.advisor] table")
    return config


class ConfigFinder:
    """Finds the nearest pyproject.toml with [tool.advisor] above a path, caching per folder.

    Folders are looked up by their real path (a linked folder takes the configuration of where
    it really is), worked out one level at a time from the parent's: one lstat per new folder,
    where a realpath would lstat every level again. A run over thousands of named files makes
    thousands of these calls, so it works on strings, not Path objects.
    """

    def __init__(self, warn: Optional[Warn] = None, fixed: Optional[Config] = None) -> None:
        self._by_real: Dict[str, Config] = {}  # a real folder -> the config that applies there
        self._real: Dict[str, str] = {}  # a folder as given -> its real path
        self._by_given: Dict[str, Config] = {}  # a folder as given -> its config
        self._warn = warn
        self._fixed = fixed  # `--config PATH`: every file takes this one

    def for_path(self, path: Path) -> Config:
        if self._fixed is not None:
            return self._fixed
        return self._for_folder(os.fspath(path) if path.is_dir() else os.path.dirname(os.fspath(path)))

    def for_file(self, path: Path) -> Config:
        """for_path of a path known to be a file (one stat fewer)."""
        if self._fixed is not None:
            return self._fixed
        return self._for_folder(os.path.dirname(os.fspath(path)))

    def _for_folder(self, given: str) -> Config:
        found = self._by_given.get(given)
        if found is not None:
            return found
        try:
            start = self._realpath(given)
        except (OSError, ValueError):
            return Config()
        visited = []
        current: Optional[str] = start
        found = Config()
        while current is not None:
            known = self._by_real.get(current)
            if known is not None:
                found = known
                break
            visited.append(current)
            candidate = os.path.join(current, "pyproject.toml")
            if os.path.isfile(candidate):
                config = load_pyproject(Path(candidate), self._warn)
                if config is not None:
                    found = config
                    break
            parent = os.path.dirname(current)
            current = parent if parent != current else None
        for folder in visited:
            self._by_real[folder] = found
        self._by_given[given] = found
        return found

    def _realpath(self, given: str) -> str:
        real = self._real.get(given)
        if real is None:
            parent, name = os.path.split(given)
            if not name or name in (".", "..") or not parent or parent == given or os.path.islink(given):
                real = os.path.realpath(given or ".")
            else:
                real = os.path.join(self._realpath(parent), name)
            self._real[given] = real
        return real


DEFAULT_CONFIG = Config()
