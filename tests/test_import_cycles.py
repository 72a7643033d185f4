"""No module of advisor/ imports another in a cycle. The import graph is built from the source
with `ast`: module-level imports and imports inside functions both count (a function-level
import is still a dependency, only a later one), `if TYPE_CHECKING:` imports too. Importing a
package's submodule is an edge to that submodule; `from package import name` is an edge to
the submodule `package.name` where one exists, else to the package."""

from __future__ import annotations

import ast
from pathlib import Path
from typing import Dict, List, Optional, Set

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = "advisor"


def module_names(root: Path = ROOT) -> Dict[str, Path]:
    names = {}
    for path in sorted((root / PACKAGE).rglob("*.py")):
        parts = list(path.relative_to(root).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        names[".".join(parts)] = path
    return names


def _resolve(module: str, is_package: bool, node: ast.ImportFrom) -> Optional[str]:
    if node.level == 0:
        return node.module
    base = module.split(".") if is_package else module.split(".")[:-1]
    base = base[: len(base) - (node.level - 1)]
    return ".".join(base + ([node.module] if node.module else []))


def import_graph(root: Path = ROOT) -> Dict[str, Set[str]]:
    names = module_names(root)
    graph: Dict[str, Set[str]] = {name: set() for name in names}
    for name, path in names.items():
        is_package = path.name == "__init__.py"
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
            targets: List[str] = []
            if isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = _resolve(name, is_package, node)
                if base is None:
                    continue
                for alias in node.names:
                    submodule = f"{base}.{alias.name}"
                    targets.append(submodule if submodule in names else base)
            for target in targets:
                # `import advisor.rules.base` names the deepest module of ours it reaches.
                while target and target not in names:
                    target = target.rpartition(".")[0]
                if target and target != name:
                    graph[name].add(target)
    return graph


def find_cycle(graph: Dict[str, Set[str]]) -> Optional[List[str]]:
    """One cycle as [a, b, ..., a], or None."""
    state: Dict[str, int] = {}  # 1: on the current path, 2: done
    path: List[str] = []

    def visit(node: str) -> Optional[List[str]]:
        state[node] = 1
        path.append(node)
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == 1:
                return path[path.index(nxt):] + [nxt]
            if nxt not in state:
                found = visit(nxt)
                if found:
                    return found
        path.pop()
        state[node] = 2
        return None

    for start in sorted(graph):
        if start not in state:
            found = visit(start)
            if found:
                return found
    return None


def test_no_module_of_advisor_imports_another_in_a_cycle():
    cycle = find_cycle(import_graph())
    assert cycle is None, "import cycle: " + " -> ".join(cycle)


def test_the_cycle_finder_reports_a_cycle(tmp_path):
    # The test above can fail: a planted cycle through a function-level import is found.
    (tmp_path / PACKAGE / "lsp").mkdir(parents=True)
    (tmp_path / PACKAGE / "__init__.py").write_text("")
    (tmp_path / PACKAGE / "cli.py").write_text("def main():\n    from advisor.lsp.server import serve\n")
    (tmp_path / PACKAGE / "lsp" / "__init__.py").write_text("")
    (tmp_path / PACKAGE / "lsp" / "server.py").write_text("from . import docs\n")
    (tmp_path / PACKAGE / "lsp" / "docs.py").write_text("def page():\n    from advisor.cli import main\n")
    assert find_cycle(import_graph(tmp_path)) == ["advisor.cli", "advisor.lsp.server", "advisor.lsp.docs",
                                                  "advisor.cli"]
