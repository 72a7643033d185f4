"""Flags that keep their constructor's false default on every path the project can take.

`if self.with_cp and x.requires_grad:` in a block built by a registry, or `if self.immiscible:`
in a library class whose only subclass hands `*args, **kwargs` on to it: the plain value flow
sees no construction that decides the flag, so it does not know it. It is still off unless
something in the project turns it on. Two conditions, both needed:

- followed as the project's own code makes the object (`literals.DefaultedLiterals`: a
  parameter no call passes has its default, a spread of the `*args`/`**kwargs` of a function
  nobody calls passes nothing), every value of the flag is false; calls that pass it by
  position, from an option or a config read, keep it unknown;
- no file of the project near this one (the files a cached answer depends on) gives the
  attribute, or the parameter it is set from, anything but a false constant or the name
  passed on as it is (`with_cp=with_cp`): a config file that says `with_cp=True` for a block a
  registry builds keeps it on.
"""

from __future__ import annotations

import os
import re
from typing import Dict, FrozenSet, Optional

import libcst as cst

from advisor.model.facts import Context
from advisor.model.config_nodes import left_off
from advisor.model.literals import defaulted_literals
from advisor.model.names import dotted_name
from advisor.model.text_calls import test_of

_DOCSTRINGS = re.compile(r'"""[\s\S]*?"""|\'\'\'[\s\S]*?\'\'\'')
_STRINGS = re.compile(r"\"[^\"\n]*\"|'[^'\n]*'")
# What a false setting looks like where it is written: Python's and the config formats'.
_FALSE = frozenset({"False", "None", "0", "0.0", '""', "''", "false", "null"})


def keeps_false_default(model, expr: cst.BaseExpression, ctx: Context, order: float) -> bool:
    """``expr`` is `self.<flag>` that no run of the project turns on (see the module doc)."""
    name = dotted_name(expr)
    if name is None or not name.startswith("self.") or name.count(".") != 1:
        return False
    found = defaulted_literals(model, expr, ctx, order)
    if not (found.values or found.settings) or any(value for _, value in found.values):
        return False
    off = found.settings if found.settings and _settings_left_off(model, found.settings) else frozenset()
    if not found.complete and not (found.covered and off):
        return False
    if found.option is not None and not left_off(model, found.option):
        return False
    known: Dict[tuple, bool] = model.shared("default-flags", lambda m: {})
    key = (name, found.option, off)
    answer = known.get(key)
    if answer is None:
        answer = known[key] = _not_turned_on(model, name, found.option, off)
    return answer


def module_setting_off(model, expr: cst.BaseExpression) -> bool:
    """`if cfg.use_focal_loss:` where `cfg` is an object a settings module of the project builds
    at its top and the file imports (`from data import cfg`), the module writes the setting
    with a false value (`'use_focal_loss': False` in the dict the object is built from), and no
    text near either file, no config file and no launch command gives it anything else: every
    config the module offers, whichever a run selects, leaves it off."""
    if type(expr) is not cst.Attribute or type(expr.value) is not cst.Name or expr.value.value in ("self", "cls"):
        return False
    qual = model.imports.qualify(expr.value)
    symbol = model.symbol(qual) if qual is not None else None
    if symbol is None or symbol.kind != "value" or symbol.model is model:
        return False
    flag = expr.attr.value
    known: Dict[tuple, bool] = model.shared("module-settings-off", lambda m: {})
    key = (qual, flag)
    answer = known.get(key)
    if answer is None:
        answer = known[key] = _module_setting_off(model, symbol.model, flag)
    return answer


def _module_setting_off(model, owner, flag: str) -> bool:
    written = re.compile(r"""['"]%s['"]\s*:\s*(?:False|None|0)\b|(?<![\w])\.?%s\s*=\s*(?:False|None|0)\b""" % (
        re.escape(flag), re.escape(flag)))
    if not written.search(owner.text or ""):
        return False  # no default written where the object is built: a setting the analysis cannot see
    project = model.project
    if project is None or not (never_given_true(model, flag, {flag}) and never_given_true(owner, flag, {flag})):
        return False
    if project.sets_in_configs(flag):
        return False
    launches = project.layout.launch_texts()
    if launches is None:
        return False
    dashed = "|".join(re.escape(w) for w in sorted({flag, flag.replace("_", "-")}))
    return not any(re.search(r"--(?:%s)\b" % dashed, project.text_of(t)) for t in launches)


def _settings_left_off(model, settings) -> bool:
    """Every setting read on the other paths (`cfg['BACKBONE']['FOCAL']['USE_CHECKPOINT']` of a
    dict loaded from YAML) is given a value by some config file of the project, and only false
    ones: the shipped configs all leave it off."""
    project = model.project
    return project is not None and all(project.sets_only_false_in_configs(name) for name in settings)


def _not_turned_on(model, name: str, setting: Optional[str] = None, settings: FrozenSet[str] = frozenset()) -> bool:
    """No text near the file turns the attribute on, nor the parameters it is set from (a
    config setting left off, ``setting``, may be handed to it: `use_checkpoint=cfg.MODEL.SWIN.
    USE_CHECKPOINT`; so may a read of a key the config files leave off, one of ``settings``:
    `use_checkpoint = cfg['BACKBONE']['FOCAL']['USE_CHECKPOINT']`)."""
    attribute = name.partition(".")[2]
    # `with_cp=self.with_cp`: another block's flag of the same name, handed on as it is.
    passed = {attribute, "self." + attribute} | ({setting} if setting is not None else set())
    accepted = frozenset()
    if attribute == "gradient_checkpointing":
        if _checkpointing_enabled_by_library(model):
            return False
        # Hugging Face's setter (`module.gradient_checkpointing = value` in
        # `_set_gradient_checkpointing`) runs only when the library is asked to turn it on.
        accepted = _SETTER_PARAMETERS
    for (_, target), found in model.facts.assignments.items():
        if target == name:
            passed.update(a.value.value for a in found if type(a.value) is cst.Name)
    return all(never_given_true(model, word, passed | accepted, settings) for word in passed)


# Hugging Face turns `gradient_checkpointing` on in every submodule that has the attribute when
# a model that supports it is asked to: by the Trainer's `gradient_checkpointing` argument, set
# in a config file or on a command line the code never names.
_ENABLE_CALL = re.compile(r"\.gradient_checkpointing_enable\(")
_SETTER_PARAMETERS = frozenset({"value", "enable"})


def _checkpointing_enabled_by_library(model) -> bool:
    """A model of the project supports Hugging Face's checkpointing switch (the file, or a file
    near it, says so), and the project turns it on: a call of `gradient_checkpointing_enable()`,
    or a config file or launch script that turns the Trainer's `gradient_checkpointing` on (the
    config files are then dependencies of the file)."""
    project = model.project
    if project is None or model.real_path is None:
        return False
    if "supports_gradient_checkpointing" not in (model.text or "") and not any(
            os.path.normpath(os.path.abspath(p)) in _nearby(model)
            for p in project.files_containing("supports_gradient_checkpointing")):
        return False
    if _ENABLE_CALL.search(model.text or "") or any(
            os.path.normpath(os.path.abspath(p)) in _nearby(model) and _ENABLE_CALL.search(project.text_of(p))
            for p in project.files_containing("gradient_checkpointing_enable(")):
        return True  # `model.gradient_checkpointing_enable()`
    return project.sets_in_configs("gradient_checkpointing")


def _nearby(model) -> frozenset:
    return model.shared("default-flags-nearby", lambda m: frozenset(
        os.path.normpath(os.path.abspath(p)) for p in m.project.dependencies(m.real_path)))


def never_given_true(model, word: str, passed, settings: FrozenSet[str] = frozenset()) -> bool:
    """No text near this file gives ``word`` a value other than a false constant, one of the
    names in ``passed`` handed on as it is, or a read of one of the keys ``settings`` that the
    config files leave off: as an attribute, a keyword, a default, a dict key or through
    `setattr`."""
    escaped = re.escape(word)
    # `.with_cp = v`, `with_cp=v`, `with_cp: bool = v`, `with_cp |= v`
    set_code = re.compile(r"(?<![\w])\.?%s\s*(?::[^=\n]*)?([-+*/|&]?=)(?!=)\s*([^\s,)\]}#;]*)" % escaped)
    # `{"with_cp": v}`, `setattr(m, "with_cp", v)`, `getattr(cfg, "with_cp", False)`
    keyed = re.compile(r"['\"]%s['\"]\s*[:,]\s*([^\s,)\]}#;]*)" % escaped)

    attribute = word.rpartition(".")[2]

    def false(value: str) -> bool:
        # `use_checkpoint = cfg.MODEL.LANGUAGE_BACKBONE.USE_CHECKPOINT`: a config node's
        # setting that no config file turns on is as false as its default; `with_cp=
        # config.with_cp` hands on a settings object's flag of the same name, which the
        # follower has already found off (a command-line option never gets this far).
        return value in _FALSE or value in passed or ("." in value and (
            left_off(model, value) or (value.count(".") == 1 and value.endswith("." + attribute)
                                       and value.partition(".")[0] == "config")))

    def sets_true(text: str, own: bool) -> bool:
        # Strings blanked in place, so that a match's position is the same in the text.
        # Docstrings first (`with_cp=True` in a usage example turns nothing on), kept line for line.
        code = _DOCSTRINGS.sub(lambda m: re.sub(r"[^\n]", " ", m.group(0)), text)
        code = _STRINGS.sub(lambda m: m.group(0)[0] + "\0" * (len(m.group(0)) - 2) + m.group(0)[-1], code)
        for match in set_code.finditer(code):
            operator, value = match.group(1), _BLANKED.sub('""', match.group(2))
            if "#" in code[code.rfind("\n", 0, match.start()) + 1:match.start()]:
                continue  # in a comment (`# with_cp=True` beside the setting in use)
            if not own and (word.startswith("self.") or _own_attribute(code, match.start())):
                continue  # `self.use_checkpoint = ...` in another module: its own class's flag
            if operator == "=" and settings and _reads_key(text, match.start(2), settings):
                continue
            if operator != "=" or not false(value):
                return True
        return any(not false(value) for value in keyed.findall(text))

    if sets_true(model.text or "", True):
        return False
    project = model.project
    if project is None or model.real_path is None:
        return True
    # Only the files a cached answer depends on, so that a cached answer and a fresh one agree.
    nearby = {os.path.normpath(os.path.abspath(p)) for p in project.dependencies(model.real_path)}
    for path in project.files_containing(word):
        if os.path.normpath(os.path.abspath(path)) in nearby and sets_true(
                project.text_of(path), _builds_on(model, project.text_of(path))):
            if test_of(project, path, model):
                continue  # a test that builds the block with the flag on is not a run
            return False
    # The config files among them (a remote-code model's `config.json`, `with_cp: true` in a
    # YAML file): a key of this name given a value that is not false.
    setting = re.compile(r"""(?m)(?:^\s*|['"])%s['"]?\s*:\s*['"]?([^\s,'"}\]#]+)""" % escaped)
    # Only those in the module's folder or a folder above it: a `config.json` beside a model,
    # not another component's YAML elsewhere that reuses the key's name.
    here = os.path.dirname(os.path.normpath(os.path.abspath(model.real_path)))
    for path in sorted(nearby):
        folder = os.path.dirname(path)
        if not (here == folder or here.startswith(folder + os.sep)):
            continue
        if path.endswith(_CONFIG_SUFFIXES) and word in project.text_of(path):
            if any(value not in _FALSE and value not in ("no", "off") for value in setting.findall(project.text_of(path))):
                return False
    return True


_CONFIG_SUFFIXES = (".json", ".yaml", ".yml", ".toml")


_BLANKED = re.compile(r"(['\"])\0*\1")
_KEY_READ = re.compile(r"""(?:\[\s*|\.get\(\s*)['"](\w+)['"]""")


_ATTRIBUTE_READ = re.compile(r"[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+")


def _reads_key(text: str, start: int, keys: FrozenSet[str]) -> bool:
    """The value stored at ``start`` reads one of ``keys`` last (`cfg['BACKBONE']['FOCAL']
    ['USE_CHECKPOINT']`, `spec.get('ENABLE_CHECKPOINT', False)`, or as an attribute of a
    settings object loaded from YAML, `cfg.optim.check_nan`)."""
    end = text.find("\n", start)
    line = text[start:end if end >= 0 else len(text)]
    attribute = _ATTRIBUTE_READ.match(line)
    if attribute is not None and attribute.group(0).rsplit(".", 1)[-1] in keys and not line[attribute.end():].lstrip().startswith(("(", "[", ".")):
        return True
    found = _KEY_READ.findall(line)
    return bool(found) and found[-1] in keys


def _own_attribute(code: str, start: int) -> bool:
    """The store at ``start`` is `self.<flag> = ...`: an attribute of the class it is written in."""
    head = code[max(0, start - 5):start + 1]
    return head.endswith("self.") or head[:-1].endswith("self.")


def _builds_on(model, text: str) -> bool:
    """Another module's text derives a class from one of this module's (`class
    MyBlock(SwinBlock):`): its `self.<flag>` stores then set ours."""
    bases = _CLASS_BASES.findall(text)
    if not bases:
        return False
    own = set(model.facts.classes)
    return any(name.strip().rpartition(".")[2] in own for found in bases for name in found.split(","))


_CLASS_BASES = re.compile(r"^\s*class\s+\w+\s*\(([^)]*)\)", re.MULTILINE)


def seen_turned_on(model, word: str, depth: int = 1, in_config: bool = False) -> bool:
    """Some text of the project plainly turns the flag ``word`` on: a true constant given to it
    in this file or a file near it (`use_checkpoint=True`, `"with_cp": True`,
    `model.gradient_checkpointing = True`), the library setter called (`gradient_checkpointing_
    enable()`), a config file giving it a value that is not false, or a launch text passing it
    (`--use_checkpoint`, `--gradient_checkpointing True`). Where the flag's value is only handed
    on (`use_checkpoint=use_checkpoint`), nothing is seen. With ``in_config``, the flag is read
    from a model's config object (`getattr(self.config, "gradient_checkpointing", False)`): the
    library setters and the Trainer's options turn the modules' switch on, not the config's, so
    only a true constant or a config file counts."""
    known: Dict[tuple, bool] = model.shared("default-flags-seen-on", lambda m: {})
    key = (word, depth, in_config)  # asked one step back, a word looks no further back than that
    answer = known.get(key)
    if answer is None:
        known[key] = False  # a flag handed on from itself
        answer = known[key] = _seen_turned_on(model, word, in_config) or (depth > 0 and any(
            seen_turned_on(model, source, depth - 1, in_config) for source in _handed_from(model, word)))
    return answer


def _handed_from(model, word: str) -> set:
    """The options a flag is set from in this file or a file near it (`use_checkpoint=
    args.grad_ckpt`, `self.with_cp = cfg.checkpointing`): their last names."""
    handed = re.compile(r"(?<![\w])\.?%s\s*=(?!=)\s*([A-Za-z_][\w.]*)" % re.escape(word))
    texts = [model.text or ""]
    project = model.project
    if project is not None and model.real_path is not None:
        nearby = _nearby(model)
        texts += [project.text_of(p) for p in project.files_containing(word)
                  if os.path.normpath(os.path.abspath(p)) in nearby]
    found = {match.group(1).rpartition(".")[2] for text in texts for match in handed.finditer(text)
             if not _in_setter(text, match.start())}
    return {f for f in found if f != word and f not in _FALSE and f not in ("True", "true")}


def _in_setter(text: str, at: int) -> bool:
    """The store sits in a checkpointing setter's body (`def set_grad_checkpointing(self,
    enable=True): self.grad_checkpointing = enable`): it turns the flag on only where the setter
    is called, which `_CHECKPOINTING_SETTERS` looks for; its parameter's default says nothing."""
    defined = _DEFS.findall(text, 0, at)
    return bool(defined) and _SETTER_NAME.search(defined[-1]) is not None


_DEFS = re.compile(r"^[ \t]*def[ \t]+(\w+)", re.MULTILINE)
_SETTER_NAME = re.compile(r"^_?(?:set_grad(?:ient)?_checkpointing|(?:enable_)?gradient_checkpointing(?:_enable)?)$")


# The libraries' switches for checkpointing, called to turn it on (not with `False`).
_CHECKPOINTING_SETTERS = re.compile(
    r"\.(?:gradient_checkpointing_enable|set_grad_checkpointing|enable_gradient_checkpointing)\((?!\s*(?:enable\s*=\s*)?False)")


def _seen_turned_on(model, word: str, in_config: bool = False) -> bool:
    # A config's switch is set on the config (`config.gradient_checkpointing = True`, a keyword of
    # its constructor, a key of its JSON file), not on a module (`self.gradient_checkpointing = True`).
    before = r"""(?:(?<=config\.)|(?<![\w.]))""" if in_config else r"(?<![\w])"
    given = re.compile(before + r"""['"]?%s['"]?\s*(?::\s*bool\s*)?[=:]\s*(?:True|true|1)\b""" % re.escape(word))
    setter = _CHECKPOINTING_SETTERS if "checkpointing" in word and not in_config else None

    def turns_on(text: str) -> bool:
        code = _DOCSTRINGS.sub("", text)
        # A setter that hands its argument on to another (`def set_grad_checkpointing(self,
        # enable=True): self.visual.set_grad_checkpointing(enable)`) turns nothing on itself.
        return bool(given.search(code)) or (setter is not None and any(
            not _in_setter(code, match.start()) for match in setter.finditer(code)))

    if turns_on(model.text or ""):
        return True
    project = model.project
    if project is None or model.real_path is None:
        return False
    # The files near this one, and the Python config modules (`configs/seg/upernet.py` with
    # `with_cp=True`: `ProjectView.python_configs`, dependencies of a file that checkpoints).
    readable = _nearby(model) | frozenset(os.path.normpath(os.path.abspath(p)) for p in project.python_configs())
    if any(os.path.normpath(os.path.abspath(p)) in readable and turns_on(project.text_of(p))
           for p in project.files_containing(word)):
        return True
    if project.sets_in_configs(word):
        return True
    if in_config:
        return False  # a command-line option reaches the run's options, not a model's config
    if project.layout.launch_texts() is None:
        return True  # too many commands to read: one may pass it
    dashed = {word, word.replace("_", "-")}
    passed = re.compile(r"--(?:%s)(?:[ =](?:True|true|1)\b|(?=[\s\\'\"]|$))" % "|".join(map(re.escape, sorted(dashed))),
                        re.MULTILINE)
    return any(passed.search(project.text_of(t)) for t in project.layout.launch_texts() or ())
