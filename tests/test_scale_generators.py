"""benchmarks/scale.py's generated files are valid Python of the size and shape asked for (the
benchmark's curves mean nothing otherwise). No timing is checked."""

from __future__ import annotations

import ast
import importlib.util
import subprocess
import sys
from collections import Counter
from pathlib import Path

import libcst as cst
import pytest

ROOT = Path(__file__).resolve().parent.parent


def _load_scale():
    spec = importlib.util.spec_from_file_location("scale_benchmark", ROOT / "benchmarks" / "scale.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


scale = _load_scale()


@pytest.mark.parametrize("shape", scale.SHAPES)
@pytest.mark.parametrize("lines", [1000, 12000])
def test_generated_file_parses_and_has_the_requested_size(shape, lines):
    text = scale.generate(shape, lines)
    ast.parse(text)
    count = text.count("\n")
    assert lines <= count <= lines * 1.05 + 100, count


@pytest.mark.parametrize("shape", scale.SHAPES)
def test_generated_file_parses_with_libcst(shape):
    cst.parse_module(scale.generate(shape, 1000))


def _function_names(tree):
    return Counter(node.name for node in ast.walk(tree) if isinstance(node, ast.FunctionDef))


def test_repeated_defines_the_same_names_again_and_distinct_does_not():
    repeated = _function_names(ast.parse(scale.generate("repeated", 3000)))
    assert repeated["train_one_epoch"] >= 30
    distinct = _function_names(ast.parse(scale.generate("distinct", 3000)))
    top_level = {name: n for name, n in distinct.items() if not name.startswith("__") and name != "forward"}
    assert top_level and max(top_level.values()) == 1


def _depth(node, level=0):
    blocks = (ast.For, ast.If, ast.With, ast.While)
    inner = level + 1 if isinstance(node, blocks) else level
    return max([inner] + [_depth(child, inner) for child in ast.iter_child_nodes(node)])


def test_nested_blocks_are_deep():
    tree = ast.parse(scale.generate("nested", 1000))
    assert _depth(tree) >= scale.NEST_DEPTH


def test_table_is_one_literal_and_huge_function_one_function():
    text = scale.generate("table", 5000)
    table = [n for n in ast.parse(text).body if isinstance(n, ast.Assign)]
    assert len(table) == 1 and len(table[0].value.elts) >= 4900
    text = scale.generate("huge-function", 5000)
    (function,) = [n for n in ast.parse(text).body if isinstance(n, ast.FunctionDef)]
    assert function.end_lineno - function.lineno >= 4900


def test_unknown_shape_is_refused():
    with pytest.raises(ValueError, match="unknown shape"):
        scale.generate("spiral", 1000)


def test_benchmark_runs_end_to_end_on_a_small_file(tmp_path):
    pytest.importorskip("matplotlib")
    png = tmp_path / "scale.png"
    done = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / "scale.py"), "--sizes", "150",
         "--shapes", "repeated", "--plot", str(png)],
        capture_output=True, text=True, cwd=tmp_path, timeout=600,
    )
    assert done.returncode == 0, done.stderr
    assert "| repeated |" in done.stdout
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
