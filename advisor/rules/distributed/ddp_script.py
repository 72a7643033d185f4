"""Helpers shared by the distributed rules."""

from __future__ import annotations
import dataclasses
import re
from advisor.discovery import is_notebook
from advisor.model import FileModel
from advisor.findings import Severity
from advisor.model.vocabulary import LIGHTNING


# Lightning calls `sampler.set_epoch` for the loaders it manages; Accelerate and Fabric do it for
# prepared loaders, and the HF Trainer for its own. Importing a helper from them is not enough.


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
    """The file builds a DDP model or starts a process group: it runs once per rank. Not when
    every such call sits under a test of a world size that is 1 on every path the project
    takes (`if self.world_size > 1:` where no construction passes a world size). Nor in a
    notebook that starts no processes itself (no `notebook_launcher`, no `spawn`): a kernel is
    one process, whatever training code a cell copied from a launched script."""
    if is_notebook(model.path or "") and not any(
            word in (model.text or "") for word in ("notebook_launcher", "spawn(", "start_processes(", "Process(")):
        return False
    return model.shared("ddp-script", lambda m: any(
        not m.guards.dead(site.ctx) for site in m.calls_to(DDP, INIT_PROCESS_GROUP)
    ))


def ddp_switched_off(model: FileModel) -> bool:
    """Every DDP wrap and process-group start the file's runs reach sits under a switch no
    documented run turns on (the `else` of `if args.local_rank == -1:` in a script that every
    shipped command starts with plain `python`): the per-rank rules are information there."""
    return model.shared("ddp-switched-off", lambda m: all(
        m.guards.switched_off(site.ctx) is not None
        for site in m.calls_to(DDP, INIT_PROCESS_GROUP) if not m.guards.dead(site.ctx)
    ))


def as_single_process(model: FileModel, reports):
    """The reports, as information when the file's DDP code is switched off (`ddp_switched_off`)."""
    if not ddp_switched_off(model):
        yield from reports
        return
    for report in reports:
        yield dataclasses.replace(report, severity=Severity.INFO)
