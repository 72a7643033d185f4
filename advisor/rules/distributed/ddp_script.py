"""Helpers shared by the distributed rules."""

from __future__ import annotations
import re
from typing import Optional, Tuple
import libcst as cst
from advisor.model import CallSite, FileModel
from advisor.model.names import dotted_name


# Lightning calls `sampler.set_epoch` for the loaders it manages; Accelerate and Fabric do it for
# prepared loaders, and the HF Trainer for its own. Importing a helper from them is not enough.
LIGHTNING = ("lightning", "pytorch_lightning")


def framework_runs_epochs(model: FileModel) -> bool:
    if model.uses_framework(*LIGHTNING):
        return True
    if model.method_calls("prepare", "setup_dataloaders", "prepare_data_loader"):
        return True
    return any(
        q.startswith("accelerate.") or (q.startswith("transformers.") and q.endswith("Trainer"))
        for q in model.facts.calls_by_qualname
    )


DDP = "torch.nn.parallel.DistributedDataParallel"


INIT_PROCESS_GROUP = "torch.distributed.init_process_group"


# Names whose value differs between ranks: `rank`, `local_rank`, `ddp_rank`, `dist.get_rank()`,
# `accelerator.process_index`.
RANK_WORD = re.compile(r"rank|process_index|proc_id", re.IGNORECASE)


def is_ddp_script(model: FileModel) -> bool:
    """The file builds a DDP model or starts a process group: it runs once per rank."""
    return bool(model.calls_to(DDP, INIT_PROCESS_GROUP))


def kwargs_value(model: FileModel, site: CallSite, key: str) -> Tuple[str, Optional[cst.BaseExpression]]:
    """``key`` in the call's `**kwargs`: ("absent" | "present" | "unknown", value)."""
    state = "absent"
    for arg in site.node.args:
        if arg.star != "**":
            continue
        value: Optional[cst.BaseExpression] = arg.value
        if not isinstance(value, (cst.Dict, cst.Call)):
            name = dotted_name(arg.value)
            found = model.assignments(name, site.ctx) if name else []
            if len(found) != 1 or (site.ctx.scope, name) in model.facts.subscript_stores:
                return "unknown", None
            if any(s.receiver_name == name for s in model.method_calls("update", "setdefault")):
                return "unknown", None
            value = found[0].value
        if isinstance(value, cst.Dict):
            for element in value.elements:
                if not isinstance(element, cst.DictElement):
                    return "unknown", None
                if isinstance(element.key, cst.SimpleString) and element.key.evaluated_value == key:
                    return "present", element.value
        elif isinstance(value, cst.Call) and dotted_name(value.func) == "dict":
            for a in value.args:
                if a.keyword is None:
                    return "unknown", None
                if a.keyword.value == key:
                    return "present", a.value
        else:
            return "unknown", None
    return state, None
