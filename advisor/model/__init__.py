"""The per-file model that every rule queries (built in one walk over the syntax tree)."""

from advisor.model.facts import CallSite, Context, FunctionInfo, LoopInfo
from advisor.model.file_model import FileModel, Heat

__all__ = ["CallSite", "Context", "FileModel", "FunctionInfo", "Heat", "LoopInfo"]
