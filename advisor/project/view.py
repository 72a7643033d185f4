"""The project around a checked file: its other modules, read on demand, so that the value model
and the heat of functions can cross file boundaries.

A `ProjectView` parses the project's files lazily (at most once each; the file being checked is
registered as it is), resolves the names a file imports from the project to the functions,
classes and module-level values of the file that defines them, and finds the project files that
import a given module (its importers: a helper is hot because of its callers). Every file it
consulted for a check is recorded, so that a cached result can be checked against them.

The views of one line of work (a command-line process, a language server's worker thread) are
held by a `Views`. It may also hold texts that stand in for files on disk: the language server
gives it the editor's open buffers, so that a neighbour is read as the user sees it, saved or
not. When such a text changes, every view forgets what it read from the old one (the model,
its import lines, and every answer built on them).
"""

from __future__ import annotations

import json

import os
import re
from typing import Callable, Dict, FrozenSet, List, Optional, Set, Tuple

import libcst as cst

from advisor.limits import FileTooLarge, read_regular
from advisor.model.broken_imports import missing_package_modules, missing_relative_modules
from advisor.model.names import dotted_name
from advisor.model.prose import without_prose
from advisor.project.layout import Layout, module_stem, project_root, vendored
from advisor.project.path_additions import path_additions
from advisor.project.torch_pins import oldest_minimum, oldest_pin, pin_files
from advisor.project.reachability import (copy_used_by_project, package_training_scripts, undocumented_script,
                                          untrained_package, unreached)
from advisor.model.vocabulary import CONFIG_TARGET_MARKS, LIGHTNING_TRAINER_TEXT
from advisor.model.registered_classes import CONFIG_FOLDER, classes_asked_for, names_in_code
from advisor.model.passed_configs import CONFIG_FLAGS

_TEXT_LIMIT = 4 << 20

# Text that marks a module building yacs-style config nodes: their top-level defaults are read
# wherever a setting is (advisor/model/config_nodes.py), so every check depends on them.
CONFIG_NODE_MARK = "CfgNode("
PROJECT_NODE_MARK = "ConfigNode("  # a project's own subclass of it, by its usual name
ALIASED_NODE_MARK = "CfgNode as "  # `from yacs.config import CfgNode as CN`, then `_C = CN()`
NODE_MARKS = (CONFIG_NODE_MARK, PROJECT_NODE_MARK, ALIASED_NODE_MARK)
# Text that marks code loading classes by a dotted name a config file or the command line gives:
# in such a project a config the user writes may build any class (model/unbuilt_classes.py), so
# every check depends on these files.
DYNAMIC_MARKS = (
    "import_module(", "__import__(", "instantiate_from_config", "instantiate(", "LightningCLI",
    "get_obj_from_str", "locate(", "load_source(", "spec_from_file_location",
)
# Of those, `CONFIG_TARGET_MARKS` (model/vocabulary.py) are the loaders that build what a config
# file names by its dotted path (`target: sgm.models.diffusion.DiffusionEngine`, Hydra's
# `_target_:`, LightningCLI's `class_path:`): a class no config file of the project names, and
# no code, is not built by them.
_CONFIG_TARGETS = ("", "config")
# Text that marks a module with a Hugging Face checkpointing switch: whether a config file turns
# it on decides its findings (model/default_flags.py).
CHECKPOINTING_MARK = "gradient_checkpointing"
# A key read with a false default, or looked for on a config object: guards ask config files
# whether they set it.
# A settings object loaded from YAML, read as attributes (`cfg = OmegaConf.load(path)`).
_SETTINGS_LOAD = re.compile(r"\bOmegaConf\.|\byaml\.(?:safe_)?load\(")
_KEY_READS = re.compile(
    r"""\.get\(\s*['"]\w+['"]\s*,\s*(?:False|None|0)\s*\)"""
    r"""|hasattr\(\s*(?:self\.)?\w*(?:cfg|config|conf|opt|opts|args|hparams|params|settings|options)\b""",
    re.IGNORECASE)
# `cfg['BACKBONE']['USE_CHECKPOINT']`: a key of a settings dict loaded from a config file.
_SETTING_SUBSCRIPT = re.compile(r"""\[\s*['"][A-Z][A-Z0-9_]*['"]\s*\]""")
# Text that marks a Hydra script: its primary config file gives its settings.
HYDRA_MARK = "hydra"
# Lightning's training-data hook: a file defining one depends on the files that run a Trainer.
LIGHTNING_HOOK_MARK = "train_dataloader"
# A LightningModule's per-step hook: a file defining one depends on the files that fit one.
LIGHTNING_STEP_MARK = "training_step"
# The keys under which such configs name what to build.
_TARGET_KEYS = frozenset({"target", "_target_", "class_path"})
_CONFIG_SUFFIXES = (".yaml", ".yml", ".json", ".cfg", ".ini", ".toml", ".sh")
_CONFIG_TEXT_LIMIT = 1 << 20
# How a config file or a command line writes a setting that is off.
_FALSE_SETTINGS = frozenset({"False", "false", "None", "null", "~", "0", "0.0", "no", "off", "''", '""'})
# `import_module("network." + name)`, `import_module(f"datasets.{name}")`, `import_module('models.%s' % n)`:
# the package whose modules a call may load (group 1); `import_module("pkg.mod")`: that module
# (group 2). Any other argument may name any module.
_IMPORT_MODULE = re.compile(
    r"""(?:import_module|__import__)\(\s*(?:f?["']([A-Za-z_][\w.]*?)\.(?:\{|%s|["']\s*[+%])|["']([A-Za-z_][\w.]*)["']\s*[,)])?"""
)
# `import_module(f"zoedepth.trainers.{config.trainer}_trainer")`: the module's name ends with
# what follows the variable part (group 2), so `zoedepth.trainers.loss` is not among them.
_SUFFIXED = re.compile(r"""import_module\(\s*f["']([A-Za-z_][\w.]*?)\.\{[^{}"']*\}(\w+)["']\s*\)""")
_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
# A command line handing a script its config file (model/passed_configs.py).
_PASSES_CONFIG = re.compile(r"(?:%s)(?:=|[ \t]+)\S" % "|".join(re.escape(flag) for flag in CONFIG_FLAGS))
# `import_module(module_name)`, and the name's one binding in the text: what it names.
_NAMED_ARGUMENT = re.compile(r"import_module\(\s*([A-Za-z_]\w*)\s*\)")


def _holds(outer: str, folder: str) -> bool:
    """``folder`` is ``outer`` or inside it."""
    return folder == outer or folder.startswith(outer.rstrip(os.sep) + os.sep)


def _loaded_modules(text: str) -> List[Tuple[str, str]]:
    """(package prefix, module-name suffix) for each `import_module(...)` of a file's text:
    ("", "") when it may load any module."""
    out: List[Tuple[str, str]] = []
    for call in _IMPORT_MODULE.finditer(text):
        suffixed = _SUFFIXED.match(text, call.start())
        if suffixed is not None:
            out.append((suffixed.group(1), suffixed.group(2)))
            continue
        found = call.group(1) or call.group(2)
        if not found:
            named = _NAMED_ARGUMENT.match(text, call.start())
            if named is not None:
                # `module_name = f"zoedepth.models.{config.model}"` then `import_module(module_name)`
                bound = re.findall(r"(?m)^[ \t]*%s[ \t]*=[ \t]*(f?[\"'][^\n]*)$" % named.group(1), text)
                # Each binding says a package (`"models." + args.model_type` in one arm,
                # `"models." + "net"` in the other): the modules of those packages. A name bound
                # to anything else as well may load any module.
                every = [_loaded_modules("import_module(%s)" % b.rstrip()) for b in bound]
                if bound and len(bound) == len(re.findall(r"(?m)^[ \t]*%s[ \t]*=" % named.group(1), text)) \
                        and all(found and ("", "") not in found for found in every):
                    out.extend(loaded for found in every for loaded in found)
                    continue
        out.append((found or "", ""))
    return out

# How many importers of one module are read: a module imported by hundreds of files is a
# library's core, and the callers that make it hot are not to be found by reading them all.
MAX_IMPORTERS = 48


_FROM = re.compile(r"^[ \t]*from[ \t]+(\.*)([\w.]*)[ \t]+import[ \t]+(\([^)]*\)|[^\n]*)", re.MULTILINE)
_IMPORT = re.compile(r"^[ \t]*import[ \t]+([^\n]*)", re.MULTILINE)


def _import_lines(text: str) -> List[Tuple[int, str, List[str]]]:
    """(level, module, imported names) for each import statement, read from the text alone."""
    out: List[Tuple[int, str, List[str]]] = []
    for match in _FROM.finditer(text):
        # A trailing comment (`# noqa: F401`) is no part of the last name.
        listed = re.sub(r"#[^\n]*", "", match.group(3))
        names = [n.strip().split(" as ")[0].strip() for n in listed.strip("() \t\n").split(",")]
        out.append((len(match.group(1)), match.group(2), [n for n in names if n.isidentifier()]))
    for match in _IMPORT.finditer(text):
        for item in match.group(1).split("#")[0].split(","):
            module = item.strip().split(" as ")[0].strip()
            if module and all(p.isidentifier() for p in module.split(".")):
                out.append((0, module, []))
    return out


def _from_imports(text: str) -> List[Tuple[int, str, List[Tuple[str, str]]]]:
    """(level, module, [(imported name, local name)]) for each `from ... import` statement, read
    from the text alone (`from x import A as B` binds B)."""
    out: List[Tuple[int, str, List[Tuple[str, str]]]] = []
    for match in _FROM.finditer(text):
        listed = re.sub(r"#[^\n]*", "", match.group(3))
        pairs = []
        for item in listed.strip("() \t\n").split(","):
            original, _, local = (part.strip() for part in item.partition(" as "))
            local = local or original
            if original.isidentifier() and local.isidentifier():
                pairs.append((original, local))
        out.append((len(match.group(1)), match.group(2), pairs))
    return out


class Symbol:
    """A name of another project module: a function, a class, or a module itself."""

    __slots__ = ("model", "kind", "info", "name")

    def __init__(self, model, kind: str, info=None, name: str = "") -> None:
        self.model = model  # the FileModel of the module that defines it
        self.kind = kind  # "function", "class", "module" or "value"
        self.info = info  # FunctionInfo, ClassInfo, or None
        self.name = name  # the name inside that module ("BoxLoss", "Trainer.step", "device")


_LONG_WORD = re.compile(r"[A-Za-z_]\w{2,}")


# What asks a Hugging Face model for FlashAttention-2, and what marks a model copy that only
# tests which attention it was given (model/attention_backends.py).
_FLASH_REQUESTS = ("flash_attention_2", "attn_implementation", "use_flash_attn")
_FLASH_TESTERS = ("_attn_implementation ==", "_attn_implementation !=", "_supports_flash_attn_2",
                  "_flash_attn_2_enabled", "_use_flash_attention_2 =")
_PIN_KEY = "\0torch-pins"
_CLASS_PATHS_KEY = "\0config-class-paths"
# `pkg.module.ClassName` written in a config file (a word boundary before, a capital last part).
_CLASS_PATH = re.compile(r"(?<![\w.])((?:[A-Za-z_]\w*\.)+[A-Z]\w*)(?![\w.])")
_MOST_CLASS_PATHS = 256
_REQUIRED_KEY = "\0torch-minimum"


def _returns_own_instance(model, info) -> bool:
    """A top-level function of ``model`` some `return` of which hands back an instance of one of
    the module's classes, built there or bound to a name just before (`criterion =
    Criterion(...)`, `return criterion`)."""
    if info is None or info.class_name is not None:
        return False
    classes = model.facts.classes
    for site in info.return_sites:
        value = site.value
        if type(value) is cst.Name:
            reach = model.bindings.reaching(value.value, site.ctx, site.order)
            values = [a.value for a in reach.assignments if a.value is not None and a.index is None]
        else:
            values = [value]
        for found in values:
            if type(found) is cst.Call and dotted_name(found.func) in classes:
                return True
    return False


def _key(path: str) -> str:
    return os.path.normpath(os.path.abspath(path))


# How a view builds a neighbour's model: (path, text) -> FileModel or None (unreadable, not
# Python, refused); ``text`` is None when the file is to be read from disk.
Build = Callable[[str, Optional[str], Optional[Callable[[str], Optional[str]]]], Optional[object]]


# What training code writes: a backward pass, an optimizer's or a loss scaler's step, a library
# trainer (also a factory of one: Ignite's `create_supervised_trainer(...)`), a Keras-style `fit`,
# a Lightning step hook, or any call of a `train...` function or
# method (`trainer.train()`, mmdet's `train_detector(...)`, `model.train()`); not the definition of
# an `nn.Module.train` override, nor its `super().train(mode)`.
_TRAINS = re.compile(
    r"\.backward\(|autograd\.grad\(|[Tt]rainer\w*\(|\.fit\(|\btraining_step\b"
    r"|\w*(?:optim|opt|scaler)\w*(?:\[[^\]\n]*\])?\.step\(|(?<!def )(?<!\)\.)\btrain\w*\(")
# Beyond this many Python files and notebooks, a project is taken to train somewhere: whether none
# of them does is a question every module file's cached result would depend on.
_MAX_UNTRAINED_FILES = 400
# A class put in a registry (`@register_head`, `@MODELS.register_module()`): a framework's
# training scripts may build it from a config.
_REGISTERS = re.compile(r"^[ \t]*@[\w.]*register", re.M)


_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
# `getattr(vae, args.decoder + "_decode")`, `getattr(model, f"{mode}_step")`.
_MADE_ATTRIBUTE_NAME = re.compile(
    r"getattr\(\s*[\w.]+\s*,\s*(?:[fF]['\"]|['\"][^'\"\n]*['\"]\s*\+|[\w.\[\]'\"]+\s*\+\s*['\"])")


# A config file naming Lightning's Trainer as the class to build (Hydra's `_target_`, a
# LightningCLI-style `class_path`).
_LIGHTNING_TARGET = re.compile(
    r"(?:_target_|class_path)['\"]?\s*[:=]\s*['\"]?(?:pytorch_)?lightning(?:\.pytorch)?(?:\.trainer)*\.Trainer\b")


class ProjectView:
    def __init__(self, root: str, build: Build, stand_ins: Optional["Views"] = None) -> None:
        self.layout = Layout(root)
        self._build = build
        self._stand_ins = stand_ins  # texts that stand in for files on disk (an editor's buffers)
        self._models: Dict[str, Optional[object]] = {}
        self._texts: Dict[str, str] = {}
        self._importers: Dict[str, List[object]] = {}
        self._siblings: Dict[str, List[object]] = {}
        self._through_packages: Dict[str, List[object]] = {}
        self._symbols: Dict[Tuple[int, str], Optional[Symbol]] = {}
        self._index: Optional[Dict[str, Set[str]]] = None
        self._imported: Dict[str, List[str]] = {}
        self._loads: Dict[str, List[str]] = {}
        self._path_additions: Dict[str, Tuple[str, ...]] = {}
        self._all_additions: Optional[Tuple[str, ...]] = None
        self._found: Dict[str, List[str]] = {}
        self._trains_nowhere: Optional[bool] = None
        self._trainers_found: Optional[Tuple[str, ...]] = None
        # The oldest exact torch pin that applies to each folder, False for none.
        self._pinned: Dict[str, object] = {}
        self._pin_sources: Optional[Dict[Optional[str], Optional[Tuple[int, int]]]] = None  # pin of each source
        self._flash_requests: Optional[List[Tuple[str, Optional[str]]]] = None
        self._root_words: Optional[Set[str]] = None
        self._loaded: Optional[List[Tuple[str, str]]] = None
        self._config_words: Optional[Set[str]] = None
        self._config_sets: Dict[str, Tuple[str, ...]] = {}
        self._key_readers: Dict[str, bool] = {}
        self._settings_loaders: Dict[str, bool] = {}
        self._setting_sources: Optional[List[str]] = None  # config files and launch scripts
        self._dependencies: Dict[Tuple[str, int, int], Tuple[str, ...]] = {}
        self._roots: Optional[List[str]] = None
        self._launchers: Dict[str, List[str]] = {}
        self._inits: Optional[Dict[str, Set[str]]] = None  # package `__init__.py` -> importers under it
        self._unreached: Dict[str, Tuple[bool, Tuple[str, ...]]] = {}
        self._undocumented: Dict[str, bool] = {}
        self.module_roots: Dict[str, bool] = {}  # file -> a root of the import graph (reachability.py)
        self._word_files: Optional[Dict[str, List[str]]] = None  # word -> the texts that hold it
        self._code_words: Dict[str, FrozenSet[str]] = {}  # path -> the words of its code (prose blanked)
        self._made_names: Dict[str, bool] = {}  # path -> it fetches attributes by names it makes
        # Several rules ask for the same neighbourhood of a file; in a package whose
        # `__init__.py` thousands of files import, walking it afresh each time is quadratic.
        self._near_files: Dict[Tuple[str, str], FrozenSet[str]] = {}
        self._related: Dict[Tuple[str, int, Optional[str], bool], Tuple[str, ...]] = {}
        self._config_passing: Optional[bool] = None  # some launch text passes a JSON config file
        self._python_configs: Optional[List[str]] = None
        self.consulted: Set[str] = set()

    @classmethod
    def for_file(cls, path: str, build: Build) -> "ProjectView":
        return cls(project_root(path), build)

    def _stand_in(self, key: str) -> Optional[str]:
        return self._stand_ins.stand_in(key) if self._stand_ins is not None else None

    # -- models ----------------------------------------------------------------------------
    def register(self, path: str, model) -> None:
        """The file being checked: its own model stands for it in every cross-file answer."""
        key = _key(path)
        old = self._models.get(key)
        self._models[key] = model
        self._wire(model, key)
        if old is not None and old is not model:
            # Another version of the file was read before: every answer built on it is stale.
            self._reset()

    def attach(self, path: str, model) -> None:
        """A model of part of the file at ``path``: it reads the project through this view, while
        the file's own model (or its text) still stands for the file in every cross-file answer."""
        self._wire(model, _key(path))

    def _wire(self, model, key: str) -> None:
        model.project = self
        model.real_path = key

    def reexports_for(self, path: str) -> Callable[[str], Optional[str]]:
        """The re-export answer for names ``path`` imports (`reexported`), handed to the model
        builder so that every name it qualifies sees it."""
        key = _key(path)
        return lambda full: self.reexported(key, full)

    def reexported(self, importer: str, full: str) -> Optional[str]:
        """The library name a project module re-exports: `dataset.DataLoader` imported by
        ``importer``, where the project's `dataset.py` only says `from torch.utils.data import
        Dataset, DataLoader` (and defines no `DataLoader` of its own), is
        `torch.utils.data.DataLoader`. None for anything else."""
        module, _, name = full.rpartition(".")
        bare = module.lstrip(".")
        if not bare or not name.isidentifier():
            return None
        level = len(module) - len(bare)
        found = self.layout.relative_file(bare, level, importer) if level else self._find_module(bare, importer)
        if found is None:
            return None
        text = self._text(found) or ""
        if name not in text or re.search(r"^[ \t]*(?:class|def)[ \t]+%s\b|^[ \t]*%s[ \t]*=" % (name, name), text, re.M):
            return None
        key = "\0from-imports\0" + found  # read once per module, however many names are asked
        lines = self._found.get(key)
        if lines is None:
            lines = self._found[key] = _from_imports(text)
        hits = [(source, original) for line_level, source, pairs in lines
                for original, local in pairs if local == name and line_level == 0]
        if len(hits) != 1 or self._find_module(hits[0][0], found) is not None:
            return None  # bound twice (a fallback import), or from a module of the project
        return f"{hits[0][0]}.{hits[0][1]}"

    def known(self, path: str, text: str):
        """The model already built for this path from this same text, if any."""
        model = self._models.get(_key(path))
        return model if model is not None and getattr(model, "text", None) == text else None

    def _reset(self) -> None:
        models = {k: m for k, m in self._models.items() if m is not None}
        self._symbols.clear()
        self._found.clear()
        self._trains_nowhere = None
        self._trainers_found = None
        self._pinned = {}
        self._pin_sources = None
        self._flash_requests = None
        self._dependencies.clear()
        self._config_sets.clear()
        self._key_readers.clear()
        self._settings_loaders.clear()
        self._setting_sources = None
        self._loaded = None
        self._importers.clear()
        self._siblings.clear()
        self._through_packages.clear()
        self._inits = None
        self._unreached.clear()
        self._undocumented.clear()
        self.module_roots.clear()
        self._word_files = None
        self._code_words.clear()
        self._made_names.clear()
        self._near_files.clear()
        self._related.clear()
        self._config_passing = None
        self._python_configs = None
        for model in models.values():
            model.forget_answers()
            model.imports.forget_reexports()

    def changed(self, path: str) -> None:
        """The text of ``path`` changed (an editor's buffer, a write on disk): its model, its
        import lines and every answer that may have read them are dropped, and read again from
        the new text when next needed."""
        key = _key(path)
        self._models.pop(key, None)
        old_text = self._texts.pop(key, None)
        if "sys.path" in (old_text or "") or "sys.path" in (self._text(key) or ""):
            self.files_changed()  # an `_init_paths` helper moves where its importers' imports lead
            return
        old_targets = self._imported.pop(key, None)
        self._loads.pop(key, None)
        self._path_additions.pop(key, None)
        if self._index is not None:
            for target in old_targets or ():
                importers = self._index.get(target)
                if importers is not None:
                    importers.discard(key)
            if key.startswith(self.layout.root + os.sep) and key.endswith(".py"):
                for target in self._imports_of(key):
                    self._index.setdefault(target, set()).add(key)
        self._reset()

    def files_changed(self) -> None:
        """Files were created or deleted on disk: the file list, where imports lead and who
        imports whom are worked out again."""
        self.layout = Layout(self.layout.root)
        self._index = None
        self._imported.clear()
        self._loads.clear()
        self._path_additions.clear()
        self._all_additions = None
        self._models = {k: m for k, m in self._models.items() if m is not None}  # "absent" may no longer hold
        self._reset()

    def model(self, path: str):
        key = _key(path)
        if key not in self._models:
            self._models[key] = None  # while it builds: an import cycle reads it as absent
            try:
                model = self._build(key, self._stand_in(key), self.reexports_for(key))
            except BaseException:
                del self._models[key]  # stopped (a budget, a cancelled edit): not known absent
                raise
            if model is not None:
                self._wire(model, key)
            self._models[key] = model
        model = self._models[key]
        if model is not None:
            self.consulted.add(key)
        return model

    # -- names imported from the project ---------------------------------------------------
    def symbol(self, importer, qualname: str) -> Optional[Symbol]:
        """What an imported dotted name (`utils.accuracy`, `.losses.BoxLoss`) names in the
        project, or None (a library, or nothing the project defines)."""
        key = (id(importer), qualname)
        if key not in self._symbols:
            self._symbols[key] = None
            self._symbols[key] = self._resolve(importer, qualname, 0)
        return self._symbols[key]

    def _resolve(self, importer, qualname: str, depth: int) -> Optional[Symbol]:
        if depth > 4:
            return None
        path = getattr(importer, "real_path", None)
        if path is None:
            return None
        level = len(qualname) - len(qualname.lstrip("."))
        parts = qualname[level:].split(".") if qualname[level:] else []
        for cut in range(len(parts), -1, -1):
            module, rest = ".".join(parts[:cut]), parts[cut:]
            if level:
                found = self.layout.relative_file(module, level, path)
            elif module:
                found = self._find_module(module, path)
            else:
                found = None
            if found is None:
                continue
            target = self.model(found)
            if target is None:
                return None
            if not rest:
                shadowing = self._package_binding(parts, cut, level, path, depth)
                return shadowing if shadowing is not None else Symbol(target, "module")
            return self._member(target, rest, depth)
        return None

    def _package_binding(self, parts: List[str], cut: int, level: int, path: str, depth: int) -> Optional[Symbol]:
        """`models.EncoderRNN` where `models/__init__.py` says `from .EncoderRNN import
        EncoderRNN` (or `from .EncoderRNN import *`, whose class has the module's name): the
        package's own binding of the name wins over its submodule, as in Python (the import in
        `__init__` rebinds the name after the submodule is loaded)."""
        if cut < 2:
            return None
        package = ".".join(parts[: cut - 1])
        found = (self.layout.relative_file(package, level, path) if level
                 else self._find_module(package, path))
        if found is None or os.path.basename(found) != "__init__.py":
            return None
        init = self.model(found)
        name = parts[cut - 1]
        if init is None or not (name in init.facts.classes or name in init.facts.functions or name in init.imports.aliases
                                or init.imports.star_modules):
            return None
        symbol = self._member(init, [name], depth + 1)
        return symbol if symbol is not None and symbol.kind != "module" else None

    def _member(self, model, rest: List[str], depth: int) -> Optional[Symbol]:
        name = rest[0]
        facts = model.facts
        if len(rest) == 1 and name in facts.functions and facts.functions[name].class_name is None:
            defs = [d for d in facts.function_defs[name] if d.class_name is None]
            return Symbol(model, "function", defs[-1], name)
        if name in facts.classes:
            info = facts.classes[name]
            if len(rest) == 1:
                return Symbol(model, "class", info, name)
            method = facts.functions.get(f"{name}.{rest[1]}")
            return Symbol(model, "function", method, f"{name}.{rest[1]}") if method is not None else None
        target = model.imports.aliases.get(name)
        if target is not None:
            # A re-export (`from .losses import BoxLoss` in a package's __init__).
            return self._resolve(model, ".".join([target, *rest[1:]]), depth + 1)
        if len(rest) == 1 and facts.assignments.get(("<module>", name)):
            return Symbol(model, "value", None, name)
        if not name.startswith("_"):
            # `from .utils import *` in a package's __init__: the name may come from there
            # (the last star import that binds it wins, as in Python). `from . import *` is ".".
            for module in reversed(model.imports.star_modules):
                separator = "" if module.endswith(".") else "."
                symbol = self._resolve(model, module + separator + ".".join(rest), depth + 1)
                if symbol is not None:
                    return symbol
        return None

    # -- who imports a module --------------------------------------------------------------
    def importers(self, model) -> List[object]:
        """The project files that import ``model``'s module (read, at most MAX_IMPORTERS)."""
        path = getattr(model, "real_path", None)
        if path is None:
            return []
        if path not in self._importers:
            self._importers[path] = []
            found = []
            for other_path in sorted(self._import_index().get(path, ())):
                other = self.model(other_path)
                if other is not None:
                    found.append(other)
                    if len(found) >= MAX_IMPORTERS:
                        break
            self._importers[path] = found
        return self._importers[path]

    def init_importers(self, build) -> Dict[str, Set[str]]:
        """Package `__init__.py` -> the files that import some module under its folder
        (``build(root, index)``, worked out once per import index)."""
        if self._inits is None:
            self._inits = build(self.layout.root, self._import_index())
        return self._inits

    def import_index(self) -> Dict[str, Set[str]]:
        """Module file -> the project files whose import lines name it."""
        return self._import_index()

    def undocumented_script(self, path: str) -> bool:
        """The project documents how it runs its scripts, and never names ``path``'s
        (`project/reachability.py`)."""
        key = _key(path)
        found = self._undocumented.get(key)
        if found is None:
            found = self._undocumented[key] = undocumented_script(self, key)
        return found

    def unreached(self, path: str) -> bool:
        """No chain of imports from a script, a test or a package others import leads to
        ``path``'s module (`project/reachability.py`)."""
        return self._reach(path)[0]

    def _reach(self, path: str) -> Tuple[bool, Tuple[str, ...]]:
        key = _key(path)
        found = self._unreached.get(key)
        if found is None:
            found = self._unreached[key] = unreached(self, key)
            if found[0]:
                # Every module the search met is unreached too, and met the same modules.
                for other in found[1]:
                    self._unreached.setdefault(other, found)
        return found

    def in_used_copy(self, path: str) -> bool:
        """``path`` sits in a licensed copy of another project that the rest of the project
        imports from (`project/reachability.py`)."""
        return copy_used_by_project(self, _key(path))

    def trains_nowhere(self) -> bool:
        """No Python file or notebook of the project runs a training step or starts a training
        run (`loss.backward()`, an optimizer's or a scaler's `step()`, a library `Trainer`,
        `.fit(`, a Lightning `training_step`, a `train...(` call): an inference project (a demo,
        a sampler) whose module forwards run only where its own code calls them. Not a package
        others install (its users train its layers), nor a project of more files than
        `_MAX_UNTRAINED_FILES`."""
        return self._training_files() == ()

    def _training_files(self) -> Optional[Tuple[str, ...]]:
        """The project's Python files and notebooks that train (see `trains_nowhere`); None when
        the question is not asked of this project (an installable package, too many files)."""
        if self._trains_nowhere is None:
            texts = [p for p in self.layout.files() if p.endswith(".py")] + list(self.layout.notebooks())
            if self.layout.installable() or len(texts) > _MAX_UNTRAINED_FILES:
                self._trains_nowhere = False
                self._trainers_found = None
            else:
                self._trainers_found = tuple(p for p in texts if _TRAINS.search(self._text(p) or ""))
                self._trains_nowhere = not self._trainers_found
        return self._trainers_found

    def folder_trains_nowhere(self, path: str) -> bool:
        """The top-level folder that holds ``path`` is a part of the project of its own that
        trains nothing: none of its Python files or notebooks trains (see `trains_nowhere`) and
        no file outside it imports one of its modules (an inference demo kept in `VL/` beside
        the language model's fine-tuning scripts). Its module forwards run only where its own
        code calls them. Not for a package of a distribution others install, nor past
        `_MAX_UNTRAINED_FILES` files."""
        top = self._top_folder(path)
        if top is None or self.loads_by_name(path) or vendored(path, self.layout.root):
            # A module some file may load by a name given as text is imported unseen; a
            # licensed sub-project (`mapping/LICENSE`) may be trained by a framework's own
            # scripts, from configs that load its folder as a plugin.
            return False
        key = "\0folder-untrained\0" + top
        known = self.module_roots.get(key)
        if known is None:
            inside = top + os.sep
            texts = self._folder_files(top)
            # A folder without `__init__.py` is no package a distribution installs; a folder
            # holding a distribution of its own (`externals/ext/setup.py`) is installed and
            # imported by its package's name, which the import index does not resolve.
            packaged = (os.path.isfile(os.path.join(top, "__init__.py")) and self.layout.installable()) or any(
                os.path.basename(p) in ("setup.py", "pyproject.toml", "setup.cfg")
                for folder, _, names in os.walk(top) for p in (os.path.join(folder, n) for n in names))
            known = (not packaged and len(texts) <= _MAX_UNTRAINED_FILES
                     and not any(_TRAINS.search(self._text(p) or "") or _REGISTERS.search(self._text(p) or "")
                                 for p in texts)
                     and not any(os.path.abspath(target).startswith(inside)
                                 and any(not os.path.abspath(i).startswith(inside) for i in importers)
                                 for target, importers in self.import_index().items()))
            self.module_roots[key] = known
        return known

    def folder_dependencies(self, path: str) -> Tuple[str, ...]:
        """What else a cached result of a module file is checked against: whether its top-level
        folder trains, or is imported from outside (`folder_trains_nowhere`): that folder's
        files, and the files naming its modules. Kept apart from `checked_against`, whose texts
        the option questions read as the launch texts near the file."""
        key = _key(path)
        top = self._top_folder(key)
        if top is None or "forward" not in self._text(key):
            return ()
        folder = self._folder_files(top)
        if len(folder) > _MAX_UNTRAINED_FILES:
            return ()
        found = set(folder)
        for other in folder:
            stem = module_stem(other)
            # One word index, not a scan of every text per module (it holds words of three
            # characters or more).
            found.update(self.files_naming(stem) if len(stem) > 2 else self.files_containing(stem))
        return tuple(sorted(found - {key}))

    def _top_folder(self, path: str) -> Optional[str]:
        root = os.path.abspath(self.layout.root)
        relative = os.path.relpath(_key(path), root).split(os.sep)
        if len(relative) < 2 or relative[0] in (os.curdir, os.pardir):
            return None
        return os.path.join(root, relative[0])

    def _folder_files(self, top: str) -> List[str]:
        """The Python files and notebooks under ``top``: listed once per view (every module file
        of the folder asks for them)."""
        key = "\0folder-files\0" + top
        found = self._found.get(key)
        if found is None:
            inside = top + os.sep
            found = self._found[key] = [
                p for p in [*self.layout.files(), *self.layout.notebooks()]
                if (p.endswith(".py") or p.endswith(".ipynb")) and os.path.abspath(p).startswith(inside)]
        return found

    def untrained_package(self, path: str) -> Optional[Tuple[str, ...]]:
        """The training scripts of the imported package that holds ``path`` when no run of the
        project reaches them (`project/reachability.py`), else None."""
        return untrained_package(self, _key(path))

    def registered_name_used(self, name: str, path: str) -> bool:
        """Some text of the project names the registered class ``name`` of ``path`` where a
        registry may be asked for it (`model/registered_classes.py`)."""
        key = _key(path)
        if names_in_code(self._text(key), name, own=True):
            return True
        for other in self.files_naming(name):
            if other == key:
                continue
            if not other.endswith(".py") or names_in_code(self._text(other), name, own=False):
                return True  # a config file, a launch text or a notebook names it
        return False

    def files_naming(self, word: str) -> List[str]:
        """The project's Python files, config files, launch texts and notebooks that hold
        ``word`` as a word: one pass over them builds the index, asked for many names."""
        if self._word_files is None:
            index: Dict[str, List[str]] = {}
            texts = [*self.layout.files(), *(self.layout.config_files() or ()), *(self.layout.launch_texts() or ()),
                     *self.layout.notebooks()]
            for other in texts:
                for found in set(_LONG_WORD.findall(self._text(other))):
                    index.setdefault(found, []).append(other)
            self._word_files = index
        return self._word_files.get(word, [])

    def code_words(self, path: str) -> FrozenSet[str]:
        """The words of a Python file's code, comments and sentences blanked (a commented-out
        call names nothing): read once per file, for every name asked of it."""
        found = self._code_words.get(path)
        if found is None:
            found = self._code_words[path] = frozenset(_IDENTIFIER.findall(without_prose(self._text(path) or "")))
        return found

    def makes_attribute_names(self, path: str) -> bool:
        """The file fetches an attribute by a name it makes from pieces (`getattr(vae,
        args.decoder + "_decode")`, `getattr(model, f"{mode}_step")`): no text holds that name."""
        found = self._made_names.get(path)
        if found is None:
            found = self._made_names[path] = bool(_MADE_ATTRIBUTE_NAME.search(self._text(path) or ""))
        return found

    def importer_paths(self, path: str) -> Set[str]:
        """The project files whose import lines name ``path``'s module (not read)."""
        return set(self._import_index().get(_key(path), ()))

    def imported(self, path: str) -> bool:
        """Some project file imports ``path``'s module (its import lines name it)."""
        return bool(self._import_index().get(_key(path)))

    def through_loaders(self, model) -> List[object]:
        """The project files that import a module which loads ``model``'s module by name
        (`from models import create_model`, where `models/__init__.py` runs
        `import_module(f"models.{name}")`): where the instances such a factory builds are used.
        Read, at most MAX_IMPORTERS."""
        path = getattr(model, "real_path", None)
        if path is None:
            return []
        found: List[object] = []
        seen = {path}
        for loader in self.importers(model):
            if path not in self.loaded_by(loader.real_path):
                continue
            for other in self.importers(loader):
                if other.real_path not in seen:
                    seen.add(other.real_path)
                    found.append(other)
        return found[:MAX_IMPORTERS]

    def config_target_users(self, model) -> List[object]:
        """Where the instances of ``model``'s classes that the config files name by dotted path
        (`target: ldm.autoencoder.Autoencoder`) are used: the files that import a module by a
        name given as text (`importlib.import_module`, `__import__`), and the files that import
        those (`model = instantiate_from_config(config.model)` in `main.py`). Read, at most
        MAX_IMPORTERS; none when no config names a class of the module."""
        path = getattr(model, "real_path", None)
        module = self.layout.module_name(path) if path is not None else None
        if not module or not any(
            cls in model.facts.classes and (module == owner or module.endswith("." + owner))
            for owner, _, cls in (p.rpartition(".") for p in self.configured_class_paths())
        ):
            return []
        found: List[object] = []
        seen = {path}
        for mark in ("import_module(", "__import__("):
            for loader_path in self.files_containing(mark):
                loader = self.model(loader_path) if loader_path.endswith(".py") else None
                if loader is None:
                    continue
                for other in [loader, *self.importers(loader)]:
                    if other.real_path not in seen:
                        seen.add(other.real_path)
                        found.append(other)
        return found[:MAX_IMPORTERS]

    def siblings(self, model) -> List[object]:
        """The project files that the importers of ``model``'s module also import (read, at most
        MAX_IMPORTERS): where an entry script wires objects of several modules together, an
        instance of a class of this module may be called in one of them (`loss_fn =
        SemanticLoss(processor)`, whose `forward` calls `processor.convert(...)`)."""
        path = getattr(model, "real_path", None)
        if path is None:
            return []
        known = self._siblings.get(path)
        if known is None:
            found: List[object] = []
            seen = {path}
            for importer in self.importers_through_packages(model):
                for other_path in self._imports_of(importer.real_path):
                    if other_path in seen:
                        continue
                    seen.add(other_path)
                    other = self.model(other_path)
                    if other is not None:
                        found.append(other)
                if len(found) >= MAX_IMPORTERS:
                    break
            known = self._siblings[path] = found[:MAX_IMPORTERS]
        return known

    def importers_through_packages(self, model) -> List[object]:
        """The importers of ``model``'s module, and through a package `__init__.py` that
        re-exports it (`from .detr import build`) or a factory module that builds its classes'
        instances (`_factory_of`), the files that import those: the entry script that wires a
        factory's instances into an engine module (`model, criterion = build(args)`, then
        `train_one_epoch(model, criterion, ...)`). Worked out once per module and view."""
        path = getattr(model, "real_path", None)
        known = self._through_packages.get(path) if path is not None else None
        if known is None:
            known = self._importers_through_packages(model)
            if path is not None:
                self._through_packages[path] = known
        return known

    def _importers_through_packages(self, model) -> List[object]:
        out: List[object] = []
        frontier = list(self.importers(model))
        for _ in range(2):
            upper: List[object] = []
            for importer in frontier:
                if any(importer is known for known in out):
                    continue
                out.append(importer)
                if (os.path.basename(importer.real_path or "") == "__init__.py" or self._factory_of(importer, model)
                        or self._registry_of(importer, model)):
                    upper.extend(self.importers(importer))
            frontier = upper
        out.extend(m for m in frontier if not any(m is known for known in out))
        return out[:MAX_IMPORTERS]

    def _factory_of(self, importer, model) -> bool:
        """``importer`` builds instances of ``model``'s classes in its functions (`criterion =
        SetCriterion(...)` in a `build(args)` that returns it): the instances go wherever the
        factory's callers take them, so those count as importers too."""
        classes = model.facts.classes
        if not classes:
            return False
        asked = set()
        for site in importer.facts.calls:
            func = site.node.func
            name = dotted_name(func)
            if name is None or site.ctx.function is None:
                continue
            # `from models.model_plain import ModelPlain as M` in one branch of a factory and
            # another class as `M` in the next: every class the name is imported as.
            quals = importer.imports.targets.get(name, ()) if "." not in name else ()
            if not quals:
                qual = importer.imports.qualify(func)
                quals = (qual,) if qual is not None else ()
            for qual in quals:
                last = qual.rsplit(".", 1)[-1]
                if qual in asked or (last not in classes and last not in model.facts.functions):
                    continue
                asked.add(qual)
                symbol = self.symbol(importer, qual)
                if symbol is None or symbol.model is not model:
                    continue
                if symbol.kind == "class" or (symbol.kind == "function" and _returns_own_instance(model, symbol.info)):
                    # Also through the module's own factory (`criterion = build_criterion(cfg)`,
                    # which returns `Criterion(...)`).
                    return True
        return False

    def _registry_of(self, importer, model) -> bool:
        """``importer`` lists ``model``'s classes in a module-level table (`MODEL_CLASSES =
        {"bert": (BertConfig, JointBERT, BertTokenizer)}`): the files that import the table
        pick a class from it and build and call its instances, as a factory's callers do."""
        classes = model.facts.classes
        if not classes:
            return False
        for (scope, _), bound in importer.facts.assignments.items():
            if scope != "<module>":
                continue
            for assignment in bound:
                value = assignment.value
                if type(value) not in (cst.Dict, cst.List, cst.Tuple):
                    continue
                for name in _table_names(value):
                    if name not in classes:
                        continue
                    qual = importer.imports.qualify(cst.Name(name))
                    symbol = self.symbol(importer, qual) if qual is not None else None
                    if symbol is not None and symbol.kind == "class" and symbol.model is model:
                        return True
        return False

    def related_texts(self, path: str, hops: int = 2, within: Optional[str] = None,
                      imports_only: bool = False) -> List[str]:
        """The texts of the project files within ``hops`` imports of a file, either way: where
        the context of its code (a training loop, a CUDA device) may be. ``within``: only the
        files under that folder, reached through files under it. ``imports_only``: only what
        the file imports, and what those import (not the other scripts that share a helper
        with it)."""
        path = _key(path)
        key = (path, hops, within, imports_only)
        found = self._related.get(key)
        if found is None:
            inside = within + os.sep if within is not None else ""
            seen, frontier = {path}, {path}
            for _ in range(hops):
                if imports_only:
                    frontier = {n for p in frontier for n in self._imports_of(p) if n.startswith(inside)} - seen
                else:
                    frontier = {n for p in frontier for n in self._near(p, inside) if n.startswith(inside)} - seen
                seen |= frontier
            found = self._related[key] = tuple(sorted(seen - {path}))
        return [self._text(p) for p in found]

    def _near(self, path: str, inside: str = "") -> FrozenSet[str]:
        """The files one import away, either way, counting a package `__init__.py` on the way as
        no step: `from model import MattingRefine` imports what `model/__init__.py` re-exports.
        ``inside``: only through the packages under that folder."""
        known = self._near_files.get((path, inside))
        if known is not None:
            return known
        index = self._import_index()
        near = {*index.get(path, ()), *self._imports_of(path)}
        for other in [n for n in near if os.path.basename(n) == "__init__.py" and n.startswith(inside)]:
            near.update(index.get(other, ()))
            near.update(self._imports_of(other))
        near.discard(path)
        found = self._near_files[(path, inside)] = frozenset(near)
        return found

    def imports_either_way(self, a: str, b: str) -> bool:
        """One of the two files imports the other (through a package `__init__.py` on the
        importer's side too): unlike `_near`, two scripts that merely import the same package
        are not linked, and cannot reach each other's objects."""
        a, b = _key(a), _key(b)
        return self._imports_through(a, b) or self._imports_through(b, a)

    def _imports_through(self, importer: str, imported: str) -> bool:
        direct = self._imports_of(importer)
        if imported in direct:
            return True
        return any(os.path.basename(n) == "__init__.py" and imported in self._imports_of(n) for n in direct)

    def related_models(self, path: str, hops: int = 2, limit: int = 32) -> List[object]:
        """The project files within ``hops`` imports of a file, either way, read (nearest
        first, at most ``limit``): where the loops that consume its values may be."""
        path = _key(path)
        seen, frontier, order = {path}, [path], []
        index = self._import_index()
        for _ in range(hops):
            nxt = []
            for p in frontier:
                # What the file imports, then what imports it, before the files that only share
                # a package with it: `from tllib.utils.metric import accuracy` makes every
                # importer of that package a neighbour, and hundreds of them must not crowd out
                # the `utils.py` beside the script whose `validate` goes over its loaders.
                direct = sorted(self._imports_of(p))
                importers = sorted(set(index.get(p, ())) - set(direct))
                near = direct + importers
                near += sorted(self._near(p) - set(near))
                for n in near:
                    if n not in seen:
                        seen.add(n)
                        nxt.append(n)
                        order.append(n)
            frontier = nxt
        out = []
        for p in order[:limit]:
            model = self.model(p)
            if model is not None:
                out.append(model)
        return out

    def dependencies(self, path: str, hops: int = 3, limit: int = 512) -> Tuple[str, ...]:
        """The project files a file's findings may depend on: those within ``hops`` imports of
        it, either way (what it imports, what imports it, their neighbours), and the modules
        that hold the project's config defaults (read wherever a setting is, see
        `model/config_nodes.py`). Worked out once per file until something changes: the engine
        and several model questions ask for the same file."""
        key = (_key(path), hops, limit)
        found = self._dependencies.get(key)
        if found is None:
            found = self._dependencies[key] = self._find_dependencies(key[0], hops, limit)
        return found

    def _find_dependencies(self, path: str, hops: int, limit: int) -> Tuple[str, ...]:
        seen, frontier = {path}, {path}
        for _ in range(hops):
            frontier = {n for p in frontier for n in self._near(p)} - seen
            seen |= frontier
            if len(seen) > limit:
                break
        node_files = [f for mark in NODE_MARKS for f in self.files_containing(mark)]
        seen.update(node_files)
        if node_files:
            # Whether a config file turns a setting of a config node on (model/config_nodes.py).
            seen.update(self.layout.config_files() or ())
        seen.update(self._root_configs())
        # Modules its relative imports name that its folder lacks (model/broken_imports.py):
        # paths that do not exist keep its result out of the cache until they do.
        seen.update(missing_relative_modules(path, self._text(path)))
        seen.update(missing_package_modules(path, self._text(path), self.layout.root))
        text = self._text(path)
        if CHECKPOINTING_MARK in text or any(self._reads_keys(p) for p in sorted(seen) if p.endswith(".py")):
            # Whether a config file turns the Hugging Face Trainer's checkpointing on
            # (model/default_flags.py), or gives a key read with a false default
            # (`opts.get("render_depth", False)`, `hasattr(cfg, "clip")`: model/guards.py), or
            # a key a flag is set from (`cfg['BACKBONE']['FOCAL']['USE_CHECKPOINT']`, here or in
            # a module that builds this one's blocks: model/default_flags.py).
            seen.update(self.layout.config_files() or ())
        if "checkpoint" in text:
            # Whether a Python config module turns a checkpointing option on
            # (`with_cp=True` in `configs/seg/upernet.py`: model/default_flags.py).
            seen.update(self.python_configs())
        if LIGHTNING_STEP_MARK in text:
            # Whether some `Trainer.fit` of the project trains the module whose step this is
            # (model/framework_steps.py): the files that call `.fit(`.
            seen.update(self.fitting_files())
            seen.update(self.files_containing("LightningCLI"))
        if LIGHTNING_HOOK_MARK in text:
            # Whether a Lightning `Trainer` of the project trains from the hook's loader, and on
            # the GPU (model/lightning_loaders.py): the files that run one.
            seen.update(self.lightning_trainers())
        if HYDRA_MARK in self._text(path):
            # The settings of its primary config file (model/hydra_configs.py).
            seen.update(self.layout.config_files() or ())
        # Files that name the module, also where their import does not resolve: whether they
        # name a class of it decides whether that class is built (model/unbuilt_classes.py).
        seen.update(self.files_containing(module_stem(path)))
        # Notebooks that name it: whether they call a function of it decides whether that
        # function runs (model/unbuilt_classes.py).
        seen.update(self.notebooks_containing(module_stem(path)))
        for mark in DYNAMIC_MARKS:
            seen.update(self.files_containing(mark))
        if self.configured_class_paths():
            # Whether a config file names one of its classes, and where such targets are built
            # and placed (`config_target_users`).
            seen.update(self.layout.config_files() or ())
            model = self.model(path)
            if model is not None:
                seen.update(m.real_path for m in self.config_target_users(model))
        if self.loads_config_targets():
            seen.update(self.layout.config_files() or ())  # whether one names a class
        # The shell scripts beside a file that runs with command-line options decide them
        # (`model/cli_options.py`).
        for folder in sorted({os.path.dirname(p) for p in seen | {path}}):
            seen.update(self.launch_scripts(folder))
        return tuple(sorted(seen - {path}))

    def fitting_files(self) -> List[str]:
        """The project's files that call `.fit(` and name a trainer or Lightning: those that may
        fit a LightningModule (a scikit-learn `clf.fit(X, y)` names neither)."""
        found = self._found.get("\0fitting-files")
        if found is None:
            found = self._found["\0fitting-files"] = [
                p for p in self.files_containing(".fit(") if p.endswith(".py")
                and any(word in self._text(p) for word in ("rainer", "lightning"))]
        return found

    def lightning_trainers(self) -> List[str]:
        """The project's files that run a Lightning `Trainer` (or `LightningCLI`)."""
        found = self._found.get("\0lightning-trainers")
        if found is None:
            found = [p for p in self.files_containing("lightning") if LIGHTNING_TRAINER_TEXT.search(self._text(p))]
            if any(_LIGHTNING_TARGET.search(self._text(c) or "") for c in self.layout.config_files() or ()):
                # `trainer = hydra.utils.instantiate(config.trainer)` with `_target_:
                # lightning.Trainer` in a config file: the file that builds it runs one.
                found += [p for p in self.files_containing("instantiate(")
                          if p.endswith(".py") and p not in found and "lightning" in self._text(p) and ".fit(" in self._text(p)]
            self._found["\0lightning-trainers"] = found
        return found

    def python_configs(self) -> List[str]:
        """The project's Python modules under a config folder (`configs/`, `cfgs/`,
        `occupancy_configs/`): mmcv-style configs written as Python."""
        if self._python_configs is None:
            root = self.layout.root
            self._python_configs = [p for p in self.layout.files() if any(
                CONFIG_FOLDER.match(part) for part in os.path.relpath(os.path.dirname(p), root).split(os.sep))]
        return self._python_configs

    def _loads_settings(self, path: str) -> bool:
        """The file loads a settings object from a YAML file (OmegaConf, PyYAML), whose keys it
        may read as attributes."""
        found = self._settings_loaders.get(path)
        if found is None:
            found = self._settings_loaders[path] = bool(_SETTINGS_LOAD.search(self._text(path)))
        return found

    def _reads_keys(self, path: str) -> bool:
        found = self._key_readers.get(path)
        if found is None:
            text = self._text(path)
            found = self._key_readers[path] = bool(
                (("get(" in text or "hasattr(" in text) and _KEY_READS.search(text))
                or ("['" in text or '["' in text) and _SETTING_SUBSCRIPT.search(text)
                # A Hugging Face model's `config_class`: its `config.json` sets what it reads.
                or "config_class" in text)
        return found

    def checked_against(self, path: str) -> Tuple[str, ...]:
        """What a cached result of ``path`` is checked against: its dependencies, and the texts
        that say whether any command the project ships passes an option (its shell scripts and
        READMEs, `model/launched_options.py`), which are not Python and which no other question
        reads."""
        key = _key(path)
        found = set(self.dependencies(path)) | set(self.layout.launch_texts() or ())
        # What the engine's info lowering reads beyond them (kept out of the dependencies, whose
        # texts the model's questions read as the file's neighbours):
        # - whether some chain of imports from a root leads to the module: the files on the
        #   chains looked at, and the files that name them (a new import of one of them)
        #   (project/reachability.py);
        unreached_module, met = self._reach(key)
        for other in met:
            found.add(other)
            found.update(self.files_containing(module_stem(other)))
        # - whether a run of the project reaches the training scripts of the package the file
        #   is in, when the rest of the project imports from it (a module forward of a copied
        #   library is assumed trained only then, model/framework_steps.py): those scripts and
        #   the files naming them.
        for script in package_training_scripts(self, key):
            found.add(script)
            found.update(self.files_containing(module_stem(script)))
        # - whether a file that imports a used package with no training code of its own, directly
        #   or through others, starts training (`inference_only_importers`): those importers.
        found.update(untrained_package(self, key) or ())
        # - whether a text names the file as a script to run (`self_tests.py`: a copied example
        #   no README runs): the files that name its module, with the launch texts above.
        if "__main__" in (self._text(key) or ""):
            found.update(self.files_containing(module_stem(key)))
        if unreached_module:
            # A config file or notebook that starts naming one of them.
            found.update(self.layout.config_files() or ())
            found.update(self.layout.notebooks())
        # - whether the config files give a key a file near this one reads as an attribute of a
        #   settings object loaded from YAML only false values (`check_nan=cfg.optim.check_nan`,
        #   model/default_flags.py: the config values are read from every config file).
        if any(self._loads_settings(p) for p in self.dependencies(path) if p.endswith(".py")) or self._loads_settings(key):
            found.update(self.layout.config_files() or ())
        # - what the config files the project's commands pass a script give its settings
        #   (`--config config_release/pretrain.json`, model/passed_configs.py).
        if self._passes_config_files():
            found.update(self.layout.config_files() or ())
        # - where the imports of a module lead through the folders the project's scripts add to
        #   `sys.path` (`_run_additions`): the files that add them.
        if self._run_additions():
            found.update(p for p in self.files_containing("sys.path") if p.endswith(".py"))
        # - whether some text of the project asks for FlashAttention-2, for a model copy that
        #   tests for it (model/attention_backends.py).
        text = self._text(key)
        if any(mark in text for mark in _FLASH_TESTERS):
            found.update(p for needle in _FLASH_REQUESTS for p in self.files_containing(needle))
            found.update(self.layout.config_files() or ())
        # - whether any file of the project trains, for a module file (model/framework_steps.py: in
        #   a project none of whose files does, its forwards are not taken as trained by a caller
        #   out of sight): where none does, every Python file and notebook, any of which may
        #   start to; where some do, those, which may stop.
        if "forward" in text:
            trainers = self._training_files()
            if trainers == ():
                found.update(p for p in self.layout.files() if p.endswith(".py"))
                found.update(self.layout.notebooks())
            elif trainers:
                found.update(trainers)  # one of them may stop training

        # - which torch release the project pins, for a file that calls an API deprecated
        #   only from a later one (project/torch_pins.py).
        if "amp" in text:
            found.update(self.torch_pin_sources())
        # - whether some text names a class the file registers (model/registered_classes.py).
        registered = classes_asked_for(text)
        if registered:
            for name in registered:
                found.update(self.files_naming(name))
            found.update(self.layout.config_files() or ())
        return tuple(sorted(found - {key}))

    def _passes_config_files(self) -> bool:
        """Some launch text of the project passes a script a config file (`--config x.json`)."""
        if self._config_passing is None:
            self._config_passing = any(".json" in text and _PASSES_CONFIG.search(text) for text in (
                self._text(p) or "" for p in self.layout.launch_texts() or ()))
        return self._config_passing

    def launch_scripts(self, folder: str) -> List[str]:
        """The shell scripts in a folder (`train.sh` that runs `python train.py --workers 2`)."""
        found = self._launchers.get(folder)
        if found is None:
            try:
                names = sorted(os.listdir(folder))
            except OSError:
                names = []
            found = self._launchers[folder] = [os.path.join(folder, n) for n in names if n.endswith((".sh", ".bash"))][:32]
        return found

    def loads_by_name(self, path: str) -> bool:
        """Some project file may load ``path``'s module by a name given as text
        (`importlib.import_module`, `instantiate_from_config`, Hydra's `instantiate`,
        `LightningCLI`). `import_module("network." + args.arch)` loads modules of the `network`
        package only (so does `__import__("models.{}".format(arch))`),
        `import_module(f"trainers.{name}_trainer")` only those whose name ends
        with `_trainer`, and `import_module(module_name)` what the name's one binding in the
        text says; a name only known at run time loads a module importable by its dotted name
        from a source root, or one in or under the loader's folder, not a module of a folder
        whose name is no identifier elsewhere (`ch06/02_bonus-experiments/helpers.py`)."""
        if self._loaded is None:
            prefixes: List[str] = []
            for mark in DYNAMIC_MARKS:
                for other in self.files_containing(mark):
                    text = self._text(other)
                    if mark in CONFIG_TARGET_MARKS:
                        prefixes.append(_CONFIG_TARGETS)
                        break
                    if mark not in ("import_module(", "__import__("):
                        prefixes.append(("", ""))
                        break
                    loaded = _loaded_modules(text)
                    if any(m in text for m in CONFIG_TARGET_MARKS):
                        # `get_obj_from_str(string)` itself: its `import_module(module)` loads what
                        # the config's `target:` names.
                        loaded = [_CONFIG_TARGETS if p == ("", "") else p for p in loaded]
                    # A name read at run time loads a module importable by its dotted name, or
                    # one beside the loader (its folder is on `sys.path` when run as a script).
                    prefixes.extend(("", os.path.dirname(_key(other))) if p == ("", "") else p for p in loaded)
            self._loaded = prefixes
        if not self._loaded:
            return False
        if ("", "") in self._loaded:
            return True
        module = self.layout.module_name(path) or ""
        beside = [suffix for p, suffix in self._loaded if p == "" and os.path.isabs(suffix)]
        folder = os.path.dirname(_key(path))
        if beside and (module or any(folder == b or folder.startswith(b + os.sep) for b in beside)):
            return True
        return any((module == p or module.startswith(p + ".")) and module.endswith(suffix)
                   for p, suffix in self._loaded if (p, suffix) != _CONFIG_TARGETS and not os.path.isabs(suffix))

    def loads_config_targets(self) -> bool:
        """Some project file builds classes a config file names by dotted path
        (`instantiate_from_config(config.model)`): see ``named_in_project_configs``."""
        self.loads_by_name("")
        return _CONFIG_TARGETS in (self._loaded or ())

    def named_in_project_configs(self, name: str) -> bool:
        """A config file anywhere in the project names ``name`` as a word (a `target:` path ends
        with the class's name). Every name, when the project has too many config files to read,
        or ships none that names a target (its configs come from elsewhere)."""
        if self._config_words is None:
            files = self.layout.config_files()
            words = _words_of(files) if files is not None else set()
            self._config_words = words if words & _TARGET_KEYS else {"*"}
        return "*" in self._config_words or name in self._config_words

    def configured_class_paths(self) -> Tuple[str, ...]:
        """The dotted paths ending in a capitalised name that the project's config files write
        (`target: ldm.models.autoencoder.AutoencoderKL`, `model_class =
        model.network.IDRNetwork`): the classes a loader of config targets may build. Empty
        when there are too many config files to read, or when no file of the project imports a
        module by a name given as text."""
        found = self._found.get(_CLASS_PATHS_KEY)
        if found is None:
            # Only a project that imports modules by a name given as text builds such targets:
            # the others' config files are not read for them.
            loads = self.files_containing("import_module(") or self.files_containing("__import__(")
            files = (self.layout.config_files() or ()) if loads else ()
            paths: Set[str] = set()
            for path in files:
                paths.update(_CLASS_PATH.findall(self._text(path) or ""))
            found = self._found[_CLASS_PATHS_KEY] = sorted(paths)[:_MOST_CLASS_PATHS]
        return tuple(found)

    def sets_in_configs(self, setting: str) -> bool:
        """A config file of the project, or a shell script beside one of its files, gives the
        config-node setting ``setting`` (`MODEL.SWIN.USE_CHECKPOINT`) a value other than a false
        one: nested YAML keys on that path, or the dotted path followed by a value (`--opts
        MODEL.SWIN.USE_CHECKPOINT True`); in other formats, its last name with such a value.
        True when there are too many config files to read."""
        values = self.config_values(setting)
        return values is None or any(v.strip("'\"") not in _FALSE_SETTINGS for v in values)

    def sets_only_false_in_configs(self, setting: str) -> bool:
        """Some config file gives ``setting`` a value, and every value they give it is false
        (`USE_CHECKPOINT: False` in every YAML file of a project that reads
        `cfg['BACKBONE']['FOCAL']['USE_CHECKPOINT']`)."""
        values = self.config_values(setting)
        return bool(values) and not self.sets_in_configs(setting)

    def config_values(self, setting: str) -> Optional[Tuple[str, ...]]:
        """The values the config files and shell scripts give ``setting``, as written (see
        `sets_in_configs`); None when there are too many config files to read."""
        files = self.layout.config_files()
        if files is None:
            return None
        found = self._config_sets.get(setting)
        if found is None:
            last = setting.rsplit(".", 1)[-1]
            flat = re.compile(r"(?<![\w.])%s['\"]?\s*[,:=\s]\s*['\"]?([^\s,#\]}'\"]+)" % re.escape(setting))
            named = re.compile(r"(?<![\w])%s['\"]?\s*(?:[:=]\s*|\s+)([^\s,#\]}]+)" % re.escape(last))
            if self._setting_sources is None:
                scripts = [p for folder in sorted({os.path.dirname(f) for f in self.layout.files()})
                           for p in self.launch_scripts(folder)]
                self._setting_sources = [*files, *scripts]
            values: List[str] = []
            for path in self._setting_sources:
                text = self._text(path)  # read once per view, as the project's code is
                if last not in text:
                    continue
                values += flat.findall(text)
                if path.endswith((".yaml", ".yml")):
                    values += _yaml_values(text, setting)
                else:
                    values += named.findall(text)
            found = self._config_sets[setting] = tuple(values)
        return found

    def yaml_setting(self, path: str, setting: str) -> List[str]:
        """The values the YAML file ``path`` gives the nested keys of ``setting``
        (`algorithm.device`), as written; read once per view."""
        text = self._text(path)
        return _yaml_values(text, setting) if setting.rsplit(".", 1)[-1] in text else []

    def named_in_configs(self, name: str) -> bool:
        """A config file at the project's root names ``name`` as a word (`cog.yaml` names its
        predictor class, which cog loads by that name)."""
        if self._root_words is None:
            self._root_words = _words_of(self._root_configs())
        return name in self._root_words

    def _root_configs(self) -> List[str]:
        """The config files directly in the project's root folder."""
        if self._roots is None:
            try:
                names = sorted(os.listdir(self.layout.root))
            except OSError:
                names = []
            self._roots = [os.path.join(self.layout.root, n) for n in names if n.endswith(_CONFIG_SUFFIXES)][:64]
        return self._roots

    def files_containing(self, needle: str) -> List[str]:
        """The project's files whose text holds ``needle`` (its own file list, read once)."""
        found = self._found.get(needle)
        if found is None:
            found = self._found[needle] = [p for p in self.layout.files() if needle in self._text(p)]
        return found

    def asks_for_flash_attention(self, path: str) -> bool:
        """Some text may ask the Hugging Face model copy ``path`` for FlashAttention-2: a
        Python file naming it or an `attn_implementation`, other than the model copies that only
        test for it (a file beside such copies, a copied `configuration_minicpm.py` that turns it
        on, asks for its own folder's models only), or a launch text or config file naming it
        (model/attention_backends.py)."""
        if self._flash_requests is None:
            python = {p for needle in _FLASH_REQUESTS for p in self.files_containing(needle)}
            testers = {p for p in python if any(mark in self._text(p) for mark in _FLASH_TESTERS)}
            folders = {os.path.dirname(p) for p in testers}
            others = [p for p in [*(self.layout.launch_texts() or ()), *(self.layout.config_files() or ())]
                      if any(needle in self._text(p) for needle in _FLASH_REQUESTS)]
            # (text, the folder it asks for alone; None: the whole project)
            self._flash_requests = [(p, os.path.dirname(p) if os.path.dirname(p) in folders else None)
                                    for p in sorted(python - testers)] + [(p, None) for p in others]
        folder = os.path.dirname(_key(path))
        return any(only is None or only == folder for _, only in self._flash_requests)

    def torch_pin_sources(self) -> List[str]:
        """The files that may pin the project's torch release (`project/torch_pins.py`): its
        requirement files, Dockerfiles and conda environments, and its launch texts."""
        found = self._found.get(_PIN_KEY)
        if found is None:
            found = self._found[_PIN_KEY] = pin_files(self.layout.root) + list(self.layout.launch_texts() or ())
        return found

    def required_torch(self) -> Optional[Tuple[int, int]]:
        """The oldest torch release the requirement files at the root accept (`torch>=1.13.1`
        gives 1.13): what a rewrite to a newer API would stop supporting. None without one."""
        found = self._found.get(_REQUIRED_KEY)
        if found is None:
            minimum = oldest_minimum((p, self._text(p) or "") for p in pin_files(self.layout.root))
            found = self._found[_REQUIRED_KEY] = [minimum]
        return found[0]

    def pinned_torch(self, path: Optional[str] = None) -> Optional[Tuple[int, int]]:
        """The oldest torch release the project pins exactly (`torch==1.13.1`) for ``path``'s
        folder: the requirement files at the root, and the launch texts (READMEs, shell scripts)
        in that folder or above it. A sub-project's README pins its own files only (a monorepo
        of papers, each with its install line). None without one."""
        folder = os.path.dirname(_key(path)) if path else self.layout.root
        known = self._pinned.get(folder)
        if known is None:
            pins = self._pins_by_source()
            found = [pin for source, pin in pins.items()
                     if pin is not None and (source is None or _holds(os.path.dirname(source), folder))]
            known = self._pinned[folder] = min(found) if found else False
        return known or None

    def _pins_by_source(self) -> Dict[Optional[str], Optional[Tuple[int, int]]]:
        """The oldest pin of the root's requirement files (under None) and of each launch text,
        read once per view."""
        known = self._pin_sources
        if known is None:
            files = set(pin_files(self.layout.root))
            sources = self.torch_pin_sources()
            known = {None: oldest_pin(self._text(p) or "" for p in sources if p in files)}
            for p in sources:
                if p not in files:
                    known[p] = oldest_pin((), (self._text(p) or "",))
            self._pin_sources = known
        return known

    def notebooks_containing(self, needle: str) -> List[str]:
        """The project's notebooks whose code holds ``needle``."""
        key = "\0notebooks\0" + needle
        found = self._found.get(key)
        if found is None:
            found = self._found[key] = [p for p in self.layout.notebooks() if needle in self._text(p)]
        return found

    def text_of(self, path: str) -> str:
        return self._text(_key(path))

    def config_modules(self) -> List[object]:
        """The project's modules that build config nodes, read."""
        files = sorted(set().union(*(self.files_containing(mark) for mark in NODE_MARKS)))
        return [m for m in map(self.model, files) if m is not None]

    def _import_index(self) -> Dict[str, Set[str]]:
        """Module file -> the project files whose import lines name it (read from the text)."""
        if self._index is None:
            index: Dict[str, Set[str]] = {}
            # Notebooks import the project's modules too (`sys.path.append("..")`, then `import
            # d2lzh_pytorch as d2l` and `d2l.train_ch5(...)`): their cells call its functions.
            for path in [*self.layout.files(), *self.layout.notebooks()]:
                for target in self._imports_of(path):
                    index.setdefault(target, set()).add(path)
            self._index = index
            for path in self._overlaid_files():
                self.changed(path)  # an unsaved new file is indexed too
        return self._index

    def _additions(self, path: str) -> Tuple[str, ...]:
        """Folders the file adds to `sys.path` (cached with its imports; only when it says
        `sys.path` at all)."""
        known = self._path_additions.get(path)
        if known is None:
            text = self._text(path) or ""
            known = path_additions(text, path, self.layout.root)
            for helper in self._path_helpers(path, text):
                known += tuple(f for f in path_additions(self._text(helper) or "", helper, self.layout.root) if f not in known)
            self._path_additions[path] = known
        return known

    def _find_module(self, module: str, path: str) -> Optional[str]:
        """The project file an absolute import of ``module`` in ``path`` loads: through the
        file's own `sys.path` additions first, then through those of the project's scripts
        (`from layers.roi_target_layer import ...` in a module a script imports after its
        `_init_paths` put `lib/` on the path: every module of that run finds it there)."""
        found = self.layout.module_file(module, path, self._additions(path))
        if found is None and self._run_additions():
            found = self.layout.module_file(module, path, self._additions(path) + self._run_additions())
        return found

    def _run_additions(self) -> Tuple[str, ...]:
        """Every folder some file of the project adds to `sys.path` (worked out once per file
        list; a text that mentions `sys.path` changing starts the file list over)."""
        if self._all_additions is None:
            found: List[str] = []
            for other in self.files_containing("sys.path"):
                if other.endswith(".py"):
                    found.extend(f for f in self._additions(other) if f not in found)
            self._all_additions = tuple(found)
        return self._all_additions

    def _path_helpers(self, path: str, text: str) -> List[str]:
        """Modules beside the file that it imports by a bare name and that touch `sys.path`:
        `import _init_paths` before the imports that helper makes possible."""
        helpers = []
        for level, module, _ in _import_lines(text):
            if level or "." in module:
                continue
            helper = os.path.join(os.path.dirname(os.path.abspath(path)), module + ".py")
            if helper != path and os.path.isfile(helper) and "sys.path" in (self._text(helper) or ""):
                helpers.append(helper)
        return helpers

    def imported_models(self, model) -> List[object]:
        """The project files ``model``'s file imports, read (at most MAX_IMPORTERS)."""
        path = getattr(model, "real_path", None)
        if path is None:
            return []
        out = []
        for other in self._imports_of(_key(path))[:MAX_IMPORTERS]:
            found = self.model(other)
            if found is not None:
                out.append(found)
        return out

    def _imports_of(self, path: str) -> List[str]:
        known = self._imported.get(path)
        if known is None:
            known = []
            for level, module, names in _import_lines(self._text(path)):
                if level:
                    found = [self.layout.relative_file(module, level, path)]
                    found += [self.layout.relative_file(f"{module}.{n}" if module else n, level, path) for n in names]
                else:
                    found = [self._find_module(module, path)]
                    found += [self._find_module(f"{module}.{n}", path) for n in names]
                known.extend(f for f in found if f is not None and f != path)
            known.extend(f for f in self.loaded_by(path) if f not in known)
            self._imported[path] = known
        return known

    def loaded_by(self, path: str) -> List[str]:
        """The project modules a file loads by a name it makes from a package prefix
        (`import_module(f"models.{name}")`, `import_module("archs." + arch)`): every module of
        that package whose name fits, as Python would find it. At most MAX_IMPORTERS."""
        known = self._loads.get(path)
        if known is None:
            text = self._text(path)
            patterns = [(p, s) for p, s in _loaded_modules(text) if p] if (
                "import_module(" in text or "__import__(" in text) else []
            known = []
            if patterns:
                for other in self.layout.files():
                    module = self.layout.module_name(other) or ""
                    if other != path and any(module.startswith(p + ".") and module.endswith(s) for p, s in patterns):
                        known.append(other)
                        if len(known) >= MAX_IMPORTERS:
                            break
            self._loads[path] = known
        return known

    def _overlaid_files(self) -> List[str]:
        """Files that exist only as texts standing in for them (a new buffer not saved yet)."""
        if self._stand_ins is None:
            return []
        root = self.layout.root + os.sep
        return [p for p in self._stand_ins.paths() if p.startswith(root) and p.endswith(".py") and not os.path.exists(p)]

    def _text(self, path: str) -> str:
        text = self._texts.get(path)
        if text is None:
            text = self._stand_in(path)
        if text is None:
            try:
                text = read_regular(path, _TEXT_LIMIT)[0].decode("utf-8", "replace")
            except (OSError, ValueError, FileTooLarge):
                text = ""  # a named pipe, a device, a vanished or huge file: no imports seen
            if path.endswith(".ipynb") and text:
                text = _notebook_code(text)
            self._texts[path] = text
        return text


def _notebook_code(raw: str) -> str:
    """A notebook's code cells, one after the other: what its imports and calls are read from
    (the JSON around them hides them from the line patterns)."""
    try:
        data = json.loads(raw)
    except (ValueError, RecursionError):
        return ""
    cells = data.get("cells") if isinstance(data, dict) else None
    if not isinstance(cells, list):
        return ""
    out = []
    for cell in cells:
        if isinstance(cell, dict) and cell.get("cell_type") == "code":
            source = cell.get("source", "")
            out.append("".join(s for s in source if isinstance(s, str)) if isinstance(source, list)
                       else source if isinstance(source, str) else "")
    return "\n".join(out)


_YAML_KEY = re.compile(r"^( *)(?:- +)?([A-Za-z_][\w-]*) *: *(.*?) *(?:#.*)?$")


def _yaml_values(text: str, setting: str) -> List[str]:
    """The values a YAML text gives the nested keys of ``setting`` (`MODEL:` / `  SWIN:` /
    `    USE_CHECKPOINT: True` for `MODEL.SWIN.USE_CHECKPOINT`), read by indentation."""
    wanted = setting.split(".")
    stack: List[Tuple[int, str]] = []
    out = []
    for line in text.splitlines():
        match = _YAML_KEY.match(line)
        if match is None:
            continue
        indent, key, value = len(match.group(1)), match.group(2), match.group(3)
        while stack and stack[-1][0] >= indent:
            stack.pop()
        path = [k for _, k in stack] + [key]
        if path == wanted and value:
            out.append(value)
        stack.append((indent, key))
    return out


def _words_of(paths: List[str]) -> Set[str]:
    """Every word of these files (each read up to 1 MB; a larger one, data more than settings,
    left out)."""
    words: Set[str] = set()
    for path in paths:
        try:
            text = read_regular(path, _CONFIG_TEXT_LIMIT)[0].decode("utf-8", "replace")
        except (OSError, ValueError, FileTooLarge):
            continue
        words.update(_WORD.findall(text))
    return words


# -- the views of a line of work ------------------------------------------------------------------
# Past this many parsed files in one registry, its views start over: a large tree is checked
# with bounded memory, at the price of parsing a neighbour again.
MAX_MODELS = 256


class Views:
    """The project views of one line of work, by project root, and the texts that stand in for
    files on disk (an editor's open buffers). Not shared between threads: the language server
    keeps one per worker thread."""

    def __init__(self) -> None:
        self._views: Dict[str, ProjectView] = {}
        self._texts: Dict[str, str] = {}

    def stand_in(self, path: str) -> Optional[str]:
        return self._texts.get(path)

    def paths(self) -> List[str]:
        return list(self._texts)

    def view(self, path: str, build: Build, named: Tuple[str, ...] = ()) -> ProjectView:
        """The view of ``path``'s project (made on first use); ``named``: see project_root."""
        root = project_root(path, named)
        view = self._views.get(root)
        if view is None:
            if sum(len(v._models) for v in self._views.values()) > MAX_MODELS:
                self._views.clear()
            view = self._views[root] = ProjectView(root, build, self)
        return view

    def set_texts(self, texts: Dict[str, str]) -> List[str]:
        """Makes ``texts`` (path -> text) the ones that stand in for files on disk; a path no
        longer among them is read from disk again. Returns the paths whose text changed."""
        new = {_key(path): text for path, text in texts.items()}
        old = self._texts
        changed = [p for p in new if old.get(p) is not new[p] and old.get(p) != new[p]]
        changed += [p for p in old if p not in new]
        self._texts = new
        for path in changed:
            self.changed(path)
        return changed

    def changed(self, path: str, created_or_deleted: bool = False) -> None:
        """A file changed (its stand-in text, or on disk): every view forgets what it read."""
        key = _key(path)
        for root, view in self._views.items():
            if key.startswith(root + os.sep):
                if created_or_deleted:
                    view.files_changed()
                view.changed(key)

    def forget(self) -> None:
        self._views.clear()


_VIEWS = Views()  # the command line's and the flake8 plugin's: one line of work per process


def project_view(path: str, build: Build, named: Tuple[str, ...] = ()) -> ProjectView:
    """The view of ``path``'s project in this process (made on first use)."""
    return _VIEWS.view(path, build, named)


def reread(path: str) -> None:
    """``path`` is to be read from disk again by this process's views: its text was checked in
    memory (rounds of --fix or --diff), and the next file checked must see the file as it is
    on disk, whichever process checks it."""
    _VIEWS.changed(path)


def forget_views() -> None:
    """Drops every view of this process (a file changed under them: tests)."""
    _VIEWS.forget()


def _table_names(value: cst.BaseExpression) -> List[str]:
    """The plain names a table display lists: the values of a dict and the elements of a
    list or tuple, displays nested in them included (`{"bert": (Config, Model, Tokenizer)}`)."""
    out: List[str] = []
    stack = [value]
    while stack:
        node = stack.pop()
        if type(node) is cst.Name:
            out.append(node.value)
        elif type(node) is cst.Dict:
            stack.extend(e.value for e in node.elements if type(e) is cst.DictElement)
        elif type(node) in (cst.List, cst.Tuple):
            stack.extend(e.value for e in node.elements if type(e) is cst.Element)
    return out
