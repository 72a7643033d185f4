"""GPU507 `same-seed-on-every-rank`: DDP script seeds every rank with the same constant."""

from __future__ import annotations
from typing import Dict, Iterator, List, Tuple
import libcst as cst
from advisor.findings import Severity
from advisor.model import CallSite, Context, FileModel, FunctionInfo
from advisor.model.facts import MODULE_SCOPE
from advisor.model.file_model import call_argument
from advisor.rules.base import Report, Rule, snippet
from advisor.rules.distributed.ddp_script import RANK_WORD, as_single_process, is_ddp_script
from advisor.model.mentions import mentions


_GLOBAL_SEEDERS = frozenset(
    {
        "torch.manual_seed",
        "torch.random.manual_seed",
        "torch.cuda.manual_seed",
        "torch.cuda.manual_seed_all",
        "random.seed",
        "numpy.random.seed",
        "transformers.set_seed",
        "transformers.trainer_utils.set_seed",
        "accelerate.utils.set_seed",
    }
)


class SameSeedOnEveryRank(Rule):
    code = "GPU507"
    name = "same-seed-on-every-rank"
    severity = Severity.INFO
    summary = "DDP script seeds every rank with the same constant"
    what = """
        In a file that builds a `DistributedDataParallel` model or calls `init_process_group`,
        a global seeding call (`torch.manual_seed`, `torch.cuda.manual_seed_all`,
        `random.seed`, `np.random.seed`, `transformers.set_seed`), directly or through a seeding
        helper of the file, given a literal or a module-level constant, when no seeding in the
        file adds a rank term (`seed + rank`, `seed + dist.get_rank()`,
        `args.seed + local_rank`). Reported once per file, at the first such call. Seeds from
        the command line (`args.seed`) and generator objects (`torch.Generator().manual_seed`)
        are left alone.
        All of it is information when every DDP wrap and process-group start of the file sits
        under a switch no documented run turns on (the `else` of `if args.local_rank == -1:`
        in a script every shipped command starts with plain `python`).
    """
    why = """
        Seeding every rank alike is right for the model's initial weights (DDP copies rank 0's
        weights anyway), but the seed also drives everything random afterwards: dropout masks,
        random augmentations, the seeds of DataLoader workers. Every GPU then draws the same
        random numbers in the same order, so the ranks' noise is correlated instead of
        independent, which quietly reduces what the extra GPUs add.
    """
    example = """
        dist.init_process_group("nccl")
        torch.manual_seed(42)
        model = DDP(build_model().to(rank), device_ids=[rank])
    """
    instead = """
        dist.init_process_group("nccl")
        torch.manual_seed(42)  # identical initial weights
        model = DDP(build_model().to(rank), device_ids=[rank])
        torch.manual_seed(42 + rank)  # independent dropout and augmentation per rank
    """
    hint = "after building the model, reseed with a rank term: `torch.manual_seed(seed + rank)`"
    fix_safety = """
        No automatic fix. The rank term must come after the model is built (so that the initial
        weights still agree) and needs the rank from the script; where that is depends on it.
    """
    references = (
        ("Reproducibility", "https://docs.pytorch.org/docs/stable/notes/randomness.html"),
        (
            "torch.utils.data: randomness in multi-process data loading",
            "https://docs.pytorch.org/docs/stable/data.html#randomness-in-multi-process-data-loading",
        ),
        ("torch.manual_seed", "https://docs.pytorch.org/docs/stable/generated/torch.manual_seed.html"),
    )
    requires = (("seed",), ("DistributedDataParallel", "init_process_group"))

    def check(self, model: FileModel) -> Iterator[Report]:
        # A DDP mode no documented run starts: the same reports, as information.
        yield from as_single_process(model, self._reports(model))

    def _reports(self, model: FileModel) -> Iterator[Report]:
        if not is_ddp_script(model):
            return
        seeds: List[Tuple[CallSite, cst.BaseExpression]] = []
        for site in model.calls_to(*_GLOBAL_SEEDERS):
            if site.qualname == "accelerate.utils.set_seed" and call_argument(site.node, "device_specific", 1) is not None:
                continue
            arg = call_argument(site.node, "seed", 0)
            if arg is not None:
                seeds.append((site, arg.value))
        helpers = self._helpers(model, seeds)
        for info, position in helpers.items():
            for site in model.call_sites(info):
                arg = call_argument(site.node, info.params[position], position - info.receiver_params)
                if arg is not None:
                    seeds.append((site, arg.value))
        for site in model.method_calls("manual_seed", "seed"):
            if site.node.args and mentions(model, site.node.args[0].value, site.ctx, RANK_WORD):
                return  # the file thinks about per-rank seeds somewhere
        if any(mentions(model, value, site.ctx, RANK_WORD) for site, value in seeds):
            return
        constant = [
            (site, value)
            for site, value in seeds
            if site.ctx.function not in helpers and self._constant(model, value, site.ctx)
        ]
        if not constant:
            return
        site, value = min(constant, key=lambda pair: pair[0].order)
        yield self.report(
            site.node,
            "every rank is seeded with the same `{seed}`: dropout masks and random "
            "augmentations repeat across GPUs",
            data={"seed": snippet(model, value, 20)},
        )

    def _helpers(self, model: FileModel, seeds: List[Tuple[CallSite, cst.BaseExpression]]) -> Dict[FunctionInfo, int]:
        """Functions of the file that pass one of their parameters to a global seeder."""
        out: Dict[FunctionInfo, int] = {}
        for site, value in seeds:
            info = site.ctx.function
            if info is not None and type(value) is cst.Name and value.value in info.params:
                out[info] = info.params.index(value.value)
        return out

    def _constant(self, model: FileModel, expr: cst.BaseExpression, ctx: Context) -> bool:
        if type(expr) is cst.UnaryOperation:
            expr = expr.expression
        if type(expr) is cst.Integer:
            return True
        if not type(expr) is cst.Name:
            return False
        info = ctx.function
        if info is not None and (expr.value in info.params or model.facts.assignments.get((info.key, expr.value))):
            return False
        found = model.facts.assignments.get((MODULE_SCOPE, expr.value), [])
        return bool(found) and all(type(a.value) is cst.Integer and a.index is None for a in found)
