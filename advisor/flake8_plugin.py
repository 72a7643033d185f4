"""The flake8 face: the same engine and configuration, reported through flake8 (codes GPUxxx).

flake8 applies its own `--select`/`--ignore` and `# noqa` on top; the `[tool.advisor]`
configuration still decides `show-info` and per-file ignores, so that flake8 and
`advisor check --format concise` agree on the same file.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any, Iterator, List, Tuple

from advisor import __version__
from advisor.config import DEFAULT_CONFIG, ConfigError, ConfigFinder
from advisor.engine import check_source
from advisor.output.concise import severity_tag

_finder = ConfigFinder()
_warned = set()


class Flake8Plugin:
    name = "torch-advisor"
    version = __version__

    # flake8 hands over the arguments a plugin names; asking for `tree` makes this a tree plugin.
    def __init__(self, tree: Any, lines: List[str], filename: str) -> None:
        self.lines = lines
        self.filename = filename

    def run(self) -> Iterator[Tuple[int, int, str, type]]:
        path = None if self.filename in ("stdin", "-", None) else Path(self.filename)
        config = DEFAULT_CONFIG
        if path is not None:
            try:
                config = _finder.for_path(path)
            except ConfigError as exc:
                if str(exc) not in _warned:
                    _warned.add(str(exc))
                    sys.stderr.write(f"torch-advisor: {exc}; using the default configuration\n")
        result = check_source("".join(self.lines), self.filename, config, path=path)
        if result.problem is not None and not result.problem.reason.startswith("syntax error"):
            # flake8 reports syntax errors itself (E999); a file the engine refused for its
            # depth, size or budget would otherwise pass in silence.
            from advisor.output.names import printable

            sys.stderr.write(f"torch-advisor: {printable(self.filename)}: {result.problem.reason}\n")
        for finding in result.findings:
            # flake8 columns are 0-based here and printed 1-based, like ours. The message reads
            # as in `--format concise`, severity tag included.
            yield (finding.start.row, finding.start.column - 1,
                   f"{finding.code} {severity_tag(finding)}{finding.message}", type(self))
