"""What decides each file's configuration: its nearest `[tool.advisor]`, then the editor's
settings (initializationOptions or workspace/didChangeConfiguration) on top.

Editor settings, all optional (camelCase, as editors write them):

    run          "onType" (default) or "onSave"
    debounceMs   delay after the last keystroke before a push client gets diagnostics (default 100)
    showInfo     true/false: show info-level findings (default: the project's setting)
    select       list of codes or prefixes, replacing the project's `select`
    ignore       list of codes or prefixes, replacing the project's `ignore`
    docsUrl      base URL of the rule documentation for diagnostic links
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Dict, List, Optional, Tuple

from advisor.config import Config, ConfigError, ConfigFinder, parse_codes_option

log = logging.getLogger("advisor.lsp")

RUN_ON_TYPE, RUN_ON_SAVE = "onType", "onSave"


@dataclass(frozen=True)
class Settings:
    run: str = RUN_ON_TYPE
    debounce_ms: int = 100
    show_info: Optional[bool] = None
    select: Optional[Tuple[str, ...]] = None
    ignore: Optional[Tuple[str, ...]] = None
    docs_url: Optional[str] = None


def parse_settings(raw: Any, base: Settings = Settings()) -> Tuple[Settings, List[str]]:
    """Settings from the editor's JSON; returns them with one message per value refused, so
    that one typo does not throw away the rest."""
    errors: List[str] = []
    if isinstance(raw, dict) and isinstance(raw.get("advisor"), dict):
        raw = raw["advisor"]  # {"advisor": {...}}, as didChangeConfiguration usually sends it
    if not isinstance(raw, dict):
        return base, errors
    settings = base
    if "run" in raw:
        if raw["run"] in (RUN_ON_TYPE, RUN_ON_SAVE):
            settings = replace(settings, run=raw["run"])
        else:
            errors.append(f"run: expected \"onType\" or \"onSave\", got {raw['run']!r}")
    if "debounceMs" in raw:
        value = raw["debounceMs"]
        if isinstance(value, (int, float)) and not isinstance(value, bool) and 0 <= value <= 10_000:
            settings = replace(settings, debounce_ms=int(value))
        else:
            errors.append(f"debounceMs: expected milliseconds between 0 and 10000, got {value!r}")
    if "showInfo" in raw:
        value = raw["showInfo"]
        if value is None or isinstance(value, bool):
            settings = replace(settings, show_info=value)
        else:
            errors.append(f"showInfo: expected true or false, got {value!r}")
    for key in ("select", "ignore"):
        if key not in raw:
            continue
        value = raw[key]
        if value is None:
            settings = replace(settings, **{key: None})
            continue
        if isinstance(value, str):
            value = [value]
        try:
            if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
                raise ConfigError(f"expected a list of rule codes, got {value!r}")
            codes = tuple(code for v in value for code in parse_codes_option(v))
            settings = replace(settings, **{key: codes})
        except ConfigError as exc:
            errors.append(f"{key}: {exc}")
    if "docsUrl" in raw:
        value = raw["docsUrl"]
        if value is None or isinstance(value, str):
            settings = replace(settings, docs_url=value or None)
        else:
            errors.append(f"docsUrl: expected a URL, got {value!r}")
    return settings, errors


class ConfigResolver:
    """The Config for each file: nearest pyproject.toml (so each folder of a multi-root
    workspace gets its own), with the editor's settings on top. Reloaded on demand."""

    def __init__(self) -> None:
        self._finder = ConfigFinder()
        self._mtimes: Dict[Path, float] = {}
        self.generation = 0  # bumped on every reload, so cached results know they are stale

    def reload(self) -> None:
        self._finder = ConfigFinder()
        self._mtimes.clear()
        self.generation += 1

    def for_path(self, path: Optional[Path], settings: Settings) -> Tuple[Config, Optional[str]]:
        """(config, error message or None). A broken pyproject.toml falls back to the defaults
        so that the editor keeps working while the user fixes it."""
        error = None
        if path is None:
            config = Config()
        else:
            try:
                config = self._finder.for_path(path)
                if self._stale(config):
                    self.reload()
                    config = self._finder.for_path(path)
                    self._stale(config)  # remember the new modification time
            except ConfigError as exc:
                error = str(exc)
                config = Config()
        overrides = {"select": settings.select, "ignore": settings.ignore, "show_info": settings.show_info}
        return config.with_overrides(**overrides), error

    def _stale(self, config: Config) -> bool:
        # A pyproject.toml edited outside the editor, for clients that do not watch files.
        source = config.source
        if source is None:
            return False
        try:
            mtime = source.stat().st_mtime_ns
        except OSError:
            mtime = -1
        known = self._mtimes.setdefault(source, mtime)
        if known != mtime:
            log.info("%s changed on disk; reloading configuration", source)
            return True
        return False
