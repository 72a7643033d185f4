"""The result cache: one small JSON file per (content, configuration, tool and rule set).

A key is the SHA-256 of:
- the file's bytes (its own digest),
- the name findings carry (the display filename) and the effective configuration of that file
  (select, ignore, show-info, torch-version, and per-file-ignores with the file's relative path),
- the tool's fingerprint: its version, libcst's version, and the source of every module that
  can change a finding (rules, model, engine, config, fixes, ...). A new or edited rule module
  changes the fingerprint, so no result of an older rule set is ever served. The fingerprint
  is remembered beside the modules' stat signatures (fingerprint-v2.json, sealed like the
  entries) and hashed again when one of them changes.

Entries are written to a temporary file and renamed into place, so concurrent runs never see a
half-written entry. Each is sealed (cache_folder): its tag covers its own name, the key above, so
an entry planted, edited or renamed from another file's is a miss, as is one that does not
decode; either is rewritten. The folder is used only when it is this user's and marked as the
tool's (cache_folder.open_folder), and pruned, oldest first, when the entries grow past
MAX_ENTRIES files or MAX_BYTES bytes: only files named as entries are, never through a link.

This module does not import libcst: a run whose files are all cached never parses anything.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

from advisor import __version__
from advisor.cache_files import load_json, own_name, prune_oldest
from advisor.cache_folder import CacheFolder, open_folder
from advisor.config import Config
from advisor.findings import Applicability, Edit, FileProblem, Finding, Fix, Position, Related, Severity
from advisor.stat_index import RACY_MARGIN_NS

TYPE_CHECKING = False
if TYPE_CHECKING:  # typing is not imported at run time: start-up is most of a warm run
    from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple, Union

FORMAT = 4  # bump when the entry layout changes
MAX_ENTRIES = 50_000
MAX_BYTES = 256 * 1024 * 1024
MAX_ENTRY_BYTES = 64 * 1024 * 1024  # read no more of one entry (a file of 10,000 findings is ~5 MB)
MAX_FINGERPRINT_BYTES = 1024 * 1024
# Folders of the package whose code cannot change a finding (output, editor wiring).
_NOT_ANALYSIS = ("lsp", "output", "__pycache__")
_FACES = ("__main__.py", "cli.py", "docsite.py", "flake8_plugin.py", "notebook.py", "runner.py")


def cache_dir() -> Path:
    """ADVISOR_CACHE_DIR, else $XDG_CACHE_HOME/torch-advisor, else ~/.cache/torch-advisor.
    Where the cache would be: open_cache_folder says whether it may be used."""
    explicit = os.environ.get("ADVISOR_CACHE_DIR")
    if explicit:
        return Path(explicit)
    xdg = os.environ.get("XDG_CACHE_HOME")
    base = Path(xdg) if xdg else Path.home() / ".cache"
    return base / "torch-advisor"


def open_cache_folder(root: Optional[Path] = None) -> Optional[CacheFolder]:
    """The cache folder (``root``, else cache_dir()), or None when it may not be used."""
    return open_folder(str(root if root is not None else cache_dir()))


def _limit(name: str, default: int) -> int:
    try:
        return max(1, int(os.environ.get(name, "")))
    except ValueError:
        return default


def _package_files() -> List[Tuple[str, str]]:
    """(relative path, path) of the package's analysis modules, in a stable order."""
    root = os.path.dirname(os.path.realpath(__file__))
    found: List[Tuple[str, str]] = []
    for folder, dirs, files in os.walk(root):
        dirs[:] = sorted(d for d in dirs if d not in _NOT_ANALYSIS)
        for name in sorted(files):
            if name.endswith(".py") and not (folder == root and name in _FACES):
                path = os.path.join(folder, name)
                found.append((os.path.relpath(path, root).replace(os.sep, "/"), path))
    return found


def _package_sources() -> List[Tuple[str, bytes]]:
    """(relative path, bytes) of the package's analysis modules, in a stable order."""
    found: List[Tuple[str, bytes]] = []
    for name, path in _package_files():
        try:
            with open(path, "rb") as handle:
                found.append((name, handle.read()))
        except OSError:
            continue
    return found


def _libcst_version() -> str:
    import importlib.util

    spec = importlib.util.find_spec("libcst")  # finds, does not import
    if spec is None or spec.origin is None:
        return "none"
    try:
        return (Path(spec.origin).parent / "_version.py").read_text(encoding="utf-8")
    except OSError:
        return spec.origin


_FINGERPRINT: Optional[str] = None


def tool_fingerprint() -> str:
    """Version, libcst and the analysis modules' source; computed once per process."""
    global _FINGERPRINT
    if _FINGERPRINT is None:
        _FINGERPRINT = _remembered_fingerprint()
    return _FINGERPRINT


def _computed_fingerprint(libcst_version: str) -> str:
    import hashlib

    digest = hashlib.sha256(f"torch-advisor {__version__} format {FORMAT}\n".encode())
    digest.update(libcst_version.encode())
    for name, data in _package_sources():
        digest.update(f"\0{name}\0{len(data)}\0".encode())
        digest.update(data)
    return digest.hexdigest()


def _remembered_fingerprint() -> str:
    """The fingerprint reads and hashes every analysis module, close to a megabyte: a tenth of
    a warm run. So it is remembered in the cache folder beside the stat signatures of the
    modules it hashed, and computed again when a module is added, removed or changed (the stat
    index's rules: ctime moves on any write, and a module changed moments ago is not trusted)."""
    libcst_version = _libcst_version()
    trusted_before = time.time_ns() - RACY_MARGIN_NS
    stamp: List[Any] = [__version__, FORMAT, libcst_version]
    trusted = True
    for name, path in _package_files():
        try:
            st = os.stat(path)
        except OSError:
            stamp.append([name])
            continue
        stamp.append([name, st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino, st.st_dev])
        trusted = trusted and st.st_mtime_ns < trusted_before and st.st_ctime_ns < trusted_before
    folder = open_cache_folder() if trusted else None
    remembered = folder.path(f"fingerprint-v{FORMAT}.json") if folder is not None else ""
    if folder is not None:
        body = load_json(folder.read_sealed(b"fingerprint", remembered, MAX_FINGERPRINT_BYTES) or b"")
        if isinstance(body, dict) and body.get("stamp") == stamp and isinstance(body.get("fingerprint"), str):
            return body["fingerprint"]
    fingerprint = _computed_fingerprint(libcst_version)
    if folder is not None:
        folder.write_sealed(b"fingerprint", remembered, json.dumps({"stamp": stamp, "fingerprint": fingerprint}).encode())
    return fingerprint


def config_fingerprint(config: Config, path: Path) -> str:
    parts: List[Any] = [
        list(config.select), list(config.ignore), config.show_info, list(config.torch_version),
        config.docs_url,  # finding links are part of the cached result
    ]
    if config.extend_select or config.extend_ignore:
        parts.append([list(config.extend_select), list(config.extend_ignore)])
    if config.project_roots:  # where imports are looked up when no marker names the project
        parts.append(list(config.project_roots))
    if config.per_file_ignores:
        parts.append([[pattern, list(codes)] for pattern, codes in config.per_file_ignores])
        parts.append(config.relative(path))
    return json.dumps(parts, separators=(",", ":"))


def content_digest(data: bytes) -> str:
    import hashlib  # here: a warm run over clean files hashes nothing, and OpenSSL takes 2 ms to load

    return hashlib.sha256(data).hexdigest()


def entry_key(content: str, display: str, config: str) -> str:
    """The key of a file's result: ``content`` is the content_digest of its bytes, ``config`` its
    config_fingerprint."""
    import hashlib

    digest = hashlib.sha256()
    for part in (tool_fingerprint(), config, display, content):
        digest.update(part.encode("utf-8", "surrogatepass"))
        digest.update(b"\0")
    return digest.hexdigest()


# -- serialisation -----------------------------------------------------------------------------
def _encode_finding(f: Finding) -> Dict[str, Any]:
    # Field by field, so that a field added to Finding is stored without a change here.
    out: Dict[str, Any] = {}
    for name in Finding._fields:
        value = getattr(f, name)
        if isinstance(value, Position):
            value = [value.row, value.column]
        elif isinstance(value, Severity):
            value = value.value
        elif isinstance(value, Fix):
            value = {
                "message": value.message,
                "applicability": value.applicability.value,
                "edits": [[e.start.row, e.start.column, e.end.row, e.end.column, e.content] for e in value.edits],
            }
        elif name == "related":
            value = [[r.label, r.start.row, r.start.column, r.end.row, r.end.column, r.cell] for r in value]
        out[name] = value
    return out


def _decode_finding(d: Dict[str, Any]) -> Finding:
    values = dict(d)
    raw = values.get("fix")
    if raw is not None:
        values["fix"] = Fix(
            message=raw["message"],
            edits=tuple(Edit(Position(int(a), int(b)), Position(int(c), int(e)), str(content))
                        for a, b, c, e, content in raw["edits"]),
            applicability=Applicability(raw["applicability"]),
        )
    values["related"] = tuple(Related(str(label), Position(int(a), int(b)), Position(int(c), int(e)), cell)
                              for label, a, b, c, e, cell in values["related"])
    if not isinstance(values["data"], dict):
        raise TypeError("data is not an object")
    values["severity"] = Severity(values["severity"])
    values["start"] = Position(*map(int, values["start"]))
    values["end"] = Position(*map(int, values["end"]))
    return Finding(**values)


def encode(findings: List[Finding], problem: Optional[FileProblem], deps: Optional[Dict[str, str]] = None,
           warnings: Sequence[FileProblem] = ()) -> str:
    body = {
        "format": FORMAT,
        "findings": [_encode_finding(f) for f in findings],
        "problem": None if problem is None else problem.as_dict(),
        "deps": deps or {},
        "warnings": [w.as_dict() for w in warnings],
    }
    return json.dumps(body, ensure_ascii=False, separators=(",", ":"))


def decode(text: Union[str, bytes], deps_valid: Optional[Callable[[Dict[str, str]], bool]] = None
           ) -> Optional[Tuple[List[Finding], Optional[FileProblem], List[FileProblem]]]:
    """The entry's findings, problem and warnings, or None when it is corrupt, of another
    format, or made with project files that have changed since (``deps_valid`` says whether they
    are as they were)."""
    try:
        body = load_json(text)
        if not isinstance(body, dict) or body.get("format") != FORMAT:
            return None
        deps = body.get("deps") or {}
        if not isinstance(deps, dict) or not all(isinstance(k, str) and isinstance(v, str) for k, v in deps.items()):
            return None
        if deps and (deps_valid is None or not deps_valid(deps)):
            return None
        findings = [_decode_finding(d) for d in body["findings"]]
        raw = body["problem"]
        problem = None if raw is None else FileProblem(**raw)
        warnings = [FileProblem(**w) for w in body["warnings"]]
        return findings, problem, warnings
    except (ValueError, TypeError, KeyError, IndexError, AttributeError, OverflowError):
        return None


# -- the store ---------------------------------------------------------------------------------
def _own_entry(name: str) -> bool:
    return own_name(name, 64)


def open_result_cache(root: Optional[Path] = None) -> Optional[ResultCache]:
    """The result cache of the cache folder (``root``, else cache_dir()), or None when the
    folder, or the entries' folder in it, may not be used (said once on stderr)."""
    folder = open_cache_folder(root)
    entries = folder.inside(f"v{FORMAT}") if folder is not None else None
    return ResultCache(folder, entries) if folder is not None and entries is not None else None


class ResultCache:
    """The entries of one cache folder: ``entries`` is their folder, inside it."""

    def __init__(self, folder: CacheFolder, entries: str) -> None:
        self.cache_folder = folder
        self.folder = entries
        self.hits = 0
        self.misses = 0
        self.written = 0

    def _path(self, key: str) -> str:
        return os.path.join(self.folder, f"{key}.json")

    def get(self, key: str, deps_valid: Optional[Callable[[Dict[str, str]], bool]] = None
            ) -> Optional[Tuple[List[Finding], Optional[FileProblem], List[FileProblem]]]:
        """The stored result; an entry made with project files that changed since is a miss."""
        payload = self.cache_folder.read_sealed(b"entry", self._path(key), MAX_ENTRY_BYTES)
        entry = decode(payload, deps_valid) if payload is not None else None
        if entry is None:
            self.misses += 1
        else:
            self.hits += 1
        return entry

    def put(self, key: str, findings: List[Finding], problem: Optional[FileProblem],
            deps: Optional[Dict[str, str]] = None, warnings: Sequence[FileProblem] = ()) -> bool:
        """Best effort: a cache that cannot be written only costs time. True when written.
        ``deps``: the content digests of the project files the result depends on."""
        payload = encode(findings, problem, deps, warnings).encode("utf-8", "surrogatepass")
        if not self.cache_folder.write_sealed(b"entry", self._path(key), payload):
            return False
        self.written += 1
        return True

    def prune(self) -> int:
        """Deletes the oldest entries (and stale temporary files) beyond the size bounds, down to
        80% of them, so that a full cache is not pruned on every run. Only files named as the
        tool names its entries are counted or deleted."""
        max_entries = _limit("ADVISOR_CACHE_MAX_ENTRIES", MAX_ENTRIES)
        max_bytes = _limit("ADVISOR_CACHE_MAX_BYTES", MAX_BYTES)
        return prune_oldest(self.folder, _own_entry, max_entries, max_bytes, int(max_entries * 0.8),
                            int(max_bytes * 0.8))
