"""The rule registry: every Rule subclass of the family modules in this package, one instance
each, ordered by code. A new family module is picked up without being listed here."""

from __future__ import annotations

import importlib
import pkgutil
from typing import Dict, List, Optional

from advisor.rules.base import Rule


def _discover() -> List[Rule]:
    rules: Dict[str, Rule] = {}
    for module_info in pkgutil.iter_modules(__path__):
        if module_info.name == "base" or module_info.name.startswith("_"):
            continue
        module = importlib.import_module(f"{__name__}.{module_info.name}")
        for value in vars(module).values():
            if isinstance(value, type) and issubclass(value, Rule) and value is not Rule:
                code = getattr(value, "code", None)
                if code and value.__module__ == module.__name__:
                    if code in rules:
                        raise RuntimeError(f"two rules claim {code}: {rules[code]!r} and {value!r}")
                    rules[code] = value()
    return [rules[code] for code in sorted(rules)]


ALL_RULES: List[Rule] = _discover()
_BY_CODE: Dict[str, Rule] = {rule.code: rule for rule in ALL_RULES}


def get_rule(code: str) -> Optional[Rule]:
    return _BY_CODE.get(code.upper())
