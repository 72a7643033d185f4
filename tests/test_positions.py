"""The engine's own position pass must give every node the span libcst's PositionProvider gives."""

from __future__ import annotations

from pathlib import Path

import libcst as cst
import pytest
from libcst.metadata import MetadataWrapper, PositionProvider

from advisor import positions
from advisor.positions import node_spans

ROOT = Path(__file__).resolve().parent.parent
SAMPLES = sorted(
    [*ROOT.glob("tests/corpus/*.py"), *ROOT.glob("examples/*.py"), ROOT / "tests/data/syntax_tour.py"]
)
AWKWARD = {
    "crlf": "import torch\r\nx = torch.ones(3)\r\nif x:\r\n    y = x.item()\r\n",
    "tabs": "def f(x):\n\tif x:\n\t\treturn x.cpu()\n\treturn (\n\t\tx\n\t)\n",
    "non_ascii": "café = 'é'\nnaïve = f(café, 'ü')  # ü\n",
    "continuation": "x = 1 + \\\n    2\nif (a and\n        b): pass\n",
    "no_final_newline": "import torch\ny = torch.zeros(1).item()",
    "multiline_string": 'x = """a\nb\n"""; y = (\n    """c"""\n)\n',
    "form_feed": "import torch\n\x0c\ndef f():\n    pass\n",
    "old_mac_newlines": "x = 1\ry = 2\r",
    "two_space_indent": "class A:\n  def f(self):\n    return 1\n",
}


def _reference(module: cst.Module):
    ranges = MetadataWrapper(module, unsafe_skip_copy=True).resolve(PositionProvider)
    return {id(n): ((r.start.line, r.start.column), (r.end.line, r.end.column)) for n, r in ranges.items()}


@pytest.mark.parametrize("path", SAMPLES, ids=lambda p: p.name)
def test_spans_match_position_provider_on_real_files(path):
    module = cst.parse_module(path.read_text(encoding="utf-8"))
    assert node_spans(module) == _reference(module)


@pytest.mark.parametrize("name", sorted(AWKWARD))
def test_spans_match_position_provider_on_awkward_text(name):
    module = cst.parse_module(AWKWARD[name])
    assert node_spans(module) == _reference(module)


def test_fallback_to_libcsts_provider_gives_the_same_spans(monkeypatch):
    module = cst.parse_module((ROOT / "tests/data/syntax_tour.py").read_text(encoding="utf-8"))
    fast = node_spans(module)
    monkeypatch.setattr(positions, "_CodegenState", None)
    assert node_spans(module) == fast
