"""Rule documentation for diagnostics' links and for hovers."""

from __future__ import annotations

import logging
import os
import tempfile
from pathlib import Path
from typing import Optional

from advisor import __version__
from advisor.rule_docs import explain_markdown, rules_markdown

log = logging.getLogger("advisor.lsp")


def rule_markdown(code: str) -> Optional[str]:
    """The hover text for a rule code: its documentation, or why a retired or reserved code has
    no rule; None for any other code."""
    text = explain_markdown(code)
    return text.strip() if text is not None else None


class DocsLinks:
    """`codeDescription.href` for each rule. The rules name a page relative to the project
    (docs/rules.md#gpu101); an editor needs an absolute URI. With the `docsUrl` setting the
    links point there; otherwise at a copy of the generated page written once to the user's
    cache, so that the link opens offline and matches the installed version."""

    def __init__(self) -> None:
        self._local: Optional[str] = None
        self._tried = False

    def href(self, code: str, base: Optional[str]) -> Optional[str]:
        anchor = code.lower()
        if base:
            return f"{base.rstrip('#')}#{anchor}"
        local = self._local_page()
        return f"{local}#{anchor}" if local else None

    def _local_page(self) -> Optional[str]:
        if self._tried:
            return self._local
        self._tried = True
        try:
            cache = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
            folder = cache / "torch-advisor" / __version__
            folder.mkdir(parents=True, exist_ok=True)
            page = folder / "rules.md"
            text = rules_markdown()
            if not page.is_file() or page.read_text(encoding="utf-8") != text:
                fd, tmp = tempfile.mkstemp(dir=str(folder), suffix=".tmp")
                with os.fdopen(fd, "w", encoding="utf-8") as handle:
                    handle.write(text)
                os.replace(tmp, page)
            self._local = page.as_uri()
        except OSError as exc:
            log.warning("cannot write the rule documentation for links: %s", exc)
        return self._local
