"""Facts the model now finds once per file (or per class) instead of once per question: each
must answer exactly what the former per-question search answered."""

from __future__ import annotations

import textwrap
from pathlib import Path

import libcst as cst
import pytest

from advisor.model.file_model import FileModel
from advisor.model.literals import literal_values
from advisor.model.module_layers import class_mode_free, class_parameter_free
from advisor.model.value_flow import _comprehension_reads, comprehension_reads

ROOT = Path(__file__).resolve().parent.parent
SAMPLES = sorted([*ROOT.glob("tests/corpus/*.py"), *ROOT.glob("examples/*.py")])


def _model(source: str) -> FileModel:
    return FileModel.build(cst.parse_module(textwrap.dedent(source)))


NESTED = """
pairs = [(x, m) for x, m in zip(xs, masks)]
picked = [x[m] for x, m in pairs if m is not None]
table = {k: [v for v in vs if v] for k, vs in groups.items()}
nested = [[y for y in row] for row in [x for x in rows]]
key = lambda item: [part for part in item if part]
scale = lambda xs: (lambda ys: {y: [z for z in ys] for y in ys})([x * 2 for x in xs])
sort = sorted(items, key=lambda p: sum(q for q in p))
late = [lambda: x for x in range(3)]
def f(batch):
    return [t.cuda() for t in batch]
class C:
    names = [n for n in ("a", "b")]
"""


@pytest.mark.parametrize("source", [NESTED, *(p.read_text(encoding="utf-8") for p in SAMPLES)],
                         ids=["nested", *(p.name for p in SAMPLES)])
def test_comprehension_reads_are_those_a_full_walk_finds(source):
    model = _model(source)
    assert comprehension_reads(model) == _comprehension_reads([model.module])


def test_comprehensions_inside_lambdas_are_found_although_the_walk_skips_lambdas():
    model = _model(NESTED)
    reads = comprehension_reads(model)
    lambda_reads = {value[0] for value in reads.values()}
    assert {"part", "z", "x", "q"} <= lambda_reads
    assert len(model.facts.lambdas) == 4  # the outermost ones: the walk does not enter them


def _probe(model: FileModel):
    (site,) = model.facts.calls_by_callee["probe"]
    return literal_values(model, site.node.args[0].value, site.ctx, site.order)


OPTIONS = """
import argparse
parser = argparse.ArgumentParser()
parser.add_argument("--workers", type=int, default=8)
parser.add_argument("--lr", type=float, default=0.1)
parser.add_argument("--batch-size", dest="bs", type=int, default=32)
"""


def test_options_are_found_by_their_dest_in_source_order():
    model = _model(OPTIONS + "args = parser.parse_args()\nprobe(args.workers)\n")
    assert _probe(model).ints() == (8,)
    model = _model(OPTIONS + "args = parser.parse_args()\nprobe(args.bs)\n")
    assert _probe(model).ints() == (32,)
    # Asked twice in one file (the dests are read once): the same answers.
    model = _model(OPTIONS + "args = parser.parse_args()\nprobe(args.workers)\nprint(args.bs, args.lr)\n")
    assert _probe(model).ints() == (8,)


def test_an_option_named_by_an_expression_still_makes_any_attribute_unknown():
    before = OPTIONS.replace('parser.add_argument("--lr"', 'parser.add_argument(FLAG')
    model = _model(before + "args = parser.parse_args()\nprobe(args.workers)\n")
    assert _probe(model).ints() is None
    after = OPTIONS + "parser.add_argument(FLAG, default=1)\nargs = parser.parse_args()\nprobe(args.workers)\n"
    assert _probe(_model(after)).ints() is None


def test_an_option_defined_twice_holds_both_defaults():
    source = OPTIONS + 'parser.add_argument("--workers", type=int, default=4)\nargs = parser.parse_args()\nprobe(args.workers)\n'
    assert sorted(_probe(_model(source)).ints()) == [4, 8]


LAYERS = """
import torch.nn as nn
class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.act = nn.ReLU()
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.block = Block()
        self.drop = nn.Dropout(0.1)
"""


def test_class_answers_are_kept_per_class_and_dropped_with_the_shared_facts():
    model = _model(LAYERS)
    block, net = model.facts.classes["Block"], model.facts.classes["Net"]
    assert class_mode_free(model, block) and not class_mode_free(model, net)
    assert class_parameter_free(model, block)
    assert class_mode_free(model, block) and not class_mode_free(model, net)  # from the memo
    assert model.shared("mode-free-classes", dict) == {id(block): True, id(net): False}
    model.forget_answers()
    assert "mode-free-classes" not in model._shared
    assert class_mode_free(model, block) and not class_mode_free(model, net)


RECURRENT = """
import torch
import torch.nn as nn
from torch.autograd import Variable
def create_variable(tensor):
    return Variable(tensor.cuda()) if torch.cuda.is_available() else Variable(tensor)
class Classifier(nn.Module):
    def __init__(self):
        super().__init__()
        self.embedding = nn.Embedding(128, 64)
        self.gru = nn.GRU(64, 64, 1, bidirectional=True)
        self.fc = nn.Linear(64, 18)
    def forward(self, tokens):
        hidden = self._init_hidden(tokens.size(1))
        return self.fc(self.gru(self.embedding(tokens), hidden)[1][-1])
    def _init_hidden(self, batch_size):
        return create_variable(torch.zeros(2, batch_size, 64))
class Learned(Classifier):
    def _init_hidden(self, batch_size):
        return Variable(torch.zeros(2, batch_size, 64), requires_grad=True)
"""


def test_a_class_wrapping_its_state_in_variable_stays_mode_free():
    # `Variable(t)` of PyTorch 0.3 code hands back the tensor: no layer, no mode.
    model = _model(RECURRENT)
    assert class_mode_free(model, model.facts.classes["Classifier"])
    # One made to require grad is a parameter the layers question does not look through.
    assert not class_parameter_free(model, model.facts.classes["Learned"])
