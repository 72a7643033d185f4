"""Whether a sampler splits the data by rank: a DistributedSampler, a class derived from one,
one built with the rank or the world size, or a batch sampler around one."""

from __future__ import annotations

import re
from typing import Optional, Sequence

import libcst as cst

from advisor.model.call_options import call_option
from advisor.model.facts import CallSite, Context
from advisor.model.kinds import KINDS, BuiltBy
from advisor.model.loaders import loader_consumers
from advisor.model.mentions import mentions_question
from advisor.model.names import DATALOADER, DISTRIBUTED_SAMPLER, dotted_name
from advisor.model.value_flow import Question, ValueFlow

DIST, PLAIN, UNKNOWN = "dist", "plain", "unknown"
# Words that say a value depends on the rank or splits data between ranks.
SHARD_WORD = re.compile(r"rank|world_size|num_replicas|num_shards|shard|split_dataset_by_node|process_index", re.I)
_PLAIN_SAMPLERS = frozenset(
    f"torch.utils.data.{where}{name}"
    for where in ("", "sampler.")
    for name in ("RandomSampler", "SequentialSampler", "WeightedRandomSampler", "SubsetRandomSampler")
)


class SamplerKind(Question[str]):
    """DIST when some path splits by rank, PLAIN when every path is a torch sampler that does
    not, UNKNOWN otherwise."""

    key = "sampler"
    unknown = UNKNOWN

    def terminal(self, flow: ValueFlow, expr, ctx: Context, order: int) -> Optional[str]:
        if "dist_sampler" in flow.ask(KINDS, expr, ctx, order):
            return DIST
        if not type(expr) is cst.Call:
            return None
        model = flow.model
        if model.imports.qualify(expr.func) in _PLAIN_SAMPLERS:
            return PLAIN
        name = dotted_name(expr.func) or ""
        info = model.facts.classes.get(name)
        if "Distributed" in name or (info is not None and any("Distributed" in b for b in info.bases)):
            return DIST
        shard = mentions_question(SHARD_WORD, 1)
        if any(flow.ask(shard, a.value, ctx, order) for a in expr.args):
            return DIST
        if any(a.keyword is not None and a.keyword.value in ("num_replicas", "rank") for a in expr.args):
            return DIST
        if name.endswith(("batch_sampler", "BatchSampler")) and any(
            flow.ask(self, a.value, ctx, order) == DIST for a in expr.args
        ):
            return DIST
        return UNKNOWN

    def combine(self, answers: Sequence[str]) -> str:
        if DIST in answers:
            return DIST
        return PLAIN if all(a == PLAIN for a in answers) else UNKNOWN


SAMPLER = SamplerKind()


def sampler_kind(model, expr: cst.BaseExpression, ctx: Context, order: float) -> str:
    return model.values.ask(SAMPLER, expr, ctx, order)


def evaluation_only(model, site: CallSite) -> bool:
    """A DistributedSampler (``site``) whose loaders feed evaluation only: every DataLoader of
    the file built on it (given `sampler=` or through a `**kwargs` dict) is taken from by some
    loop of the project, and none of those loops trains or sits in a loop that does. The order
    such a sampler gives changes no result."""
    built_on = BuiltBy(DISTRIBUTED_SAMPLER)
    found = False
    for loader in model.calls_to(DATALOADER):
        option = call_option(model, loader, "sampler", 3)
        if not any(id(site.node) in v.flow.ask(built_on, v.expr, v.ctx, v.order) for v in option.values):
            continue
        consumers = loader_consumers(model, loader)
        if not consumers:
            return False
        for other, loop in consumers:
            while loop is not None:
                if other.is_training_loop(loop):
                    return False
                loop = loop.parent
        found = True
    return found
