"""Probes that need no GPU: they run on CPU torch and confirm correctness findings outright.

Each takes a dict of parameters (see registry.py) and returns result.outcome(...). With
`apply_fix` the pattern under test is the fixed form, and the verdict is `not confirmed`.
"""

from __future__ import annotations

import threading
import time
from typing import Any, Dict, List

import torch
from torch import nn

from advisor.runtime.result import median_iqr, outcome


def _toy_mlp(width: int = 64, depth: int = 3, out: int = 10) -> nn.Module:
    torch.manual_seed(0)
    layers: List[nn.Module] = []
    for _ in range(depth - 1):
        layers += [nn.Linear(width, width), nn.ReLU()]
    layers.append(nn.Linear(width, out))
    return nn.Sequential(*layers)


# -- GPU501 P-EPOCH ------------------------------------------------------------------------------
def probe_sampler_epoch(params: Dict[str, Any]) -> Dict[str, Any]:
    """Share of positions whose index is the same in epoch 0 and epoch 1."""
    from torch.utils.data.distributed import DistributedSampler

    size, replicas = int(params["dataset_size"]), int(params["num_replicas"])

    def same_share(set_epoch: bool) -> float:
        sampler = DistributedSampler(range(size), num_replicas=replicas, rank=0, shuffle=True, seed=0)
        orders = []
        for epoch in range(2):
            if set_epoch:
                sampler.set_epoch(epoch)
            orders.append(list(sampler))
        return sum(a == b for a, b in zip(*orders)) / len(orders[0])

    baseline = same_share(set_epoch=bool(params.get("apply_fix")))
    fixed = same_share(set_epoch=True)
    return outcome(baseline == 1.0, baseline, fixed, "share of epoch-1 indices in epoch-0 position",
                   ratio=None, detail="every epoch repeats epoch 0's order" if baseline == 1.0
                   else "epoch orders differ")


# -- GPU503 `module.` keys -----------------------------------------------------------------------
def probe_module_prefix(params: Dict[str, Any]) -> Dict[str, Any]:
    """Tensors loaded by `load_state_dict(strict=False)` from the wrapped model's state_dict."""
    wrapped = nn.DataParallel(_toy_mlp(8, 2, 4))  # on CPU it only wraps, as DDP's keys would
    saved = (wrapped.module if params.get("apply_fix") else wrapped).state_dict()
    fixed_saved = wrapped.module.state_dict()

    def load(state: Dict[str, torch.Tensor]) -> Dict[str, Any]:
        target = _toy_mlp(8, 2, 4)
        with torch.no_grad():
            for p in target.parameters():
                p.zero_()
        try:
            target.load_state_dict(state, strict=True)
            strict_ok = True
        except RuntimeError:
            strict_ok = False
        result = target.load_state_dict(state, strict=False)
        own = target.state_dict()
        loaded = sum(1 for k, v in state.items() if k in own and torch.equal(own[k], v))
        return {"strict_ok": strict_ok, "loaded": loaded, "missing": len(result.missing_keys),
                "unexpected": len(result.unexpected_keys)}

    bad, good = load(saved), load(fixed_saved)
    total = len(fixed_saved)
    confirmed = not bad["strict_ok"] and bad["loaded"] == 0
    detail = (f"strict load fails; strict=False loads nothing ({bad['missing']} missing, "
              f"{bad['unexpected']} unexpected keys)" if confirmed else "keys match the plain model")
    return outcome(confirmed, float(bad["loaded"]), float(good["loaded"]), f"of {total} tensors loaded",
                   ratio=None, detail=detail, strict_load_fails=not bad["strict_ok"])


# -- GPU301 P-UNDERFLOW --------------------------------------------------------------------------
def probe_fp16_underflow(params: Dict[str, Any]) -> Dict[str, Any]:
    """Share of nonzero fp32 gradients that flush to zero or turn subnormal when cast."""
    dtype = getattr(torch, str(params.get("dtype", "float16")))
    torch.manual_seed(0)
    model = _toy_mlp(256, 4, 10)
    x = torch.randn(int(params["batch_size"]), 256)
    y = torch.randint(0, 10, (x.shape[0],))
    nn.functional.cross_entropy(model(x), y).backward()
    grads = torch.cat([p.grad.flatten() for p in model.parameters()])
    grads = grads[grads != 0]
    tiny = torch.finfo(dtype).tiny  # smallest normal number of the cast dtype

    def lost(scale: float) -> Dict[str, float]:
        cast = (grads * scale).to(dtype)
        zero = (cast == 0).float().mean().item()
        sub = ((cast != 0) & (cast.abs() < tiny)).float().mean().item()
        return {"zero": 100 * zero, "subnormal": 100 * sub, "lost": 100 * (zero + sub)}

    scaled = lost(2.0 ** 16)
    unscaled = scaled if params.get("apply_fix") else lost(1.0)
    confirmed = dtype == torch.float16 and unscaled["lost"] > 0.1 and unscaled["lost"] > 2 * scaled["lost"]
    return outcome(confirmed, unscaled["lost"], scaled["lost"], "% of gradients zero or subnormal",
                   detail=f"{unscaled['zero']:.3g}% flush to zero, {unscaled['subnormal']:.3g}% subnormal "
                   f"in {dtype} without scaling; {scaled['lost']:.3g}% at scale 2^16",
                   zero_pct=unscaled["zero"], subnormal_pct=unscaled["subnormal"])


# -- GPU402 graph kept across iterations ---------------------------------------------------------
def _graph_nodes(root: Any) -> List[Any]:
    seen, stack, out = set(), [root], []
    while stack:
        node = stack.pop()
        if node is None or id(node) in seen:
            continue
        seen.add(id(node))
        out.append(node)
        stack.extend(n for n, _ in node.next_functions)
    return out


def probe_graph_retained(params: Dict[str, Any]) -> Dict[str, Any]:
    """Iteration graphs reachable from the accumulated total after N steps."""
    steps = int(params["iterations"])
    model = nn.Linear(32, 1)

    def run(detach: bool) -> int:
        total = torch.zeros(())
        for _ in range(steps):
            loss = model(torch.randn(16, 32)).pow(2).mean()
            loss.backward()
            total += loss.detach() if detach else loss
        if total.grad_fn is None:
            return 0
        return sum(1 for n in _graph_nodes(total.grad_fn) if type(n).__name__.startswith("Addmm"))

    baseline, fixed = run(bool(params.get("apply_fix"))), run(True)
    return outcome(baseline > 1, float(baseline), float(fixed), f"of {steps} iteration graphs alive",
                   ratio=None, detail=f"after {steps} steps {baseline} forward graphs are still referenced")


# -- GPU406 accumulation without dividing by k ---------------------------------------------------
def probe_accumulation_scale(params: Dict[str, Any]) -> Dict[str, Any]:
    """Accumulated gradient norm over k micro-batches vs the full-batch gradient norm."""
    k = max(1, int(params["accum_steps"]))
    torch.manual_seed(0)
    model = nn.Linear(16, 1)
    x, y = torch.randn(8 * k, 16), torch.randn(8 * k, 1)

    def norm(divide: bool) -> float:
        model.zero_grad()
        for xb, yb in zip(x.chunk(k), y.chunk(k)):
            loss = nn.functional.mse_loss(model(xb), yb)
            (loss / k if divide else loss).backward()
        return torch.cat([p.grad.flatten() for p in model.parameters()]).norm().item()

    model.zero_grad()
    nn.functional.mse_loss(model(x), y).backward()
    full = torch.cat([p.grad.flatten() for p in model.parameters()]).norm().item()
    baseline, fixed = norm(divide=bool(params.get("apply_fix"))), norm(divide=True)
    ratio = baseline / full
    confirmed = k > 1 and abs(ratio - k) < 0.01 * k
    return outcome(confirmed, baseline, fixed, "gradient norm", ratio=ratio,
                   detail=f"k={k}: {ratio:.3g}x the full-batch gradient (divided: {fixed / full:.3g}x)",
                   full_batch=full, accum_steps=k)


# -- GPU205 invalid DataLoader arguments ---------------------------------------------------------
_CONFLICTS = (("sampler", "shuffle"), ("prefetch_factor", None), ("persistent_workers", None),
              ("batch_sampler", None))


def _loader_kwargs(raw: Dict[str, Any]) -> Dict[str, Any]:
    from torch.utils.data import BatchSampler, SequentialSampler

    ds = range(8)
    kwargs = dict(raw)
    if kwargs.get("sampler") is True:
        kwargs["sampler"] = SequentialSampler(ds)
    if kwargs.get("batch_sampler") is True:
        kwargs["batch_sampler"] = BatchSampler(SequentialSampler(ds), 2, False)
    return kwargs


def _fix_kwargs(raw: Dict[str, Any]) -> Dict[str, Any]:
    """The safe fix: drop the keyword that conflicts."""
    kwargs = dict(raw)
    if kwargs.get("sampler") is not None and kwargs.get("shuffle"):
        kwargs.pop("shuffle")
    if not kwargs.get("num_workers"):
        for key in ("prefetch_factor", "persistent_workers"):
            kwargs.pop(key, None)
    if kwargs.get("batch_sampler") is not None:
        for key in ("batch_size", "shuffle", "sampler", "drop_last"):
            kwargs.pop(key, None)
    return kwargs


def probe_dataloader_args(params: Dict[str, Any]) -> Dict[str, Any]:
    """Whether DataLoader(dataset, **literal kwargs) raises, before and after the fix."""
    from torch.utils.data import DataLoader

    raw = dict(params.get("kwargs") or {})
    fixed_raw = _fix_kwargs(raw)

    def build(kw: Dict[str, Any]) -> str:
        try:
            DataLoader(range(8), **_loader_kwargs(kw))
        except (ValueError, TypeError) as exc:
            return f"{type(exc).__name__}: {exc}"
        return ""

    baseline = build(fixed_raw if params.get("apply_fix") else raw)
    fixed = build(fixed_raw)
    return outcome(bool(baseline), 1.0 if baseline else 0.0, 1.0 if fixed else 0.0, "raises (1) / builds (0)",
                   ratio=None, detail=baseline or "the loader builds", kwargs=sorted(raw))


# -- GPU705 P-ANOMALY ----------------------------------------------------------------------------
def probe_anomaly_mode(params: Dict[str, Any]) -> Dict[str, Any]:
    """Whether a step's autograd nodes keep a stack, and the median fwd+bwd step time of a toy MLP
    with anomaly detection on vs off."""
    reps = max(3, int(params["reps"]))
    torch.manual_seed(0)
    model = _toy_mlp(128, 6, 10)
    x = torch.randn(32, 128)
    y = torch.randint(0, 10, (32,))

    def step() -> None:
        model.zero_grad(set_to_none=True)
        nn.functional.cross_entropy(model(x), y).backward()

    def timed(anomaly: bool) -> List[float]:
        out = []
        with torch.autograd.set_detect_anomaly(anomaly):
            for _ in range(3):  # warm-up
                step()
            for _ in range(reps):
                t0 = time.perf_counter()
                step()
                out.append((time.perf_counter() - t0) * 1e3)
        return out

    # Interleave the two variants so that machine noise hits both alike. Anomaly mode records
    # the Python stack of every op, so the loop runs on a fresh thread: a training script's
    # stack depth, not the caller's (a test runner's is far deeper).
    on: List[float] = []
    off: List[float] = []
    pattern = not params.get("apply_fix")

    def measure() -> None:
        for _ in range(3):
            on.extend(timed(pattern))
            off.extend(timed(False))

    worker = threading.Thread(target=measure)
    worker.start()
    worker.join()
    a, b = median_iqr(on), median_iqr(off)
    ratio = a["median"] / b["median"]
    # The verdict rests on the mechanism, which is deterministic: anomaly mode stores a Python
    # stack on every autograd node a step builds. The timing is the cost it reports; on a loaded
    # machine two identical loops can differ by 20%, so a ratio cannot decide the verdict.
    with torch.autograd.set_detect_anomaly(pattern):
        nodes = _graph_nodes(nn.functional.cross_entropy(model(x), y).grad_fn)
    stacked = sum(1 for node in nodes if "traceback_" in getattr(node, "metadata", {}))
    return outcome(stacked > 0, a["median"], b["median"], "ms/step", ratio=ratio,
                   saving_per_step=a["median"] - b["median"],
                   detail=f"a stack kept on {stacked} of {len(nodes)} autograd nodes per step; "
                          f"median of {a['n']} steps, IQR {a['iqr']:.3g} / {b['iqr']:.3g} ms",
                   baseline_iqr=a["iqr"], fixed_iqr=b["iqr"], nodes_with_stack=stacked)
