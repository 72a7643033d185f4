"""Settings objects read from a config file: `config = OmegaConf.load(args.config)`, then
`main(config)` and `if cfg.use_adapted_weight:` there. What such an attribute holds is what the
project's config files give the key (`literals.py` reads it as a setting, which
`ProjectView.sets_only_false_in_configs` answers), not something the program binds."""

from __future__ import annotations

import libcst as cst

from advisor.model.facts import Context
from advisor.model.value_flow import argument

# Calls that return an object whose attributes are a config file's keys.
CONFIG_LOADERS = frozenset({
    "omegaconf.OmegaConf.load", "omegaconf.OmegaConf.merge", "mmcv.Config.fromfile",
    "mmengine.Config.fromfile", "mmengine.config.Config.fromfile",
})

# How many calls up a parameter is followed to where the config was loaded.
_DEPTH = 2


def loaded_config(model, name: str, ctx: Context, order: float, depth: int = 0) -> bool:
    """``name`` holds a config loaded from a file on every path: bound here to a loader call, or
    a parameter every call of whose function passes such a name."""
    reach = model.bindings.reaching(name, ctx, order)
    if reach.assignments:
        return reach.parameter is None and all(
            a.index is None and type(a.value) is cst.Call and model.imports.qualify(a.value.func) in CONFIG_LOADERS
            for a in reach.assignments
        )
    info = ctx.function
    if reach.parameter is None or info is None or reach.parameter is not info or depth >= _DEPTH:
        return False
    position = info.params.index(name) - info.receiver_params
    callers = model.callers(info)
    for owner, site in callers:
        arg = argument(site.node, name, position)
        if arg is None or arg.star or type(arg.value) is not cst.Name:
            return False
        if not loaded_config(owner, arg.value.value, site.ctx, site.order, depth + 1):
            return False
    return bool(callers)
