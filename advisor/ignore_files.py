"""What a folder walk leaves out because a pattern names it: `exclude` and `extend-exclude`
from `[tool.advisor]`, and the ignore files git users already keep (`.gitignore`, `.ignore`,
`.git/info/exclude` and git's global excludes file). Every pattern is matched by pathspec with
git's own semantics (`**`, `!` to re-include, a trailing `/` for folders only, a leading or
inner `/` to anchor at the file's folder).

Precedence follows git and ripgrep: a deeper folder's file before a shallower one's, `.ignore`
before `.gitignore` in the same folder, then `.git/info/exclude`, then the global file; the
first file with a pattern matching the path decides (a `!` pattern decides "keep"). `.gitignore`,
`info/exclude` and the global file count only inside a git repository, as for git; `.ignore`
counts anywhere. A nested repository starts afresh, as git treats it.

pathspec and what it imports (`typing`, `dataclasses`, `inspect`: 30 to 40 ms, as much as the
rest of a warm run) are imported only when a pattern must be asked about a path. pathspec's
answers are remembered in the cache folder (``VerdictMemo``, per pattern text and relative
path: the answer depends on nothing else), so a warm run over a walk it has seen asks pathspec
nothing, and a walk that meets no pattern never needed it.
"""

from __future__ import annotations

import os
import stat as stat_module

TYPE_CHECKING = False
if TYPE_CHECKING:  # typing is not imported at run time: start-up is most of a warm run
    from typing import Any, Callable, Dict, Iterable, List, Optional, Tuple

IGNORE_FILE_NAMES = (".ignore", ".gitignore")  # in order of precedence within one folder
GIT = ".git"
_MAX_IGNORE_FILE_BYTES = 4 * 1024 * 1024  # a larger "ignore file" is not one


class PatternSpec:
    """Gitignore-style patterns; paths are relative to the folder they belong to, with a
    trailing `/` for a folder. Compiled by pathspec on the first question the memo cannot
    answer."""

    __slots__ = ("_lines", "_key", "_spec")

    def __init__(self, lines: Iterable[str]) -> None:
        self._lines = list(lines)
        self._key = "\n".join(self._lines)
        self._spec = None

    def verdict(self, relative: str) -> Optional[bool]:
        """True: a pattern ignores the path; False: a `!` pattern keeps it; None: no pattern
        matches."""
        memo = _open_memo()
        if memo is not None:
            known = memo.get(self._key, relative)
            if known is not _UNKNOWN:
                return known
        if self._spec is None:
            from pathspec import GitIgnoreSpec

            self._spec = GitIgnoreSpec.from_lines(self._lines)
        answer = self._spec.check_file(relative).include
        if memo is not None:
            memo.put(self._key, relative, answer)
        return answer

    def matches(self, relative: str) -> bool:
        return self.verdict(relative) is True


_SPECS: Dict[Tuple[str, ...], PatternSpec] = {}

# -- pathspec's answers, remembered between runs ----------------------------------------------
_UNKNOWN = object()
_ENCODED = {None: 0, True: 1, False: 2}
_DECODED = (None, True, False)
MEMO_FORMAT = 1
MAX_MEMO_PATHS = 200_000  # beyond this the memo starts afresh
MAX_MEMO_BYTES = 64 * 1024 * 1024


class VerdictMemo:
    """pathspec's verdicts by pattern text and relative path, in one sealed file of the cache
    folder. Pattern texts not asked about in a run are dropped when it saves, so the file holds
    what the projects checked recently need."""

    def __init__(self, folder: Any, path: str) -> None:
        from advisor.cache_files import load_json

        self._folder = folder
        self._path = path
        body = load_json(folder.read_sealed(b"ignore-verdicts", path, MAX_MEMO_BYTES) or b"")
        specs = body.get("specs") if isinstance(body, dict) and body.get("format") == MEMO_FORMAT else None
        self._known: Dict[str, Dict[str, int]] = specs if isinstance(specs, dict) else {}
        self._used: set = set()
        self._changed = False

    def get(self, key: str, relative: str) -> Any:
        self._used.add(key)
        paths = self._known.get(key)
        code = paths.get(relative) if isinstance(paths, dict) else None
        return _DECODED[code] if code in (0, 1, 2) else _UNKNOWN

    def put(self, key: str, relative: str, answer: Optional[bool]) -> None:
        paths = self._known.get(key)
        if not isinstance(paths, dict):
            paths = self._known[key] = {}
        paths[relative] = _ENCODED[answer]
        self._changed = True

    def save(self) -> None:
        if not self._changed:
            return
        import json

        kept = {key: paths for key, paths in self._known.items() if key in self._used}
        if sum(len(paths) for paths in kept.values()) > MAX_MEMO_PATHS:
            kept = {}
        body = json.dumps({"format": MEMO_FORMAT, "specs": kept}, separators=(",", ":"))
        self._folder.write_sealed(b"ignore-verdicts", self._path, body.encode("utf-8", "surrogatepass"))


_memo: Optional[VerdictMemo] = None
# Between start_run and end_run: what opens the cache folder (None: no memo, --no-cache). The
# memo is opened on its first use, so a run that asks pathspec nothing reads nothing.
_opener: Optional[Callable[[], Any]] = None


def _open_memo() -> Optional[VerdictMemo]:
    global _memo, _opener
    if _opener is not None:
        folder = _opener()
        _opener = None
        if folder is not None:
            _memo = VerdictMemo(folder, folder.path(f"ignore-verdicts-v{MEMO_FORMAT}.json"))
    return _memo


def start_run(open_cache_folder: Optional[Callable[[], Any]]) -> None:
    """At the start of a run: forget what an earlier run in this process found (ignore files
    may have changed since), and remember pathspec's verdicts in the folder
    ``open_cache_folder()`` gives, unless it is None (--no-cache)."""
    global _memo, _opener
    _SPECS.clear()
    _REPO_LEVELS.clear()
    _FOLDERS.clear()
    _memo = None
    _opener = open_cache_folder


def end_run() -> None:
    """Writes what pathspec answered in this run (best effort: a memo not written only costs
    the next run time)."""
    global _memo, _opener
    if _memo is not None:
        try:
            _memo.save()
        except (OSError, ValueError):
            pass
    _memo = None
    _opener = None


def pattern_spec(patterns: Tuple[str, ...]) -> PatternSpec:
    """The compiled form of an `exclude` list, compiled once per run."""
    spec = _SPECS.get(patterns)
    if spec is None:
        spec = _SPECS[patterns] = PatternSpec(patterns)
    return spec


def _read_lines(path: str) -> Optional[List[str]]:
    """The lines of a regular file, or None (missing, unreadable, a FIFO, too large). Opened
    without blocking: a FIFO in a file's place must not stop the run."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    except (OSError, ValueError):
        return None
    try:
        st = os.fstat(fd)
        if not stat_module.S_ISREG(st.st_mode) or st.st_size > _MAX_IGNORE_FILE_BYTES:
            return None
        chunks = []
        while True:
            chunk = os.read(fd, 1 << 16)
            if not chunk:
                break
            chunks.append(chunk)
    except OSError:
        return None
    finally:
        os.close(fd)
    text = b"".join(chunks).decode("utf-8", "replace")
    return text.lstrip("\ufeff").splitlines()


def _has_patterns(lines: Optional[List[str]]) -> bool:
    return bool(lines) and any(line.strip() and not line.lstrip().startswith("#") for line in lines)


def _under(base: str, path: str) -> str:
    """``path`` relative to ``base``, a folder above it (both absolute)."""
    return path[len(base):] if base.endswith("/") else path[len(base) + 1:]


class _Level:
    """One ignore file: the folder its patterns are relative to, and the patterns."""

    __slots__ = ("base", "spec")

    def __init__(self, base: str, spec: PatternSpec) -> None:
        self.base = base
        self.spec = spec


def _level(base: str, file: str) -> Optional[_Level]:
    lines = _read_lines(file)
    return _Level(base, PatternSpec(lines)) if _has_patterns(lines) else None


# -- git's own files ---------------------------------------------------------------------------
def _git_dirs(repo: str) -> Tuple[Optional[str], Optional[str]]:
    """(the repository's git folder, its common folder): `.git` itself, or for a worktree or
    submodule the folder its `.git` file points at, and that folder's `commondir`."""
    dot_git = os.path.join(repo, GIT)
    if os.path.isdir(dot_git):
        git_dir = dot_git
    else:
        lines = _read_lines(dot_git)
        if not lines or not lines[0].startswith("gitdir:"):
            return None, None
        git_dir = os.path.normpath(os.path.join(repo, lines[0][len("gitdir:"):].strip()))
    common = _read_lines(os.path.join(git_dir, "commondir"))
    common_dir = os.path.normpath(os.path.join(git_dir, common[0].strip())) if common else git_dir
    return git_dir, common_dir


def _config_excludes_file(path: str) -> Optional[str]:
    """`core.excludesFile` as one git config file sets it (the last setting wins), or None.
    Only plain `[core]` entries are read; `include` directives are not followed."""
    lines = _read_lines(path)
    if not lines:
        return None
    found = None
    section = ""
    for raw in lines:
        line = raw.strip()
        if not line or line[0] in "#;":
            continue
        if line.startswith("["):
            end = line.find("]")
            section = line[1:end].strip().lower() if end > 0 else ""
            line = line[end + 1:].strip() if end > 0 else ""
            if not line:
                continue
        if section != "core":
            continue
        key, equals, value = line.partition("=")
        if not equals or key.strip().lower() != "excludesfile":
            continue
        value = value.strip()
        if value.startswith('"'):
            value = value[1:value.find('"', 1)] if '"' in value[1:] else value[1:]
        else:
            for mark in ("#", ";"):
                value = value.split(mark, 1)[0]
            value = value.strip()
        found = os.path.expanduser(value) if value else None
    return found


def global_excludes_file(common_dir: Optional[str]) -> Optional[str]:
    """Git's global excludes file: `core.excludesFile` from the repository's config, else the
    user's (~/.gitconfig, then $XDG_CONFIG_HOME/git/config), else $XDG_CONFIG_HOME/git/ignore
    (~/.config/git/ignore)."""
    xdg = os.environ.get("XDG_CONFIG_HOME") or os.path.join(os.path.expanduser("~"), ".config")
    candidates = [os.path.join(common_dir, "config")] if common_dir else []
    candidates += [os.path.join(os.path.expanduser("~"), ".gitconfig"), os.path.join(xdg, "git", "config")]
    for config in candidates:
        found = _config_excludes_file(config)
        if found:
            return found
    return os.path.join(xdg, "git", "ignore")


_REPO_LEVELS: Dict[str, Tuple[_Level, ...]] = {}


def _repository_levels(repo: str) -> Tuple[_Level, ...]:
    """`.git/info/exclude`, then the global excludes file, for the repository at ``repo``."""
    known = _REPO_LEVELS.get(repo)
    if known is None:
        _, common_dir = _git_dirs(repo)
        levels = []
        if common_dir is not None:
            found = _level(repo, os.path.join(common_dir, "info", "exclude"))
            if found is not None:
                levels.append(found)
        excludes = global_excludes_file(common_dir)
        found = _level(repo, excludes) if excludes else None
        if found is not None:
            levels.append(found)
        known = _REPO_LEVELS[repo] = tuple(levels)
    return known


# -- the walk ----------------------------------------------------------------------------------
class IgnoreFiles:
    """The ignore files in force in one folder of a walk, deepest first. Immutable: entering a
    folder gives another."""

    __slots__ = ("levels", "repo", "_tail")

    def __init__(self, levels: Tuple[_Level, ...], repo: Optional[str], tail: Tuple[_Level, ...] = ()) -> None:
        self.levels = levels  # the folders' own files, deepest first
        self.repo = repo  # the repository's top folder, or None outside one
        self._tail = tail  # the repository's info/exclude and global file, asked last

    @classmethod
    def above(cls, folder: str) -> IgnoreFiles:
        """The files that apply in ``folder`` (absolute) from the folders above it, up to the
        top of its git repository: what a walk starting at ``folder`` inherits."""
        current = folder
        chain = []
        repo = None
        while True:
            if os.path.lexists(os.path.join(current, GIT)):
                repo = current
                break
            parent = os.path.dirname(current)
            if parent == current:
                break
            current = parent
            chain.append(current)
        if repo is None:
            return cls((), None)
        levels = []
        for above in chain:  # deepest first, up to the repository's top
            for name in IGNORE_FILE_NAMES:
                found = _level(above, os.path.join(above, name))
                if found is not None:
                    levels.append(found)
        return cls(tuple(levels), repo, _repository_levels(repo))

    def entering(self, folder: str, names: Iterable[str]) -> IgnoreFiles:
        """The files in force inside ``folder`` (absolute), whose entries have ``names``."""
        present = [name for name in names if name in IGNORE_FILE_NAMES or name == GIT]
        if not present:
            return self
        if GIT in present and folder != self.repo:
            inherited: Tuple[_Level, ...] = ()  # a repository of its own: git starts afresh
            repo: Optional[str] = folder
            tail = _repository_levels(folder)
        else:
            inherited, repo, tail = self.levels, self.repo, self._tail
        own = []
        for name in IGNORE_FILE_NAMES:
            if name in present and (name != ".gitignore" or repo is not None):
                found = _level(folder, os.path.join(folder, name))
                if found is not None:
                    own.append(found)
        if not own and repo == self.repo:
            return self
        return IgnoreFiles(tuple(own) + inherited, repo, tail)

    @property
    def empty(self) -> bool:
        return not self.levels and not self._tail

    def ignored(self, path: str, is_dir: bool) -> bool:
        """Whether ``path`` (absolute) is ignored; ``is_dir``: it is a folder."""
        suffix = "/" if is_dir else ""
        for level in self.levels + self._tail:
            verdict = level.spec.verdict(_under(level.base, path) + suffix)
            if verdict is not None:
                return verdict
        return False


_FOLDERS: Dict[str, IgnoreFiles] = {}


def path_is_ignored(path: str, is_dir: bool) -> bool:
    """Whether an ignore file names ``path`` (absolute), as the walk of its folder would find:
    for a path named on the command line with `--force-exclude`. The files in force are found
    once per folder."""
    folder = os.path.dirname(path)
    ignores = _FOLDERS.get(folder)
    if ignores is None:
        names = [name for name in IGNORE_FILE_NAMES + (GIT,) if os.path.lexists(os.path.join(folder, name))]
        ignores = _FOLDERS[folder] = IgnoreFiles.above(folder).entering(folder, names)
    return not ignores.empty and ignores.ignored(path, is_dir)
