"""How many processes the runs the project documents start for a script.

timm's training scripts, and the many projects built on them, read a loss with `.item()` every
step only `if not args.distributed:`, and fall back to `nn.DataParallel` in the `else` of their
launch test. When every command line the project ships for the script starts it through a
launcher with several processes per node (`python -m torch.distributed.launch
--nproc_per_node=8 train.py ...`, or `./distributed_train.sh 8 ...` whose shell script passes
its first argument as the process count), those single-process arms run in none of its runs.

A script that spawns a process per GPU itself when told to (`python main_moco.py
--multiprocessing-distributed ...`, PyTorch's ImageNet example) counts as several. A command
line that starts one process (`python train.py ...`), or a launcher whose process count the text
does not give, makes the answer no. Lines that only evaluate (`--evaluate`,
`--eval-only`) train nothing and are not counted. A script no launch text shows a command line
for says nothing. The texts read are those a cached result is checked against
(`launched_options._texts_and_calls`).
"""

from __future__ import annotations

import os
import re
from typing import Optional, Set

from advisor.model.launched_options import (
    _RUNS_PYTHON, _command_lines, _line_runs_ours, _lines, _texts_and_calls, expanded_value,
)

_NPROC = re.compile(r"--nproc[_-]per[_-]node(?:=|[ \t]+)(\S+)")
# Launchers that start one process unless told the count.
_ONE_BY_DEFAULT = re.compile(r"torch\.distributed\.(?:launch|run)|torchrun")
# Launchers whose process count comes from elsewhere (the machine, a hostfile, Slurm).
_COUNT_ELSEWHERE = re.compile(r"deepspeed|accelerate[ \t]+launch|mpirun|mpiexec|srun|horovodrun|--launcher")
# Runs that evaluate a checkpoint and train nothing.
_EVALUATION_ONLY = re.compile(r"(?<![\w-])--?(?:evaluate|eval[_-]only|test[_-]only|inference)(?![\w-])")
# The switch of PyTorch's ImageNet example and the scripts built on it (MoCo, SimSiam): the
# script spawns one process per GPU itself (`mp.spawn(main_worker, nprocs=ngpus_per_node)`).
_SPAWNS_PER_GPU = re.compile(r"(?<![\w-])--multiprocessing[-_]distributed(?![\w-])(?![ \t=]+(?:0|False|false)\b)")
_POSITIONAL = re.compile(r"^\$\{?(\d)\}?$")


def every_run_several_processes(model) -> bool:
    """Every training command line the project's launch texts show for ``model``'s script (or a
    script importing it) starts several processes, and there is at least one."""
    if model.project is None or model.real_path is None or model.project.layout.launch_texts() is None:
        return False
    return model.shared("every-run-several-processes", _every_run_several)


def _every_run_several(model) -> bool:
    seen = False
    for path, text, line in _training_lines(model):
        count = _processes(model, path, text, line)
        if count is None or count < 2:
            return False
        seen = True
    return seen


def _training_lines(model):
    """(launch text, its text, command line) for each command line of the project's shell
    scripts and documents that runs ``model``'s script (or one importing it) to train: lines
    that only evaluate are left out."""
    project = model.project
    paths, _ = model.shared("launched-option-texts", _texts_and_calls)
    own = paths[0]
    scripts = {own} | (project.importer_paths(own) & set(paths))
    names = _names(project, scripts)
    for path in paths:
        if path.endswith((".py", ".ipynb")):
            continue
        text = project.text_of(path)
        for line in _command_lines(model, path, text, names):
            if not _RUNS_PYTHON.search(line) or not _line_runs_ours(line, names, scripts, path, project):
                continue
            if not _EVALUATION_ONLY.search(line):
                yield path, text, line


def every_run_one_visible_gpu(model) -> bool:
    """Every training command line the project's launch texts show for ``model``'s script (or a
    script importing it) makes a single GPU visible to it (`CUDA_VISIBLE_DEVICES=0 python
    run.py`, or a shell script that exports one id before its command lines), and there is at
    least one: `torch.cuda.device_count()` is 1 in every shipped run."""
    if model.project is None or model.real_path is None or model.project.layout.launch_texts() is None:
        return False
    return model.shared("every-run-one-visible-gpu", _every_run_one_visible)


def _every_run_one_visible(model) -> bool:
    seen = False
    for path, text, line in _training_lines(model):
        inline = _INLINE_DEVICES.search(line)
        ids = [inline.group(1)] if inline is not None else [m.group(1) for m in _EXPORTED_DEVICES.finditer(text)]
        if not ids or not all(_ONE_ID.match(value) for value in ids) or _processes(model, path, text, line) != 1:
            return False
        seen = True
    return seen


# `CUDA_VISIBLE_DEVICES=0` on a command line, or set on a line of its own (`export ...="0"`).
_INLINE_DEVICES = re.compile(r"(?<![\w$])CUDA_VISIBLE_DEVICES=(\S*)")
_EXPORTED_DEVICES = re.compile(r"(?m)^[ \t]*(?:export[ \t]+)?CUDA_VISIBLE_DEVICES=(\S*)[ \t]*$")
_ONE_ID = re.compile(r"""^['"]?\d+['"]?$""")


def _names(project, scripts: Set[str]) -> Set[str]:
    return {os.path.basename(p) for p in scripts} | {
        n for n in map(project.layout.module_name, scripts) if n is not None and "." in n}


def _processes(model, path: str, text: str, line: str) -> Optional[int]:
    """How many processes the command line starts: None when the text does not say."""
    if _SPAWNS_PER_GPU.search(line):
        return 2  # the script spawns one process per GPU of the machine itself
    found = _NPROC.search(line)
    if found is not None:
        value = found.group(1).strip("'\"")
        if value.isdigit():
            return int(value)
        return _wrapper_argument(model, path, text, value)
    if _COUNT_ELSEWHERE.search(line):
        return None
    return 1  # `python train.py`, or a launcher left at its one process


def _wrapper_argument(model, path: str, text: str, value: str) -> Optional[int]:
    """`--nproc_per_node=$NUM_PROC` in a shell script that sets `NUM_PROC=$1`: the smallest count
    the project's command lines running that script pass as that argument (`./distributed_train.sh
    8 /data ...`), or None when some pass none, or another value, or none run it."""
    if not path.endswith((".sh", ".bash")):
        return None
    name = re.match(r"^\$\{?(\w+)\}?$", value)
    if name is None:
        return None
    position = _POSITIONAL.match(value)
    if position is None:
        sets = re.findall(r"(?m)^[ \t]*(?:export[ \t]+)?%s=(\S+)" % re.escape(name.group(1)), text)
        position = _POSITIONAL.match(sets[0].strip("'\"")) if len(sets) == 1 else None
    if position is None:
        return None
    index = int(position.group(1))
    wrapper = os.path.basename(path)
    project = model.project
    paths, _ = model.shared("launched-option-texts", _texts_and_calls)
    counts = []
    for other in paths:
        if other == path or other.endswith((".py", ".ipynb")):
            continue
        other_text = project.text_of(other)
        if wrapper not in other_text:
            continue
        for line in _lines(model, other, other_text):
            words = line.split()
            at = next((i for i, w in enumerate(words) if os.path.basename(w) == wrapper), None)
            if at is None:
                continue
            given = expanded_value(other_text, words[at + index]) if at + index < len(words) else ""
            given = given.strip("'\"")
            if not given.isdigit():
                return None
            counts.append(int(given))
    return min(counts) if counts else None
