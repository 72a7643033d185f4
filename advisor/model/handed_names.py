"""The calls that hand a name on as an argument, indexed once per file: where a value bound to
that name goes next (`model = nn.DataParallel(model)`, then `model_training(args, model)`;
`model = CaptionModel(...)`, then `Trainer(model=model)`). Built in one pass over the calls, so
that asking for every wrap or construction of a file costs linear time, whatever its shape."""

from __future__ import annotations

from typing import Dict, List, Tuple

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
