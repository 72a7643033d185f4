"""Which attention a copied Hugging Face model runs.

Model files copied from `transformers` branch on the attention implementation they were
loaded with: `if self.config._attn_implementation == "flash_attention_2":`, or the flag
`self._use_flash_attention_2` their `__init__` derives from it. `from_pretrained` picks SDPA or
eager attention unless asked for FlashAttention-2 (`attn_implementation="flash_attention_2"`,
`use_flash_attention_2=True`, a launch option naming it). Where no text of the project asks
for it, the FlashAttention arm never runs (`guards.py` takes it as a test that never holds).
"""

from __future__ import annotations

import libcst as cst

from advisor.model.names import dotted_name

_FLASH = "flash_attention_2"
_FLASH_FLAGS = frozenset({"_use_flash_attention_2", "_flash_attn_2_enabled"})


def flash_attention_test(test: cst.BaseExpression) -> bool:
    """`<x>._attn_implementation == "flash_attention_2"` (either side) or a flag derived from it."""
    if type(test) is cst.Attribute:
        return test.attr.value in _FLASH_FLAGS
    if type(test) is not cst.Comparison or len(test.comparisons) != 1:
        return False
    if type(test.comparisons[0].operator) is not cst.Equal:
        return False
    sides = (test.left, test.comparisons[0].comparator)
    names = [dotted_name(side) or "" for side in sides]
    strings = [side.evaluated_value for side in sides if type(side) is cst.SimpleString]
    return _FLASH in strings and any(name.endswith("_attn_implementation") for name in names)


def flash_attention_unasked(model, test: cst.BaseExpression) -> bool:
    """``test`` holds only with FlashAttention-2, which no text of the project asks for."""
    project = getattr(model, "project", None)
    path = getattr(model, "real_path", None)
    return (project is not None and path is not None and flash_attention_test(test)
            and not project.asks_for_flash_attention(path))
