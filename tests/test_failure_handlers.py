"""Handlers of a failed step run on the steps that failed only: code in them is gated, not
per step (out of GPU memory, a non-finite loss), while a handler for a missing key may run on
every batch."""

from __future__ import annotations

import libcst as cst

from advisor.model import FileModel

SCRIPT = """\
import torch

for i, batch in enumerate(loader):
    err = criterion(model(batch.noisy.cuda()), batch.clean.cuda())
    try:
        err.backward()
    except RuntimeError as e:
        if "nan" in str(e).lower() or "non-finite" in str(e):
            save_for_inspection(batch, i)
            continue
        raise e
    try:
        weight = weights[batch.key]
    except KeyError:
        weight = fallback_weight(batch)
    opt.step()
"""


def _site(model: FileModel, name: str):
    return next(site for site in model.facts.calls if model.code(site.node.func) == name)


def test_a_handler_of_a_non_finite_loss_is_gated():
    model = FileModel.build(cst.parse_module(SCRIPT), "train.py")
    assert model.guards.gated(_site(model, "save_for_inspection").ctx)


def test_a_handler_of_a_missing_key_is_not():
    model = FileModel.build(cst.parse_module(SCRIPT), "train.py")
    assert not model.guards.gated(_site(model, "fallback_weight").ctx)
