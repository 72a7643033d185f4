"""The result cache: one small JSON file per (content, configuration, tool and rule set).

A key is the SHA-256 of:
- the file's bytes (its own digest),
- the name findings carry (the display filename) and the effective configuration of that file
  (select, ignore, show-info, torch-version, and per-file-ignores with the file's relative path),
- the tool's fingerprint: its version, libcst's version, and the source of every module that
  can change a finding (rules, model, engine, config, fixes, ...). A new or edited rule module
  changes the fingerprint, so no result of an older rule set is ever served. The fingerprint
  is remembered beside the modules' stat signatures (fingerprint-v1.json) and hashed again
  when one of them changes.

Entries are written to a temporary file and renamed into place, so concurrent runs never see a
half-written entry; an entry that does not decode is ignored (and rewritten). The folder is
pruned, oldest first, when it grows past MAX_ENTRIES files or MAX_BYTES bytes.

This module does not import libcst: a run whose files are all cached never parses anything.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

from advisor import __version__
from advisor.cache_files import write_atomically
from advisor.config import Config
from advisor.findings import Applicability, Edit, FileProblem, Finding, Fix, Position, Related, Severity
from advisor.stat_index import RACY_MARGIN_NS

TYPE_CHECKING = False
if TYPE_CHECKING:  # typing is not imported at run time: start-up is most of a warm run
    from typing import Any, Dict, List, Optional, Tuple

FORMAT = 2  # bump when the entry layout changes
MAX_ENTRIES = 50_000
MAX_BYTES = 256 * 1024 * 1024
# Folders of the package whose code cannot change a finding (output, editor wiring).
_NOT_ANALYSIS = ("lsp", "output", "__pycache__")
_FACES = ("__main__.py", "cli.py", "docsite.py", "flake8_plugin.py", "notebook.py", "runner.py")


def cache_dir() -> Path:
    """ADVISOR_CACHE_DIR, else $XDG_CACHE_HOME/torch-advisor, else ~/.cache/torch-advisor."""
    explicit = os.environ.get("ADVISOR_CACHE_DIR")
    if explicit:
        return Path(explicit)
    xdg = os.environ.get("XDG_CACHE_HOME")
    base = Path(xdg) if xdg else Path.home() / ".cache"
    return base / "torch-advisor"


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
    remembered = cache_dir() / f"fingerprint-v{FORMAT}.json"
    if trusted:
        try:
            body = json.loads(remembered.read_bytes())
            if isinstance(body, dict) and body.get("stamp") == stamp and isinstance(body.get("fingerprint"), str):
                return body["fingerprint"]
        except (OSError, ValueError):
            pass
    fingerprint = _computed_fingerprint(libcst_version)
    if trusted:
        write_atomically(str(remembered), json.dumps({"stamp": stamp, "fingerprint": fingerprint}))
    return fingerprint


def config_fingerprint(config: Config, path: Path) -> str:
    parts: List[Any] = [
        list(config.select), list(config.ignore), config.show_info, list(config.torch_version),
        config.docs_url,  # finding links are part of the cached result
    ]
    if config.per_file_ignores:
        parts.append([[pattern, list(codes)] for pattern, codes in config.per_file_ignores])
        parts.append(config.relative(path))
    return json.dumps(parts, separators=(",", ":"))


def content_digest(data: bytes) -> str:
    import hashlib  # here: a warm run over clean files hashes nothing, and OpenSSL takes 2 ms to load

    return hashlib.sha256(data).hexdigest()


def entry_key(data: bytes, display: str, config: str) -> str:
    """The key of a file's result: ``config`` is its config_fingerprint."""
    import hashlib

    digest = hashlib.sha256()
    for part in (tool_fingerprint(), config, display, content_digest(data)):
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


def encode(findings: List[Finding], problem: Optional[FileProblem]) -> str:
    body = {
        "format": FORMAT,
        "findings": [_encode_finding(f) for f in findings],
        "problem": None if problem is None else problem.as_dict(),
    }
    return json.dumps(body, ensure_ascii=False, separators=(",", ":"))


def decode(text: str) -> Optional[Tuple[List[Finding], Optional[FileProblem]]]:
    """The entry's findings and problem, or None when it is corrupt or of another format."""
    try:
        body = json.loads(text)
        if not isinstance(body, dict) or body.get("format") != FORMAT:
            return None
        findings = [_decode_finding(d) for d in body["findings"]]
        raw = body["problem"]
        problem = None if raw is None else FileProblem(**raw)
        return findings, problem
    except (ValueError, TypeError, KeyError, IndexError, AttributeError):
        return None


# -- the store ---------------------------------------------------------------------------------
class ResultCache:
    def __init__(self, root: Optional[Path] = None) -> None:
        self.folder = (root if root is not None else cache_dir()) / f"v{FORMAT}"
        self.hits = 0
        self.misses = 0
        self.written = 0

    def _path(self, key: str) -> Path:
        return self.folder / f"{key}.json"

    def get(self, key: str) -> Optional[Tuple[List[Finding], Optional[FileProblem]]]:
        try:
            text = self._path(key).read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            self.misses += 1
            return None
        entry = decode(text)
        if entry is None:
            self.misses += 1
        else:
            self.hits += 1
        return entry

    def put(self, key: str, findings: List[Finding], problem: Optional[FileProblem]) -> None:
        """Best effort: a cache that cannot be written only costs time."""
        if write_atomically(str(self._path(key)), encode(findings, problem)):
            self.written += 1

    def prune(self) -> int:
        """Deletes the oldest entries (and stale temporary files) beyond the size bounds."""
        max_entries = _limit("ADVISOR_CACHE_MAX_ENTRIES", MAX_ENTRIES)
        max_bytes = _limit("ADVISOR_CACHE_MAX_BYTES", MAX_BYTES)
        entries = []
        try:
            with os.scandir(self.folder) as scan:
                for entry in scan:
                    try:
                        stat = entry.stat()
                    except OSError:
                        continue
                    entries.append((stat.st_mtime, entry.path, stat.st_size, entry.name.startswith(".tmp-")))
        except OSError:
            return 0
        total = sum(size for _, _, size, _ in entries)
        if len(entries) <= max_entries and total <= max_bytes:
            return 0
        entries.sort()
        # Down to 80% of the bounds, so that a full cache is not pruned on every run.
        keep_entries, keep_bytes = int(max_entries * 0.8), int(max_bytes * 0.8)
        removed = 0
        count = len(entries)
        for _, path, size, _ in entries:
            if count <= keep_entries and total <= keep_bytes:
                break
            try:
                os.unlink(path)
                removed += 1
            except OSError:
                pass
            count -= 1
            total -= size
        return removed
