"""Probes that need a CUDA device (catalog "Timing rules for the [G] probes").

- Each runs in its own child process (child.py), after `check_timing_conditions`: it refuses
  CUDA_LAUNCH_BLOCKING=1 and sets sync-debug mode 0.
- Warm-up first (cuBLAS handles, allocator, first-launch costs).
- Kernel and copy time: CUDA events around the op, `end.synchronize()`, `elapsed_time`.
- Pipeline costs (syncs, blocking copies, allocator churn): wall clock with
  `torch.cuda.synchronize()` before t0 and after the loop; events cannot see the host blocking.
- Median of repeated runs with the IQR; repetitions are capped so a probe stays under ~2 s.
- Bandwidth: working sets of hundreds of MB, beyond L2.

These are untested on the CPU-only development machine; `scripts/gpu-check` runs them.
"""

from __future__ import annotations

import os
import time
from typing import Any, Callable, Dict, List

import torch

from advisor.runtime.result import median_iqr, outcome, skipped


class TimingRefused(Exception):
    """The process is set up so that timings would be meaningless."""


def check_timing_conditions() -> None:
    if os.environ.get("CUDA_LAUNCH_BLOCKING", "0") not in ("", "0"):
        raise TimingRefused("CUDA_LAUNCH_BLOCKING=1 serialises every launch")
    if not torch.cuda.is_available():
        raise TimingRefused("no CUDA device")
    torch.cuda.set_sync_debug_mode(0)


def _wall_ms(fn: Callable[[], None], reps: int, warmup: int = 3) -> Dict[str, float]:
    """Median/IQR wall time of fn(), synchronised before t0 and after fn."""
    for _ in range(warmup):
        fn()
    torch.cuda.synchronize()
    samples: List[float] = []
    for _ in range(reps):
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        fn()
        torch.cuda.synchronize()
        samples.append((time.perf_counter() - t0) * 1e3)
    return median_iqr(samples)


def _event_ms(fn: Callable[[], None], reps: int, warmup: int = 3) -> Dict[str, float]:
    """Median/IQR device time of fn() measured with CUDA events."""
    for _ in range(warmup):
        fn()
    torch.cuda.synchronize()
    samples: List[float] = []
    for _ in range(reps):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        fn()
        end.record()
        end.synchronize()
        samples.append(start.elapsed_time(end))
    return median_iqr(samples)


def _guarded(probe: Callable[[Dict[str, Any]], Dict[str, Any]]) -> Callable[[Dict[str, Any]], Dict[str, Any]]:
    def run(params: Dict[str, Any]) -> Dict[str, Any]:
        try:
            check_timing_conditions()
        except TimingRefused as exc:
            return skipped(str(exc))
        return probe(params)

    run.__name__ = probe.__name__
    run.__doc__ = probe.__doc__
    return run


# -- GPU101-105 P-SYNC ---------------------------------------------------------------------------
@_guarded
def probe_sync(params: Dict[str, Any]) -> Dict[str, Any]:
    """50 iterations x 20 pointwise kernels on 1M elements, with vs without one sync per step.

    Cost per sync = (wall with syncs - wall without) / iterations, wall clock with
    torch.cuda.synchronize() around the loop.
    """
    variant = params["variant"]
    iters, kernels, reps = int(params["iterations"]), int(params["kernels"]), int(params["reps"])
    x = torch.randn(int(params["numel"]), device="cuda")
    sink: List[Any] = []

    def sync_once(t: torch.Tensor) -> None:
        if variant == "item":
            sink.append(t[0].item())
        elif variant == "cpu":
            sink.append(t[:16].cpu())
        elif variant == "nonzero":
            sink.append(torch.nonzero(t[:1024] > 0))
        else:
            torch.cuda.synchronize()

    def loop(with_sync: bool) -> Callable[[], None]:
        def run() -> None:
            t = x
            for _ in range(iters):
                for _ in range(kernels):
                    t = t * 1.0001 + 0.0001
                if with_sync:
                    sync_once(t)
            sink.clear()
        return run

    pattern = not params.get("apply_fix")
    slow, fast = _wall_ms(loop(pattern), reps), _wall_ms(loop(False), reps)
    per_step_slow, per_step_fast = slow["median"] / iters, fast["median"] / iters
    saving = per_step_slow - per_step_fast
    # Confirmed when the sync costs more than the run-to-run spread and at least 2% of the step.
    noise = (slow["iqr"] + fast["iqr"]) / iters
    confirmed = saving > noise and saving > 0.02 * per_step_fast
    return outcome(confirmed, per_step_slow, per_step_fast, "ms/step", saving_per_step=saving,
                   detail=f"{variant} once per step of {kernels} kernels on {x.numel()} elements; "
                   f"{saving * 1e3:.3g} us per sync ({100 * saving / per_step_slow:.3g}% of the step)",
                   baseline_iqr=slow["iqr"] / iters, fixed_iqr=fast["iqr"] / iters)


# -- GPU201/203 P-H2D ----------------------------------------------------------------------------
def _batch(params: Dict[str, Any], pinned: bool) -> torch.Tensor:
    shape = [int(params["batch_size"])] + [int(d) for d in params["shape"]]
    return torch.empty(shape, dtype=getattr(torch, params["dtype"]), pin_memory=pinned).normal_()


@_guarded
def probe_h2d_pinned(params: Dict[str, Any]) -> Dict[str, Any]:
    """Copy one batch to the GPU from pageable vs pinned memory: event ms, GB/s, host-blocked ms."""
    reps = int(params["reps"])
    pageable = _batch(params, pinned=bool(params.get("apply_fix")))
    pinned = _batch(params, pinned=True)
    dst = torch.empty_like(pinned, device="cuda")
    gb = pinned.numel() * pinned.element_size() / 1e9

    def copy_from(src: torch.Tensor) -> Callable[[], None]:
        # non_blocking, as the fixed loop would do; from pageable memory it blocks anyway
        return lambda: dst.copy_(src, non_blocking=True)

    dev_slow, dev_fast = _event_ms(copy_from(pageable), reps), _event_ms(copy_from(pinned), reps)
    host_slow, host_fast = _host_blocked_ms(copy_from(pageable), reps), _host_blocked_ms(copy_from(pinned), reps)
    saving = dev_slow["median"] - dev_fast["median"]
    confirmed = saving > dev_slow["iqr"] + dev_fast["iqr"] and dev_slow["median"] > 1.05 * dev_fast["median"]
    return outcome(confirmed, dev_slow["median"], dev_fast["median"], "ms/batch copy", saving_per_step=saving,
                   detail=f"{gb * 1e3:.4g} MB batch: {gb / dev_slow['median'] * 1e3:.3g} GB/s pageable vs "
                   f"{gb / dev_fast['median'] * 1e3:.3g} GB/s pinned; host blocked {host_slow['median']:.3g} vs "
                   f"{host_fast['median']:.3g} ms",
                   host_blocked_ms=host_slow["median"], host_blocked_fixed_ms=host_fast["median"],
                   baseline_iqr=dev_slow["iqr"], fixed_iqr=dev_fast["iqr"])


def _host_blocked_ms(fn: Callable[[], None], reps: int) -> Dict[str, float]:
    """How long the host is held by fn() itself (perf_counter around the call, no sync inside)."""
    fn()
    torch.cuda.synchronize()
    samples: List[float] = []
    for _ in range(reps):
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        fn()
        samples.append((time.perf_counter() - t0) * 1e3)
        torch.cuda.synchronize()
    return median_iqr(samples)


@_guarded
def probe_h2d_blocking(params: Dict[str, Any]) -> Dict[str, Any]:
    """Host time held by a pinned-batch copy with non_blocking=False vs True.

    The saving is the time the host could have spent queueing the next kernels while the DMA runs.
    """
    reps = int(params["reps"])
    src = _batch(params, pinned=True)
    dst = torch.empty_like(src, device="cuda")
    pattern_blocking = not params.get("apply_fix")
    slow = _host_blocked_ms(lambda: dst.copy_(src, non_blocking=not pattern_blocking), reps)
    fast = _host_blocked_ms(lambda: dst.copy_(src, non_blocking=True), reps)
    saving = slow["median"] - fast["median"]
    confirmed = saving > slow["iqr"] + fast["iqr"] and slow["median"] > 2 * fast["median"]
    return outcome(confirmed, slow["median"], fast["median"], "ms host blocked/batch", saving_per_step=saving,
                   detail=f"{src.numel() * src.element_size() / 1e6:.4g} MB pinned batch",
                   baseline_iqr=slow["iqr"], fixed_iqr=fast["iqr"])


# -- GPU305 P-GEMM -------------------------------------------------------------------------------
@_guarded
def probe_gemm_precision(params: Dict[str, Any]) -> Dict[str, Any]:
    """fp32 GEMM of size n with matmul precision 'highest' vs 'high' (TF32), CUDA events."""
    n, reps = int(params["size"]), int(params["reps"])
    a, b = torch.randn(n, n, device="cuda"), torch.randn(n, n, device="cuda")
    previous = torch.get_float32_matmul_precision()
    try:
        torch.set_float32_matmul_precision("high" if params.get("apply_fix") else "highest")
        slow = _event_ms(lambda: torch.mm(a, b), reps)
        torch.set_float32_matmul_precision("high")
        fast = _event_ms(lambda: torch.mm(a, b), reps)
    finally:
        torch.set_float32_matmul_precision(previous)
    tflops = 2 * n ** 3 / 1e9
    confirmed = slow["median"] > 1.2 * fast["median"]
    return outcome(confirmed, slow["median"], fast["median"], "ms/GEMM", saving_per_step=None,
                   detail=f"{n}x{n}x{n}: {tflops / slow['median']:.3g} vs {tflops / fast['median']:.3g} TFLOP/s "
                   "(saving per step depends on the model's matmul share)",
                   baseline_iqr=slow["iqr"], fixed_iqr=fast["iqr"])


# -- GPU403 P-ALLOC ------------------------------------------------------------------------------
@_guarded
def probe_empty_cache(params: Dict[str, Any]) -> Dict[str, Any]:
    """Median step time of allocating activation-sized tensors, with vs without empty_cache()."""
    numel, count = int(params["numel"]), int(params["tensors"])
    iters, reps = int(params["iterations"]), int(params["reps"])

    def loop(empty: bool) -> Callable[[], None]:
        def run() -> None:
            for _ in range(iters):
                acts = [torch.empty(numel, device="cuda").fill_(1.0) for _ in range(count)]
                total = sum(t.sum() for t in acts)
                del acts, total
                if empty:
                    torch.cuda.empty_cache()
        return run

    slow = _wall_ms(loop(not params.get("apply_fix")), reps)
    fast = _wall_ms(loop(False), reps)
    per_slow, per_fast = slow["median"] / iters, fast["median"] / iters
    saving = per_slow - per_fast
    confirmed = saving > (slow["iqr"] + fast["iqr"]) / iters and per_slow > 1.05 * per_fast
    return outcome(confirmed, per_slow, per_fast, "ms/step", saving_per_step=saving,
                   detail=f"{count} x {numel * 4 / 1e6:.3g} MB activations per step",
                   baseline_iqr=slow["iqr"] / iters, fixed_iqr=fast["iqr"] / iters)


# -- GPU401 zero_grad ----------------------------------------------------------------------------
@_guarded
def probe_zero_grad(params: Dict[str, Any]) -> Dict[str, Any]:
    """zero_grad + forward/backward step time with set_to_none=False vs True."""
    layers, width = int(params["layers"]), int(params["width"])
    iters, reps = int(params["iterations"]), int(params["reps"])
    model = torch.nn.Sequential(*[torch.nn.Linear(width, width) for _ in range(layers)]).cuda()
    x = torch.randn(int(params["batch_size"]), width, device="cuda")

    def loop(set_to_none: bool) -> Callable[[], None]:
        def run() -> None:
            for _ in range(iters):
                model.zero_grad(set_to_none=set_to_none)
                model(x).sum().backward()
        return run

    slow = _wall_ms(loop(bool(params.get("apply_fix"))), reps)
    fast = _wall_ms(loop(True), reps)
    per_slow, per_fast = slow["median"] / iters, fast["median"] / iters
    saving = per_slow - per_fast
    confirmed = saving > (slow["iqr"] + fast["iqr"]) / iters and per_slow > 1.01 * per_fast
    params_count = sum(p.numel() for p in model.parameters())
    return outcome(confirmed, per_slow, per_fast, "ms/step", saving_per_step=saving,
                   detail=f"{params_count / 1e6:.3g}M parameters; memset of every .grad vs none",
                   baseline_iqr=slow["iqr"] / iters, fixed_iqr=fast["iqr"] / iters)
