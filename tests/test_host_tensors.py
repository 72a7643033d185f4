"""Where the value model says a tensor lives: in host memory on every path, or not known to."""

from __future__ import annotations

import textwrap

import libcst as cst

from advisor.model.file_model import FileModel
from advisor.model.tensors import is_host_tensor


def host(source: str) -> bool:
    model = FileModel.build(cst.parse_module(textwrap.dedent(source)))
    (site,) = model.facts.calls_by_callee["probe"]
    return is_host_tensor(model, site.node.args[0].value, site.ctx, site.order)


STATE = """
import numpy as np
import torch


def comms_start(indexes):
    counts = torch.from_numpy(np.bincount(indexes, minlength=8))
    received = torch.empty_like(counts)
    return counts, received


class SparseComms:
    def __init__(self):
        self.state = None

    def update(self, indexes):
        counts, received = comms_start(indexes)
        self.state = (counts, received)

    def share(self):
        counts, received = self.state
        self.state = None
        probe(received)
"""


def test_a_state_cleared_to_none_after_use_keeps_its_host_tensors():
    assert host(STATE)


def test_the_same_state_with_a_device_tensor_is_not_host():
    assert not host(STATE.replace("torch.empty_like(counts)", "torch.empty_like(counts, device='cuda')"))
