"""The rule registry: every rule class, one instance each, ordered by code."""

from __future__ import annotations

from typing import Dict, List, Optional

from advisor.rules.base import Rule
from advisor.rules.distributed import SamplerWithoutSetEpoch, WrappedStateDictSaved
from advisor.rules.pipeline import DataLoaderWithoutPinnedMemory
from advisor.rules.precision import Fp16AutocastWithoutGradScaler
from advisor.rules.sync import (
    HostCopyInTrainingLoop,
    ItemInTrainingLoop,
    SynchronizeInTrainingLoop,
    TensorFormattedInTrainingLoop,
)

ALL_RULES: List[Rule] = sorted(
    (
        ItemInTrainingLoop(),
        TensorFormattedInTrainingLoop(),
        HostCopyInTrainingLoop(),
        SynchronizeInTrainingLoop(),
        DataLoaderWithoutPinnedMemory(),
        Fp16AutocastWithoutGradScaler(),
        SamplerWithoutSetEpoch(),
        WrappedStateDictSaved(),
    ),
    key=lambda rule: rule.code,
)
_BY_CODE: Dict[str, Rule] = {rule.code: rule for rule in ALL_RULES}


def get_rule(code: str) -> Optional[Rule]:
    return _BY_CODE.get(code.upper())
