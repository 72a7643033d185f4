"""Reads of environment variables with a default (`os.getenv("PIN_MEMORY", True)`,
`os.environ.get("NUM_WORKERS", 4)`): the default is what a run gets unless its launch sets the
variable, so the follower treats it as it treats a command-line default (a run setting, named
`$NAME`).

The variables a launcher sets for every process it starts (torchrun, SLURM, MPI) are not such
settings: their default describes a run nobody launches that way."""

from __future__ import annotations

from typing import Optional, Tuple

import libcst as cst

from advisor.model.constants import constant

_READS = frozenset({"os.getenv", "os.environ.get"})
_LAUNCHER_VARIABLES = frozenset({
    "WORLD_SIZE", "RANK", "LOCAL_RANK", "LOCAL_WORLD_SIZE", "GROUP_RANK", "NODE_RANK", "MASTER_ADDR",
    "MASTER_PORT", "CUDA_VISIBLE_DEVICES", "NPROC_PER_NODE", "NNODES",
})
_LAUNCHER_PREFIXES = ("SLURM_", "OMPI_", "PMI_", "PMIX_", "MV2_", "TORCHELASTIC_", "DEEPSPEED_")


def environment_read(model, call: cst.Call) -> Optional[Tuple[str, cst.BaseExpression]]:
    """(variable, default expression) for `os.getenv("K", d)` or `os.environ.get("K", d)` with
    a literal name that no launcher sets; None for anything else."""
    if len(call.args) != 2 or any(a.keyword is not None or a.star for a in call.args):
        return None
    if type(call.func) not in (cst.Name, cst.Attribute) or model.imports.qualify(call.func) not in _READS:
        return None
    name = constant(model, call.args[0].value)
    if name is None or name[0] != "str":
        return None
    variable = name[1]
    if variable.upper() in _LAUNCHER_VARIABLES or variable.upper().startswith(_LAUNCHER_PREFIXES):
        return None
    return variable, call.args[1].value


def environment_setting(variable: str) -> str:
    """How an answer names the variable it holds the default of (`$PIN_MEMORY`)."""
    return f"${variable}"


def is_environment_setting(option: Optional[str]) -> bool:
    return option is not None and option.startswith("$")
