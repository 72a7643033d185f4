"""GPU503 `wrapped-model-state-dict-saved`: saving a DDP/DataParallel model's `state_dict()` instead of `.module`'s."""

from __future__ import annotations
from typing import Iterator, Optional, Set
import libcst as cst
from advisor.findings import Fixable
from advisor.model import CallSite, FileModel
from advisor.model.names import dotted_name
from advisor.model.subtree import iter_names
from advisor.rules.base import FixSpec, NodeEdit, Report, Rule


def _save_functions(model: FileModel) -> Set[str]:
    """Same-module functions that end up calling torch.save."""
    savers = {key for key, info in model.facts.functions.items() if info.calls_save}
    changed = True
    while changed:
        changed = False
        for key, info in model.facts.functions.items():
            if key not in savers and info.callees & savers:
                savers.add(key)
                changed = True
    return savers


def _names_and_dotted(node: cst.CSTNode) -> Iterator[str]:
    name = dotted_name(node) if isinstance(node, cst.BaseExpression) else None
    if name is not None:
        yield name
    yield from iter_names(node)


class WrappedStateDictSaved(Rule):
    code = "GPU503"
    name = "wrapped-model-state-dict-saved"
    summary = "saving a DDP/DataParallel model's `state_dict()` instead of `.module`'s"
    what = """
        `state_dict()` called on a model wrapped in `DistributedDataParallel` or
        `DataParallel` when the result is saved: passed to `torch.save` directly, inside a
        checkpoint dict, or through a function of the module that saves.
    """
    why = """
        A wrapper stores the real model as `.module`, so every key of its state dict starts
        with `module.`. Loading that checkpoint into the plain model fails in strict mode, and
        with `strict=False` it loads nothing at all and says so only in the returned key lists:
        the model quietly keeps its random weights.
    """
    example = """
        model = DDP(model, device_ids=[rank])
        ...
        torch.save(model.state_dict(), "checkpoint.pt")
    """
    instead = """
        model = DDP(model, device_ids=[rank])
        ...
        if rank == 0:
            torch.save(model.module.state_dict(), "checkpoint.pt")
    """
    hint = "save `model.module.state_dict()` so that the keys match the unwrapped model"
    fixable = Fixable.SAFE
    fix_safety = """
        The fix saves `model.module.state_dict()`, or `getattr(model, "module", model).state_dict()`
        where the model is only sometimes wrapped, so the keys lose their `module.` prefix and
        load into the plain model. It assumes every reader of the checkpoint loads it into an
        unwrapped model. That is not checked today: a script that resumes with
        `model.load_state_dict(checkpoint[...])` into the wrapped model fails after the fix with
        missing `module.` keys, and checkpoints written before the fix keep their prefix. Check
        the loading code before applying it.
    """
    references = (
        (
            "Saving and loading models: saving torch.nn.DataParallel models",
            "https://docs.pytorch.org/tutorials/beginner/saving_loading_models.html#saving-torch-nn-dataparallel-models",
        ),
        (
            "Getting started with distributed data parallel: save and load checkpoints",
            "https://docs.pytorch.org/tutorials/intermediate/ddp_tutorial.html#save-and-load-checkpoints",
        ),
        (
            "torch/nn/modules/utils.py: `consume_prefix_in_state_dict_if_present`",
            "https://github.com/pytorch/pytorch/blob/main/torch/nn/modules/utils.py",
        ),
    )
    requires = (("state_dict",), ("DistributedDataParallel", "DataParallel", "DDP"))

    def check(self, model: FileModel) -> Iterator[Report]:
        savers: Optional[Set[str]] = None
        for site in model.method_calls("state_dict"):
            if site.receiver is None or site.node.args:
                continue
            kinds = model.kinds(site.receiver, site.ctx, site.order)
            if "ddp" not in kinds:
                continue
            if savers is None:
                savers = _save_functions(model)
            if not self._is_saved(model, site, savers):
                continue
            receiver = model.code(site.receiver)
            if kinds["ddp"]:
                fix = FixSpec("save `.module.state_dict()`", (NodeEdit(site.receiver, ".module", "after"),))
            else:
                fix = FixSpec(
                    "unwrap the model when it is wrapped",
                    (NodeEdit(site.receiver, f'getattr({receiver}, "module", {receiver})'),),
                )
            verb = "is" if kinds["ddp"] else "may be"
            yield self.report(
                site.node,
                "`{model}` {verb} wrapped in DDP/DataParallel: its state_dict keys then start with "
                "`module.` and will not load into the plain model",
                fix=fix,
                data={"model": receiver, "verb": verb},
            )

    def _is_save_call(self, site: CallSite, savers: Set[str]) -> bool:
        if site.qualname == "torch.save":
            return True
        func = site.node.func
        return isinstance(func, cst.Name) and func.value in savers

    def _is_saved(self, model: FileModel, site: CallSite, savers: Set[str]) -> bool:
        outer = site.outer
        while outer is not None:
            if self._is_save_call(outer, savers):
                return True
            outer = outer.outer
        target = site.assigned_to
        if target is None:
            return False
        candidates = model.calls_to("torch.save") + [
            s for key in savers for s in model.facts.calls_by_callee.get(key, ())
        ]
        for save in candidates:
            if save.ctx.scope != site.ctx.scope or save.order < site.order:
                continue
            if any(target == name for arg in save.node.args for name in _names_and_dotted(arg.value)):
                return True
        return False
