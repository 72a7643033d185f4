"""The calls that hand a name on as an argument, indexed once per file: where a value bound to
that name goes next (`model = nn.DataParallel(model)`, then `model_training(args, model)`;
`model = CaptionModel(...)`, then `Trainer(model=model)`). Built in one pass over the calls, so
that asking for every wrap or construction of a file costs linear time, whatever its shape."""

from __future__ import annotations

from typing import Dict, List, Tuple

import libcst as cst

from advisor.model.facts import CallSite
from advisor.model.names import dotted_name


def calls_handing(model, site: CallSite, name: str) -> List[CallSite]:
    """The calls after ``site``, in its function, that take ``name`` as an argument, in order."""
    index: Dict[Tuple[int, str], List[CallSite]] = model.shared("handed-names", _index)
    function = site.ctx.function
    return [c for c in index.get((id(function), name), ()) if c.order > site.order]


def _index(model) -> Dict[Tuple[int, str], List[CallSite]]:
    out: Dict[Tuple[int, str], List[CallSite]] = {}
    for call in model.facts.calls:
        names = {dotted_name(a.value) for a in call.node.args}
        names.discard(None)
        for name in names:
            out.setdefault((id(call.ctx.function), name), []).append(call)
    return out


def handed_sites(model) -> Dict[int, List[Tuple[CallSite, cst.Arg]]]:
    """For each function of the file handed by name to a call (`trainer.eval(evaluate, path)`,
    by the id of its FunctionInfo), those calls and the argument that hands it: a callback, run
    where the callee decides, under the state (eval mode, no_grad) it sets up."""
    return model.shared("handed-functions", _handed_sites)


def _handed_sites(model) -> Dict[int, List[Tuple[CallSite, cst.Arg]]]:
    out: Dict[int, List[Tuple[CallSite, cst.Arg]]] = {}
    for call in model.facts.calls:
        for arg in call.node.args:
            name = arg.value.value if type(arg.value) is cst.Name else None
            if name is None or arg.star or name not in model.facts.function_defs:
                continue
            info = model.bindings.function(name, call.ctx, call.order)
            if info is not None:
                out.setdefault(id(info), []).append((call, arg))
    return out
