"""The rule registry: one instance of every Rule subclass found in the family packages
(`advisor/rules/<family>/<rule_name>.py`), ordered by code. A new rule module is picked up
without being listed here; a module may define at most one rule."""

from __future__ import annotations

import importlib
import pkgutil
from typing import Dict, List, Optional

from advisor.rules.base import Rule


def _discover() -> List[Rule]:
    rules: Dict[str, Rule] = {}
    for family in pkgutil.iter_modules(__path__):
        if not family.ispkg or family.name.startswith("_"):
            continue
        package = importlib.import_module(f"{__name__}.{family.name}")
        for module_info in pkgutil.iter_modules(package.__path__):
            module = importlib.import_module(f"{package.__name__}.{module_info.name}")
            found = [
                value
                for value in vars(module).values()
                if isinstance(value, type)
                and issubclass(value, Rule)
                and value.__module__ == module.__name__
                and getattr(value, "code", None)
            ]
            if len(found) > 1:
                raise RuntimeError(f"{module.__name__} defines {len(found)} rules; one module holds one rule")
            for value in found:
                if value.code in rules:
                    raise RuntimeError(f"two rules claim {value.code}: {rules[value.code]!r} and {value!r}")
                rules[value.code] = value()
    return [rules[code] for code in sorted(rules)]


ALL_RULES: List[Rule] = _discover()
_BY_CODE: Dict[str, Rule] = {rule.code: rule for rule in ALL_RULES}


def get_rule(code: str) -> Optional[Rule]:
    return _BY_CODE.get(code.upper())
