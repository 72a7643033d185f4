"""Probes keyed by rule code.

A probe is a short synthetic experiment (under 2 s on a GPU) that reproduces a finding's
pattern and its fixed form. Its function takes one dict of parameters (defaults below,
overridden by what the static analysis knows about the site, see site.py) and returns
result.outcome(...). Every probe also accepts `apply_fix: true`, which makes the pattern
under test the fixed form, so that a correct probe then reports `not confirmed`.

Documented defaults (used when the site gives no literal):
- batch_size 64, input shape 3x224x224 float32 (P-H2D)
- GEMM size 4096 (P-GEMM), 1M-element tensors and 20 pointwise kernels per step (P-SYNC)
- accumulation steps 4 (GPU406), dataset of 64 samples over 2 replicas (P-EPOCH)
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, Mapping, Optional


@dataclass(frozen=True)
class Probe:
    code: str
    probe: str  # the catalog's probe design, e.g. "P-SYNC"
    needs_cuda: bool
    target: str  # "module:function", imported only where the probe runs
    summary: str
    defaults: Mapping[str, Any] = field(default_factory=dict)

    def function(self) -> Callable[[Dict[str, Any]], Dict[str, Any]]:
        module, _, name = self.target.partition(":")
        return getattr(importlib.import_module(module), name)

    def params(self, site: Optional[Mapping[str, Any]] = None) -> Dict[str, Any]:
        """Defaults overridden by the site's known values (only keys the probe uses)."""
        out = dict(self.defaults)
        for key, value in (site or {}).items():
            if key in out or key == "apply_fix":
                out[key] = value
        return out


_CPU = "advisor.runtime.probes_cpu:"
_CUDA = "advisor.runtime.probes_cuda:"
_SYNC_DEFAULTS = {"numel": 1 << 20, "kernels": 20, "iterations": 50, "reps": 5}
_H2D_DEFAULTS = {"batch_size": 64, "shape": [3, 224, 224], "dtype": "float32", "reps": 10}

PROBES: Dict[str, Probe] = {p.code: p for p in (
    # -- CPU probes: run anywhere and confirm correctness findings outright --------------------
    Probe("GPU501", "P-EPOCH", False, _CPU + "probe_sampler_epoch",
          "DistributedSampler order of epoch 0 vs epoch 1, without and with set_epoch",
          {"dataset_size": 64, "num_replicas": 2, "apply_fix": False}),
    Probe("GPU503", "P-PREFIX", False, _CPU + "probe_module_prefix",
          "state_dict of a DataParallel-wrapped model loaded into the plain model",
          {"apply_fix": False}),
    Probe("GPU301", "P-UNDERFLOW", False, _CPU + "probe_fp16_underflow",
          "share of a toy MLP's gradients lost in fp16 at scale 1 vs 2^16",
          {"dtype": "float16", "batch_size": 64, "apply_fix": False}),
    Probe("GPU402", "P-GRAPH", False, _CPU + "probe_graph_retained",
          "iteration graphs kept alive by `total += loss` over 20 steps vs `loss.detach()`",
          {"iterations": 20, "apply_fix": False}),
    Probe("GPU406", "P-ACCUM", False, _CPU + "probe_accumulation_scale",
          "gradient norm over k accumulated micro-batches, loss not divided vs divided by k",
          {"accum_steps": 4, "apply_fix": False}),
    Probe("GPU205", "P-LOADER-ARGS", False, _CPU + "probe_dataloader_args",
          "construct the DataLoader with the site's literal arguments",
          {"kwargs": {"shuffle": True, "sampler": True}, "apply_fix": False}),
    Probe("GPU705", "P-ANOMALY", False, _CPU + "probe_anomaly_mode",
          "autograd nodes that keep a Python stack, and toy fwd+bwd step time with anomaly "
          "detection on vs off (median of repeats)",
          {"reps": 15, "apply_fix": False}),
    # -- CUDA probes ---------------------------------------------------------------------------
    *(Probe(code, "P-SYNC", True, _CUDA + "probe_sync",
            f"wall time per step of 20 pointwise kernels with vs without a {variant} per step",
            dict(_SYNC_DEFAULTS, variant=variant, apply_fix=False))
      for code, variant in (("GPU101", "item"), ("GPU102", "item"), ("GPU103", "cpu"),
                            ("GPU104", "nonzero"), ("GPU105", "synchronize"))),
    Probe("GPU201", "P-H2D", True, _CUDA + "probe_h2d_pinned",
          "host-to-device copy of one batch from pageable vs pinned memory",
          dict(_H2D_DEFAULTS, apply_fix=False)),
    Probe("GPU203", "P-H2D", True, _CUDA + "probe_h2d_blocking",
          "host time blocked by a pinned copy with non_blocking=False vs True",
          dict(_H2D_DEFAULTS, apply_fix=False)),
    Probe("GPU305", "P-GEMM", True, _CUDA + "probe_gemm_precision",
          "fp32 GEMM with matmul precision 'highest' vs 'high' (TF32)",
          {"size": 4096, "reps": 10, "apply_fix": False}),
    Probe("GPU403", "P-ALLOC", True, _CUDA + "probe_empty_cache",
          "step of activation-sized allocations with vs without torch.cuda.empty_cache()",
          {"numel": 16 << 20, "tensors": 8, "iterations": 20, "reps": 5, "apply_fix": False}),
    Probe("GPU401", "P-ZERO-GRAD", True, _CUDA + "probe_zero_grad",
          "zero_grad + backward with set_to_none=False vs True",
          {"layers": 8, "width": 2048, "batch_size": 64, "iterations": 20, "reps": 5, "apply_fix": False}),
)}


def get_probe(code: str) -> Optional[Probe]:
    return PROBES.get(code)
