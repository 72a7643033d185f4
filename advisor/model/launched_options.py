"""Command-line options that no command the project ships passes.

`if args.use_aux:` after `parser.add_argument("--use_aux", action="store_true")`: a plain run
keeps the default, so what the test guards runs only when someone asks for it. The project says
how it is run: its shell scripts, its READMEs, the Python launchers and notebooks that name the
script. When they show command lines for the script (a line that runs Python passes some other
option of the same parser) but none of them writes this option (nor a short alias of it), the guarded code is not
part of any run the project documents, as a config-node setting no config file turns on is not
(`config_nodes.left_off`). A user may still pass the option, so the answer only ever lowers a
finding. `--local_rank` is written by the launchers that start one process per GPU: it counts as
left off only when no command line for the script runs it through one (`torch.distributed.launch`,
`torchrun`, DeepSpeed, `accelerate launch`, MPI, Slurm's `srun`).

Only the files a cached result is checked against are read (`ProjectView.checked_against`:
its dependencies and the project's launch texts), so that a cached answer and a fresh one agree.
"""

from __future__ import annotations

import os
import re
import weakref
from collections import Counter
from typing import Dict, List, Optional, Sequence, Set, Tuple

# Options a launcher adds to the command line it runs (`--local_rank=N`), never written out.
_INJECTED = re.compile(r"^--?local[_-]rank$")
# What a command line writes for an option that is off.
_FALSE_VALUES = frozenset({"0", "0.0", "False", "false", "None", "none", "no", "off"})
# A flag written as a string (`"-a"`, `'--use_aux'`).
_FLAG = re.compile(r"""[rbuRBU]?['"](-{1,2}[A-Za-z][\w-]*)['"]""")
_QUOTED_FLAG = r"""[rbuRBU]?['"]-{1,2}[A-Za-z][\w-]*['"]"""
# `add_argument("-a", "--use_aux", ...)`: a call's flags, written together at its start.
_DEFINED = re.compile(r"add_argument\(\s*((?:%s\s*,\s*)*%s)" % (_QUOTED_FLAG, _QUOTED_FLAG))


def never_launched(model, option: str) -> bool:
    """The project documents how its options are passed (some launch text passes another option
    of the file that defines ``option``), and no text it ships passes ``option`` (`--use_aux`)
    or an alias of it, beyond the `add_argument` calls that define them. A script no text shows
    a command line for says nothing about which options its runs pass."""
    if not option.startswith("-") or model.project is None or model.real_path is None:
        return False
    if model.project.layout.launch_texts() is None:
        return False  # too many scripts and documents to read: it may be in any of them
    known: Dict[str, bool] = model.shared("launched-options", lambda m: {})
    answer = known.get(option)
    if answer is None:
        answer = known[option] = _never_launched(model, option)
    return answer


def _never_launched(model, option: str) -> bool:
    project = model.project
    paths, all_calls = model.shared("launched-option-texts", _texts_and_calls)
    calls = all_calls

    def text_of(path: str) -> str:
        return (model.text or "") if path == paths[0] else project.text_of(path)

    aliases: Set[str] = set()
    siblings: Set[str] = set()
    scripts: Set[str] = set()
    own_path = paths[0]
    if any(option in flags for flags in calls.get(own_path, ())):
        # The checked file defines the option: its own parser is the one asked about, not that
        # of another script that happens to define an option of the same name.
        calls = {own_path: all_calls[own_path]}
    for path, found in calls.items():
        if any(option in flags for flags in found):
            aliases.update(*(flags for flags in found if option in flags))
            siblings.update(*found)
            scripts.add(path)
    if not aliases:
        return False  # defined where no text shows (a dataclass, `**kwargs`): unknown
    siblings -= aliases
    # A command runs the file that defines the option, or one that imports it (`python
    # scripts/train.py` whose options come from `options/train_options.py`).
    nearby = set(paths)
    for path in list(scripts):
        scripts.update(project.importer_paths(path) & nearby)
    names = {os.path.basename(p) for p in scripts} | {
        n for n in map(project.layout.module_name, scripts) if n is not None and "." in n}
    injected = bool(_INJECTED.search(option))
    launch_names, launch_scripts = names, scripts
    if injected and paths[0] in scripts:
        # Whether a launcher starts this very script (or one importing it): other scripts of the
        # project that define their own `--local_rank` may well be launched distributed.
        own = {paths[0]} | (project.importer_paths(paths[0]) & nearby)
        launch_scripts = own
        launch_names = {os.path.basename(p) for p in own} | {
            n for n in map(project.layout.module_name, own) if n is not None and "." in n}
    documented = False
    for path in paths:
        text = text_of(path)
        defined = Counter(flag for flags in all_calls.get(path, ()) for flag in flags)
        if any(_passed_on(text, flag) > defined[flag] for flag in aliases) and not _runs_others_only(
                model, path, text, names, scripts) and _passed_to_ours(model, path, text, aliases, names, scripts):
            return False
        if injected and _LAUNCHERS.search(text) and any(
                _LAUNCHERS.search(line) and _line_runs_ours(line, launch_names, launch_scripts, path, project)
                for line in _command_lines(model, path, text, launch_names)):
            # `torch.distributed.launch` and DeepSpeed pass `--local_rank` to every process
            # they start: a command that runs the script through one passes it.
            return False
        documented = documented or (any(flag in text for flag in siblings) and any(
            any(_mentions(line, flag) for flag in siblings) for line in _command_lines(model, path, text, names)))
    return documented


_RUNS_PYTHON = re.compile(r"(?m)(?:^|[\s;&|(])(?:python3?|torchrun|deepspeed|accelerate[ \t]+launch)(?=\s)")


def _runs_others_only(model, path: str, text: str, names: Set[str], scripts: Set[str]) -> bool:
    """A shell script or document that runs Python scripts, none of them one that reads this
    parser (`python finetune.py --fp16` in another sub-project's script, `python
    src/tasks/vqa.py` where this parser's `vqa.py` is `VL-T5/src/vqa.py`): a flag it passes goes
    to another parser. Python files still count, and so does prose that runs nothing (advice)
    in the scripts' folder or one above it."""
    if path.endswith((".py", ".ipynb")):
        return False
    if not _RUNS_PYTHON.search(text):
        # Prose that runs nothing counts where it documents these scripts: in their folder or
        # one above (not another sub-project's README beside them).
        folder = os.path.dirname(os.path.abspath(path))
        return not any(os.path.dirname(s) == folder or os.path.dirname(s).startswith(folder + os.sep) for s in scripts)
    return not any(_line_runs_ours(line, names, scripts, path, model.project) for line in _command_lines(model, path, text, names))


def _passed_to_ours(model, path: str, text: str, flags: Set[str], names: Set[str], scripts: Set[str]) -> bool:
    """In a shell script or document that runs Python, some line that writes one of ``flags``
    may run one of ``scripts``: a line that names other scripts only (`python -m
    torch.distributed.launch main_pretrain.py --gradient_accumulation_steps 16` in a README that
    also runs `main_task_caption.py` without it) passes the flag to another parser. A line that
    names no script at all (`python $SCRIPT ...`, advice in prose) may be ours."""
    if path.endswith((".py", ".ipynb")) or not _RUNS_PYTHON.search(text):
        return True
    for line in _lines(model, path, text):
        if any(_passed_on(line, flag) for flag in flags) and not _runs_other_scripts(line, names, scripts):
            return True
    return False


_SCRIPT_PATH = re.compile(r"[\w./${}-]*\.py\b")
_MODULE_RUN = re.compile(r"(?<![\w-])-m[ \t]+([\w.]+)")


def _runs_other_scripts(line: str, names: Set[str], scripts: Set[str]) -> bool:
    """The line names scripts (`.py` paths, `-m pkg.mod` other than a launcher's), and none of
    them is one of ``scripts``."""
    named = _SCRIPT_PATH.findall(line)
    modules = [m for m in _MODULE_RUN.findall(line) if not m.startswith("torch.")]
    if not named and not modules:
        return False
    if any(n.rsplit("/", 1)[-1] in names for n in named) and _line_runs_ours(line, names, scripts):
        return False
    return not any(m in names or m.rsplit(".", 1)[-1] + ".py" in names for m in modules)


def _line_runs_ours(line: str, names: Set[str], scripts: Set[str], text_path: Optional[str] = None,
                    project=None) -> bool:
    """A command line that names one of ``names`` runs one of ``scripts`` unless every path it
    names the script by leads elsewhere (`src/tasks/vqa.py` where the script is `VL-T5/src/vqa.py`,
    another sub-project's script of the same name), or, named bare (`python run.py`), in a
    document (``text_path``) whose folder holds another script of that name and none of
    ``scripts`` (another task's README, run after `cd code` in its own folder)."""
    ours = {p.replace(os.sep, "/") for p in scripts}
    paths = [t for t in re.findall(r"[\w./-]+", line) if "/" in t and t.rsplit("/", 1)[-1] in names]
    if not paths:
        # a bare name (`python train.py`), or a module (`python -m pkg.train`)
        if text_path is None or project is None or not text_path.endswith(_DOCUMENTS):
            return True
        folder = os.path.dirname(os.path.abspath(text_path)) + os.sep
        if any(os.path.abspath(s).startswith(folder) for s in scripts):
            return True
        return not any(os.path.basename(f) in names and os.path.abspath(f).startswith(folder)
                       for f in _named_files(project, names))
    return any(any(p.endswith("/" + t.lstrip("./")) for p in ours) for t in paths)


_DOCUMENTS = (".md", ".rst", ".txt")


# layout -> {file name: the project's files of that name}: read once per file list, not per line.
_BY_NAME: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()


def _named_files(project, names: Set[str]) -> List[str]:
    """The project's Python files with one of ``names`` as their file name."""
    layout = project.layout
    index = _BY_NAME.get(layout)
    if index is None:
        index = {}
        for path in layout.files():
            index.setdefault(os.path.basename(path), []).append(path)
        _BY_NAME[layout] = index
    return [f for name in sorted(names) if name.endswith(".py") for f in index.get(name, ())]


# Launchers that start one process per GPU and hand each its `--local_rank`.
_LAUNCHERS = re.compile(
    r"torch\.distributed\.(?:launch|run)|torchrun|deepspeed|accelerate\s+launch|mpirun|mpiexec|srun|horovodrun"
    r"|nproc[_-]per[_-]node|--launcher")


def documented_values(reader, defining_path: str, flags: Sequence[str]) -> List[str]:
    """What the command lines of the project's launch texts (READMEs, shell scripts, notebooks;
    not Python files) write after one of ``flags`` when they run the file that defines them, or one
    that imports it (`python oscar/run_vqa.py -j 4 ...` in a `MODEL_ZOO.md`), as written (an
    empty string for a bare switch). Read from what the reader's cached result is checked
    against."""
    project = reader.project
    if project is None or reader.real_path is None or project.layout.launch_texts() is None:
        return []
    paths, _ = reader.shared("launched-option-texts", _texts_and_calls)
    own = os.path.normpath(os.path.abspath(defining_path))
    scripts = {own} | (project.importer_paths(own) & set(paths))
    names = {os.path.basename(p) for p in scripts} | {
        n for n in map(project.layout.module_name, scripts) if n is not None and "." in n}
    patterns = [re.compile(r"(?<![\w-])%s(?![\w-])(?:=|[ \t]+)?(\S*)" % re.escape(flag)) for flag in flags]
    found: List[str] = []
    for path in paths:
        if path.endswith(".py"):
            continue  # prose in docstrings and argument lists of launchers: not command lines to read values from
        text = project.text_of(path)
        if not any(flag in text for flag in flags):
            continue
        for line in _command_lines(reader, path, text, names):
            if not _line_runs_ours(line, names, scripts, path, project):
                continue  # another sub-project's script of the same name
            for pattern in patterns:
                found.extend(expanded_value(text, match.group(1)) for match in pattern.finditer(line))
    return found


_SHELL_VARIABLE = re.compile(r"^\$\{?(\w+)\}?$")


def expanded_value(text: str, value: str) -> str:
    """`${WORKERS}` where the script sets `WORKERS=4` at the start of a line (once, or always to
    that value): `4`; the value as written otherwise (a variable set to several values, or not
    in this text, stays one)."""
    match = _SHELL_VARIABLE.match(value.strip("'\""))
    if match is None:
        return value
    sets = re.findall(r"(?m)^\s*(?:export\s+)?%s=(\S+)" % re.escape(match.group(1)), text)
    # Set more than once to the same value (a README's two snippets, each setting it): that value.
    return sets[0] if sets and len(set(sets)) == 1 else value


_SHELL_SET = re.compile(r"(?m)^[ \t]*(?:export[ \t]+)?([A-Za-z_]\w*)=(\S*)")


def _expanded_variables(text: str) -> str:
    """The shell text with `${NAME}` and `$NAME` replaced by the value of each variable it sets
    once, at the start of a line, to a plain word (`task=multitask`, `SCRIPT="train.py"`); others
    stay as written."""
    counts: Dict[str, List[str]] = {}
    for name, value in _SHELL_SET.findall(text):
        counts.setdefault(name, []).append(value)
    plain = {name: values[0].strip("'\"") for name, values in counts.items()
             if len(values) == 1 and re.fullmatch(r"['\"]?[\w./-]+['\"]?", values[0])}
    if not plain:
        return text
    return re.sub(r"\$\{(\w+)\}|\$(\w+)", lambda m: plain.get(m.group(1) or m.group(2), m.group(0)), text)


def _texts_and_calls(model) -> Tuple[List[str], Dict[str, List[List[str]]]]:
    """The files read (the checked file first, then what a cached result is checked against),
    and the flags of each `add_argument` call of each Python text (`"-a", "--use_aux"`): worked
    out once per file, whatever the number of options its guards test."""
    project = model.project
    own = os.path.normpath(os.path.abspath(model.real_path))
    paths = list(dict.fromkeys([own, *(os.path.normpath(os.path.abspath(p))
                                       for p in project.checked_against(model.real_path))]))
    calls: Dict[str, List[List[str]]] = {}
    for path in paths:
        if not path.endswith((".py", ".ipynb")):
            continue
        text = (model.text or "") if path == own else project.text_of(path)
        if "add_argument" in text:
            calls[path] = [_FLAG.findall(found.group(1)) for found in _DEFINED.finditer(text)]
    return paths, calls


def _command_lines(model, path: str, text: str, scripts: Set[str]):
    """The lines of ``text`` (a backslash continues one) that run one of ``scripts`` (`python
    train.py --lr 0.1`, `torchrun ... train.py`, `python -m pkg.train`, `["python",
    "train.py", ...]`), outside the `add_argument` calls that define options. The lines of each
    text are made once per checked file, whatever the number of options asked."""
    for line in _lines(model, path, text):
        if any(name in line and re.search(r"(?<![\w.-])%s\b" % re.escape(name), line) for name in scripts):
            yield line


_CONTINUED = re.compile(r"\\[ \t]*\r?\n")


def _lines(model, path: str, text: str) -> List[str]:
    """The lines of ``text``, a backslash continuing one, with shell variables set once expanded
    in a shell script, outside the `add_argument` calls that define options: made once per text
    and checked file."""
    known: Dict[str, List[str]] = model.shared("launched-option-lines", lambda m: {})
    lines = known.get(path)
    if lines is None:
        joined = _CONTINUED.sub(" ", text)  # also `\ ` before the line end, as READMEs often have it
        if path.endswith((".sh", ".bash")):
            joined = _expanded_variables(joined)  # `python src/${task}.py` after `task=multitask`
        lines = known[path] = _DEFINED.sub("", joined).splitlines()
    return lines


def _passed_on(text: str, flag: str) -> int:
    """How many times ``text`` writes ``flag``, leaving out where a false value follows it
    (`--w_norm_lambda=0`, `--use_ema False`): such a command keeps the switch off."""
    if flag not in text:
        return 0
    count = 0
    for found in re.finditer(r"(?<![\w-])%s(?![\w-])(?:=|[ \t]+)?([^\s\\;|&]*)" % re.escape(flag), text):
        if found.group(1).strip("'\"") not in _FALSE_VALUES:
            count += 1
    return count


def _mentions(text: str, flag: str) -> int:
    if flag not in text:
        return 0
    return len(re.findall(r"(?<![\w-])%s(?![\w-])" % re.escape(flag), text))
