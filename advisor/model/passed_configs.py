"""The values the config files a script's documented runs pass give a setting.

`python src/pretrain/run_pretrain_sparse.py --config config_release/pretrain_alpro.json`: the
script reads its settings from the JSON file it is given, so `cfg.gradient_accumulation_steps`
is what that file says, on the runs the project ships. When every command line for the script
passes a config file (through `--config`, `--cfg`, `--config-file`, `--config_path`), each file
can be read as JSON, and each gives the key (at any depth), the values they give are all the
values the setting takes on those runs. Otherwise nothing is known.

The launch texts and config files read are among what a cached result is checked against
(`ProjectView.checked_against`).
"""

from __future__ import annotations

import json
import os
from typing import List, Optional

from advisor.model.launched_options import documented_values

CONFIG_FLAGS = ("--config", "--cfg", "--config_file", "--config-file", "--config_path", "--config-path")
_MISSING = object()


def passed_config_values(model, key: str) -> Optional[List[object]]:
    """What the config files passed to ``model``'s script give ``key``; None when unknown."""
    known = model.shared("passed-config-values", lambda m: {})
    if key not in known:
        known[key] = _values(model, key)
    return known[key]


def _values(model, key: str) -> Optional[List[object]]:
    project = model.project
    if project is None or model.real_path is None:
        return None
    passed = documented_values(model, model.real_path, CONFIG_FLAGS)
    if not passed:
        return None
    found: List[object] = []
    for value in passed:
        settings = _read(project, value.strip("'\""))
        if settings is None:
            return None
        given = _lookup(settings, key)
        if given is _MISSING:
            return None
        found.append(given)
    return found


def _read(project, value: str):
    if not value.endswith(".json"):
        return None
    path = os.path.normpath(os.path.join(project.layout.root, value))
    if not path.startswith(project.layout.root + os.sep):
        return None
    text = project.text_of(path)
    if not text:
        return None
    try:
        return json.loads(text)
    except (ValueError, RecursionError):  # not JSON, or nested past what the parser takes
        return None


def _lookup(settings, key: str, depth: int = 0):
    if not isinstance(settings, dict) or depth > 4:
        return _MISSING
    if key in settings:
        return settings[key]
    for value in settings.values():
        found = _lookup(value, key, depth + 1)
        if found is not _MISSING:
            return found
    return _MISSING
