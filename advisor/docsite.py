"""The documentation site: one page per rule, rendered by advisor.rule_docs, built by mkdocs.

    python -m advisor.docsite generate   # write docs/index.md and docs/rules/<code>.md
    python -m advisor.docsite check      # exit 1 if a generated page is stale or missing
    python -m advisor.docsite build      # generate, then `mkdocs build --strict` into site/

The generated pages are committed (like docs/rules.md) and a test fails when they are stale;
`site/` is build output and is not. mkdocs (in the `dev` extra) is needed only for `build`.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path
from typing import Dict, List, Optional, Sequence


def pages() -> Dict[str, str]:
    """Relative path under docs/ -> text, for every generated page (docs/rules.md included),
    all rendered by advisor.rule_docs."""
    from advisor.rule_docs import index_page, rule_page, rules_markdown
    from advisor.rules import ALL_RULES

    out = {"index.md": index_page(ALL_RULES), "rules.md": rules_markdown(ALL_RULES)}
    for rule in ALL_RULES:
        out[f"rules/{rule.code.lower()}.md"] = rule_page(rule)
    return out


def stale(docs: Path) -> List[str]:
    """The generated pages that are missing, differ, or are left over from a removed rule."""
    expected = pages()
    wrong = [name for name, text in expected.items()
             if not (docs / name).is_file() or (docs / name).read_text(encoding="utf-8") != text]
    folder = docs / "rules"
    if folder.is_dir():
        wrong += [f"rules/{p.name}" for p in sorted(folder.glob("*.md")) if f"rules/{p.name}" not in expected]
    return wrong


def generate(docs: Path) -> List[str]:
    expected = pages()
    written = []
    for name, text in expected.items():
        target = docs / name
        target.parent.mkdir(parents=True, exist_ok=True)
        if not target.is_file() or target.read_text(encoding="utf-8") != text:
            target.write_text(text, encoding="utf-8", newline="\n")
            written.append(name)
    for leftover in sorted((docs / "rules").glob("*.md")):
        if f"rules/{leftover.name}" not in expected:
            leftover.unlink()
            written.append(f"rules/{leftover.name} (removed)")
    return written


def build(config: Path, site: Path) -> int:
    """`mkdocs build --strict`: broken internal links and missing pages fail the build."""
    command = [sys.executable, "-m", "mkdocs", "build", "--strict", "--clean", "-f", str(config), "-d", str(site)]
    return subprocess.run(command).returncode


def main(argv: Optional[Sequence[str]] = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m advisor.docsite", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("command", choices=("generate", "check", "build"))
    parser.add_argument("--docs", type=Path, default=Path("docs"), help="docs folder (default: docs)")
    parser.add_argument("--config", type=Path, default=Path("mkdocs.yml"), help="mkdocs config (default: mkdocs.yml)")
    parser.add_argument("--site", type=Path, default=Path("site"), help="output folder for build (default: site)")
    args = parser.parse_args(argv)
    if args.command == "check":
        wrong = stale(args.docs)
        for name in wrong:
            sys.stderr.write(f"stale: {args.docs / name}\n")
        if wrong:
            sys.stderr.write("run: python -m advisor.docsite generate\n")
        return 1 if wrong else 0
    for name in generate(args.docs):
        sys.stderr.write(f"wrote {args.docs / name}\n")
    if args.command == "build":
        try:
            import mkdocs  # noqa: F401
        except ImportError:
            sys.stderr.write("building the site needs mkdocs: pip install -e '.[dev]'\n")
            return 2
        return build(args.config, args.site)
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
