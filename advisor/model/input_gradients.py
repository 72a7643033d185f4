"""Model calls whose own code asks autograd for gradients of its inputs: the normals of a signed
distance field (`torch.autograd.grad(sdf, x)` in the network's `gradient` method), a gradient
penalty inside the forward. Autograd must stay on around such a call, even in evaluation, so
an inference rule that would wrap it in `no_grad` leaves it alone (GPU601)."""

from __future__ import annotations

from typing import Dict, List, Set, Tuple

from advisor.model.facts import CallSite

_INPUT_GRADIENTS = frozenset({
    "torch.autograd.grad", "torch.autograd.functional.jacobian", "torch.autograd.functional.vjp",
    "torch.autograd.functional.hessian", "torch.func.grad", "torch.func.jacrev",
})
_DEPTH = 4
_MOST = 200  # functions looked at per call, so that a large model costs a bounded walk


def asks_input_gradients(model, site: CallSite) -> bool:
    """A function the call runs, or one those run (a few calls down), calls
    `torch.autograd.grad` or `requires_grad_()`."""
    targets = model.calls.targets(site)
    if not targets:
        return False
    # Keyed by what the call runs: the many calls of one model in a file walk its code once.
    memo: Dict[Tuple[int, ...], bool] = model.shared("input-gradient-calls", lambda m: {})
    key = tuple(id(info) for _, info in targets)
    known = memo.get(key)
    if known is None:
        known = memo[key] = _walk(targets)
    return known


def _walk(targets) -> bool:
    frontier: List[Tuple[object, object]] = list(targets)
    seen: Set[int] = set()
    for _ in range(_DEPTH):
        following: List[Tuple[object, object]] = []
        for owner, info in frontier:
            if id(info) in seen or len(seen) >= _MOST:
                continue
            seen.add(id(info))
            for inner in info.sites:
                if inner.qualname in _INPUT_GRADIENTS or inner.method == "requires_grad_":
                    return True
                following.extend(owner.calls.targets(inner))
        frontier = following
    return False
