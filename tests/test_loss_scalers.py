"""Which files build a loss scaler (GPU301 is silent where one scales the loss): a GradScaler, a
library's, a project class built on one, or a class named as a loss scaler in code the analysis
cannot read (a git submodule not checked out)."""

from __future__ import annotations

import textwrap

import libcst as cst
import pytest

from advisor.model.file_model import FileModel


def builds_scaler(source: str) -> bool:
    return FileModel.build(cst.parse_module(textwrap.dedent(source))).builds_scaler()


@pytest.mark.parametrize("source", [
    "import torch\nscaler = torch.cuda.amp.GradScaler()\n",
    "from timm.utils import NativeScaler\nloss_scaler = NativeScaler()\n",
    "from croco.utils.misc import NativeScalerWithGradNormCount as NativeScaler\nloss_scaler = NativeScaler()\n",
    "from apex_utils.fp16 import DynamicLossScaler\nscaler = DynamicLossScaler(init_scale=2**16)\n",
])
def test_loss_scalers(source):
    assert builds_scaler(source)


@pytest.mark.parametrize("source", [
    "from sklearn.preprocessing import StandardScaler\nscaler = StandardScaler()\n",
    "from sklearn.preprocessing import MinMaxScaler\nscaler = MinMaxScaler((0, 1))\n",
    "from mylib.sched import LRScaler\nscaler = LRScaler(warmup=10)\n",
])
def test_other_scalers_are_not_loss_scalers(source):
    assert not builds_scaler(source)
