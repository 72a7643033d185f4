"""The device the probes run on: GPU name, torch and CUDA versions ("cpu" without CUDA)."""

from __future__ import annotations

from typing import Dict, Optional


def device_facts() -> Dict[str, Optional[str]]:
    from advisor.runtime.torch_import import import_torch

    torch = import_torch()
    facts: Dict[str, Optional[str]] = {"name": "cpu", "torch": torch.__version__, "cuda": torch.version.cuda}
    try:
        if torch.cuda.is_available():
            facts["name"] = torch.cuda.get_device_name(0)
        else:
            facts["cuda"] = None
    except Exception:  # noqa: BLE001 - a broken driver means: no CUDA device
        facts["cuda"] = None
    return facts


def has_cuda(facts: Dict[str, Optional[str]]) -> bool:
    return facts.get("name") not in (None, "cpu")
