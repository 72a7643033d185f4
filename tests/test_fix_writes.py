"""`advisor check --fix` never damages what it writes: protected files, links, owners, encodings,
line endings and a notebook's JSON layout, run as a user runs it (a subprocess)."""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

import advisor

# Three safe fixes, one of which adds a line (set_epoch), and two findings that stay: GPU204
# (an unsafe fix) and GPU101 (no fix).
TRAIN = (
    "import torch\n"
    "from torch.utils.data import DataLoader\n"
    "from torch.utils.data.distributed import DistributedSampler\n"
    "\n"
    "sampler = DistributedSampler(ds)\n"
    "loader = DataLoader(ds, batch_size=4, sampler=sampler, num_workers=2)\n"
    "for epoch in range(10):\n"
    "    for x, y in loader:\n"
    "        x = x.cuda()\n"
    "        loss = model(x).mean()\n"
    "        loss.backward()\n"
    "        optimizer.step()\n"
    "        total += loss.item()\n"
)
FIXED = (
    TRAIN.replace("num_workers=2)", "num_workers=2, pin_memory=True)")
    .replace("    for x, y", "    sampler.set_epoch(epoch)\n    for x, y")
    .replace("x.cuda()", "x.cuda(non_blocking=True)")
)


def advisor_run(*args, cwd: Path, **kwargs) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "advisor", *map(str, args)], cwd=cwd, capture_output=True,
                          text=True, **kwargs)


def lines_about(text: str, name: str):
    return [line for line in text.splitlines() if name in line]


def notebook(loop_as_list: bool = True) -> dict:
    setup, loop = TRAIN.split("for epoch")
    loop = "for epoch" + loop
    return {
        "cells": [
            {"cell_type": "markdown", "metadata": {}, "source": ["# Tr\u00e4ning \u2014 caf\u00e9\n", "notes"]},
            {"cell_type": "code", "execution_count": 1, "metadata": {}, "outputs": [],
             "source": setup.splitlines(keepends=True)[:-1] + ["# \u00fcber\n", setup.splitlines()[-1]]},
            {"cell_type": "code", "execution_count": 2, "metadata": {"tags": ["train"]},
             "outputs": [{"name": "stdout", "output_type": "stream", "text": ["\u00e9t\u00e9 \u2713\n"]}],
             "source": loop.splitlines(keepends=True) if loop_as_list else loop},
            {"cell_type": "code", "execution_count": 3, "metadata": {}, "outputs": [], "source": "print('\u00e9')\n"},
        ],
        "metadata": {"kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"}},
        "nbformat": 4,
        "nbformat_minor": 5,
    }


def fixed_notebook(nb: dict) -> dict:
    fixed = json.loads(json.dumps(nb))
    for cell in fixed["cells"][1:3]:
        source = cell["source"]
        text = "".join(source) if isinstance(source, list) else source
        text = (text.replace("num_workers=2)", "num_workers=2, pin_memory=True)")
                .replace("    for x, y", "    sampler.set_epoch(epoch)\n    for x, y")
                .replace("x.cuda()", "x.cuda(non_blocking=True)"))
        cell["source"] = text.splitlines(keepends=True) if isinstance(source, list) else text
    return fixed


def jupyter(nb: dict) -> bytes:
    return (json.dumps(nb, indent=1, ensure_ascii=False) + "\n").encode()


# -- protected files, links ----------------------------------------------------------------------
@pytest.mark.parametrize("suffix", [".py", ".ipynb"])
def test_a_read_only_file_is_refused_in_one_line_and_the_run_goes_on(tmp_path, suffix):
    data = TRAIN.encode() if suffix == ".py" else jupyter(notebook())
    protected, other = tmp_path / f"ro{suffix}", tmp_path / f"other{suffix}"
    protected.write_bytes(data)
    other.write_bytes(data)
    protected.chmod(0o444)
    as_it_is = advisor_run("check", "--format", "concise", protected.name, cwd=tmp_path)

    run = advisor_run("check", "--fix", "--format", "concise", protected.name, other.name, cwd=tmp_path)

    assert run.returncode == 1, run.stderr  # its findings are still there
    assert protected.read_bytes() == data and stat.S_IMODE(protected.stat().st_mode) == 0o444
    assert lines_about(run.stderr, protected.name) == [
        f"advisor: warning: {protected.name}: the file is read-only; not fixed"]
    # The file is reported as it stands, not as it would have been after the fixes.
    assert lines_about(run.stdout, protected.name) == as_it_is.stdout.splitlines()
    assert other.read_bytes() != data and "pin_memory=True" in other.read_text()
    assert "Fixed 3 findings." in run.stderr  # the refused file's fixes are not counted
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted([protected.name, other.name])


def test_a_refused_file_is_reported_from_the_worker_pool_too(tmp_path):
    for number in range(9):  # enough files for the process pool
        (tmp_path / f"f{number}.py").write_text(TRAIN)
    (tmp_path / "f4.py").chmod(0o444)
    run = advisor_run("check", "--fix", "--jobs", "2", "--format", "concise", ".", cwd=tmp_path)
    assert run.returncode == 1
    assert lines_about(run.stderr, "f4.py") == ["advisor: warning: f4.py: the file is read-only; not fixed"]
    assert (tmp_path / "f4.py").read_text() == TRAIN
    assert [line.split(": ")[0] for line in lines_about(run.stdout, "f4.py")] == [
        "f4.py:5:11", "f4.py:6:10", "f4.py:6:10", "f4.py:13:18"]
    assert all((tmp_path / f"f{n}.py").read_text() == FIXED for n in range(9) if n != 4)


def test_a_symlink_is_followed_and_stays_a_link(tmp_path):
    (tmp_path / "src").mkdir()
    (tmp_path / "work").mkdir()
    target, nb_target = tmp_path / "src" / "train.py", tmp_path / "src" / "train.ipynb"
    target.write_text(TRAIN)
    target.chmod(0o640)
    nb_target.write_bytes(jupyter(notebook()))
    link, nb_link = tmp_path / "work" / "train.py", tmp_path / "work" / "train.ipynb"
    os.symlink("../src/train.py", link)
    os.symlink("../src/train.ipynb", nb_link)

    run = advisor_run("check", "--fix", "--format", "concise", "work/train.py", "work/train.ipynb", cwd=tmp_path)

    assert run.returncode == 1 and "Fixed 6 findings." in run.stderr, run.stderr
    assert link.is_symlink() and os.readlink(link) == "../src/train.py"
    assert nb_link.is_symlink() and os.readlink(nb_link) == "../src/train.ipynb"
    assert target.read_text() == FIXED and stat.S_IMODE(target.stat().st_mode) == 0o640
    assert nb_target.read_bytes() == jupyter(fixed_notebook(notebook()))
    assert sorted(os.listdir(tmp_path / "src")) == ["train.ipynb", "train.py"]  # no temporary file left
    assert sorted(os.listdir(tmp_path / "work")) == ["train.ipynb", "train.py"]


def test_a_hard_linked_file_is_refused_and_its_names_stay_one_file(tmp_path):
    first, second = tmp_path / "a.py", tmp_path / "b.py"
    first.write_text(TRAIN)
    os.link(first, second)

    run = advisor_run("check", "--fix", "--format", "concise", "a.py", cwd=tmp_path)

    assert run.returncode == 1
    assert lines_about(run.stderr, "a.py") == [
        "advisor: warning: a.py: the file has 2 hard links, and rewriting it under one name would split it from "
        "the others; not fixed"]
    assert first.read_text() == TRAIN and os.path.samefile(first, second) and first.stat().st_nlink == 2
    assert lines_about(run.stdout, "a.py")[0].startswith("a.py:5:11: GPU501")


# -- what a written file keeps -----------------------------------------------------------------------
def test_fix_keeps_the_encoding_line_endings_and_mode(tmp_path):
    cookie = "# -*- coding: latin-1 -*-\n# caf\u00e9 \u00e0 la cr\u00e8me\n"
    files = {
        "latin1_lf.py": ((cookie + TRAIN).encode("latin-1"), 0o750),
        "latin1_crlf.py": ((cookie + TRAIN).replace("\n", "\r\n").encode("latin-1"), 0o600),
        "bom_crlf.py": (b"\xef\xbb\xbf" + ("# caf\u00e9\n" + TRAIN).replace("\n", "\r\n").encode(), 0o755),
    }
    for name, (data, mode) in files.items():
        (tmp_path / name).write_bytes(data)
        (tmp_path / name).chmod(mode)

    run = advisor_run("check", "--fix", "--format", "concise", *files, cwd=tmp_path)

    assert run.returncode == 1 and "Fixed 9 findings." in run.stderr, run.stderr
    assert (tmp_path / "latin1_lf.py").read_bytes() == (cookie + FIXED).encode("latin-1")
    # The added line (set_epoch) ends in CRLF like the others.
    assert (tmp_path / "latin1_crlf.py").read_bytes() == (cookie + FIXED).replace("\n", "\r\n").encode("latin-1")
    assert (tmp_path / "bom_crlf.py").read_bytes() == b"\xef\xbb\xbf" + ("# caf\u00e9\n" + FIXED).replace(
        "\n", "\r\n").encode()
    for name, (_, mode) in files.items():
        assert stat.S_IMODE((tmp_path / name).stat().st_mode) == mode


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0, reason="only root can give a file away")
def test_fix_keeps_the_owner_and_group(tmp_path):
    path = tmp_path / "theirs.py"
    path.write_text(TRAIN)
    os.chown(path, 4321, 4322)
    path.chmod(0o664)
    run = advisor_run("check", "--fix", "theirs.py", cwd=tmp_path)
    assert run.returncode == 1, run.stderr
    st = path.stat()
    assert path.read_text() == FIXED and (st.st_uid, st.st_gid) == (4321, 4322) and stat.S_IMODE(st.st_mode) == 0o664


def _as_another_user():
    """(uid, gid, command, env) that runs `python -m advisor` as an unprivileged user, or None.
    The interpreter must be one that user can reach (a virtualenv under /root is not): the
    running one, else a system one of the same version, given this checkout and the
    dependencies on its path."""
    if not hasattr(os, "geteuid") or os.geteuid() != 0:
        return None
    try:
        import pwd

        nobody = pwd.getpwnam("nobody")
    except (ImportError, KeyError):
        return None
    import libcst
    import rich

    paths = [str(Path(advisor.__file__).resolve().parent.parent),
             *{str(Path(m.__file__).resolve().parent.parent) for m in (libcst, rich)}]
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(paths), HOME="/tmp")
    version = f"python{sys.version_info.major}.{sys.version_info.minor}"
    for python in (sys.executable, shutil.which(version, path="/usr/bin:/usr/local/bin")):
        if python is None:
            continue
        try:
            probe = subprocess.run([python, "-c", "import advisor.cli, libcst, rich"], user=nobody.pw_uid,
                                   group=nobody.pw_gid, extra_groups=[], env=env, capture_output=True, cwd="/tmp")
        except OSError:  # the interpreter itself is out of that user's reach
            continue
        if probe.returncode == 0:
            return nobody.pw_uid, nobody.pw_gid, [python, "-m", "advisor"], env
    return None


def test_another_users_file_keeps_its_owner_or_is_refused():
    """A shared folder: a file the user may write but not own is written in place (the rename
    would make it theirs), and one they may not write is refused, though the folder would let
    the rename through."""
    who = _as_another_user()
    if who is None:
        pytest.skip("needs root, a `nobody` user and an interpreter that user can run")
    uid, gid, command, env = who
    folder = Path(tempfile.mkdtemp(prefix="advisor-shared-"))  # tmp_path's parents are closed to others
    try:
        folder.chmod(0o777)
        open_file, closed_file = folder / "open.py", folder / "closed.py"
        for path, mode in ((open_file, 0o666), (closed_file, 0o644)):
            path.write_text(TRAIN)
            path.chmod(mode)
        inode = open_file.stat().st_ino
        run = subprocess.run([*command, "check", "--fix", "--no-cache", "--format", "concise", "open.py", "closed.py"],
                             user=uid, group=gid, extra_groups=[], env=env, cwd=folder, capture_output=True, text=True)
        assert run.returncode == 1, run.stderr
        st = open_file.stat()
        assert open_file.read_text() == FIXED
        assert (st.st_uid, st.st_gid, st.st_ino, stat.S_IMODE(st.st_mode)) == (0, 0, inode, 0o666)
        assert lines_about(run.stderr, "closed.py") == [
            "advisor: warning: closed.py: no permission to write the file; not fixed"]
        assert closed_file.read_text() == TRAIN and closed_file.stat().st_uid == 0
        assert sorted(os.listdir(folder)) == ["closed.py", "open.py"]
    finally:
        shutil.rmtree(folder)


# -- notebooks keep their JSON layout ---------------------------------------------------------------
LAYOUTS = {
    "jupyter.ipynb": lambda nb: jupyter(nb),
    "tabs.ipynb": lambda nb: json.dumps(nb, indent="\t", ensure_ascii=False).encode(),  # no final newline
    "crlf.ipynb": lambda nb: (json.dumps(nb, indent=1, ensure_ascii=False) + "\n").replace("\n", "\r\n").encode(),
    "escaped.ipynb": lambda nb: (json.dumps(nb, indent=2) + "\n").encode(),  # ensure_ascii: \u escapes
    "one_line.ipynb": lambda nb: json.dumps(nb).encode(),
    "bom.ipynb": lambda nb: b"\xef\xbb\xbf" + jupyter(nb),
}


def test_notebook_fix_changes_only_the_fixed_cells_in_the_files_own_layout(tmp_path):
    originals = {}
    for name, dump in LAYOUTS.items():
        for suffix, as_list in (("", True), ("_str", False)):
            path = tmp_path / name.replace(".ipynb", f"{suffix}.ipynb")
            originals[path] = (dump, notebook(as_list))
            path.write_bytes(dump(notebook(as_list)))

    run = advisor_run("check", "--fix", "--format", "concise", *sorted(p.name for p in originals), cwd=tmp_path)

    assert run.returncode == 1 and f"Fixed {3 * len(originals)} findings." in run.stderr, run.stderr
    for path, (dump, nb) in originals.items():
        # Written as its writer would write the fixed notebook: same indentation, escapes, line
        # ends, final newline, key order; the markdown, output and untouched cells byte for byte.
        assert path.read_bytes() == dump(fixed_notebook(nb)), path.name


def test_notebook_fix_keeps_the_text_of_a_hand_edited_file_outside_the_fixed_lines(tmp_path):
    # Escaped and raw non-ASCII side by side, odd spacing, keys out of Jupyter's order.
    raw = (
        '{ "nbformat": 4, "nbformat_minor": 5,\n'
        '  "metadata": {"kernelspec": {"language": "python", "name": "python3"}},\n'
        '  "cells": [\n'
        '    {"source" : [ "# \\u00e9t\\u00e9\\n", "import torch\\n" ,\n'
        '                  "from torch.utils.data import DataLoader\\n",\n'
        '                  "loader = DataLoader(ds, batch_size=4, num_workers=2)" ],\n'
        '     "cell_type": "code", "metadata": {}, "outputs": [], "execution_count": null},\n'
        '    {"cell_type": "markdown", "metadata": {}, "source": "caf\u00e9 \\u2014 r\\u00e9sum\\u00e9"},\n'
        '    {"cell_type": "code", "metadata": {}, "outputs": [], "execution_count": null,\n'
        '     "source": ["for x, y in loader:\\n", "\\tx = x.cuda()\\n", "\\tloss = model(x).mean()\\n",\n'
        '                "\\tloss.backward()\\n", "\\toptimizer.step()\\n", "\\ttotal += loss.item()"]}\n'
        '  ]\n'
        '}'
    )
    path = tmp_path / "hand.ipynb"
    path.write_text(raw, encoding="utf-8")
    run = advisor_run("check", "--fix", "--format", "concise", "hand.ipynb", cwd=tmp_path)
    assert run.returncode == 1, run.stderr
    expected = raw.replace("num_workers=2)", "num_workers=2, pin_memory=True)")
    assert path.read_text(encoding="utf-8") == expected.replace("x.cuda()", "x.cuda(non_blocking=True)")


# -- one analysis per file ------------------------------------------------------------------------
COUNTING = """
import sys
import advisor.engine as engine

analysed = []
real = engine.check_source


def counted(text, *args, **kwargs):
    analysed.append(text)
    return real(text, *args, **kwargs)


engine.check_source = counted
from advisor.cli import main

status = main(sys.argv[1:])
sys.stderr.write(f"analyses: {len(analysed)}, distinct texts: {len(set(analysed))}\\n")
sys.exit(status)
"""


def test_fix_analyses_each_text_once(tmp_path):
    (tmp_path / "train.py").write_text(TRAIN)
    (tmp_path / "nb.ipynb").write_bytes(jupyter(notebook()))
    run = subprocess.run([sys.executable, "-c", COUNTING, "check", "--fix", "--jobs", "1", "--no-cache", "train.py",
                          "nb.ipynb"], cwd=tmp_path, capture_output=True, text=True)
    assert run.returncode == 1, run.stderr
    assert (tmp_path / "train.py").read_text() == FIXED
    # Per file: the original, after the first round of fixes, after the second; each once.
    assert run.stderr.strip().splitlines()[-1] == "analyses: 6, distinct texts: 6"


def test_fix_reports_the_findings_of_the_fixed_file(tmp_path):
    (tmp_path / "train.py").write_text(TRAIN)
    (tmp_path / "nothing_to_fix.py").write_text(  # GPU101 only, which has no fix
        "import torch\nmodel.cuda()\nfor x, y in loader:\n    loss = model(x)\n    loss.backward()\n"
        "    optimizer.step()\n    total += loss.item()\n")
    before = advisor_run("check", "--format", "concise", "nothing_to_fix.py", cwd=tmp_path)
    fixed = advisor_run("check", "--fix", "--format", "concise", "train.py", "nothing_to_fix.py", cwd=tmp_path)
    after = advisor_run("check", "--format", "concise", "train.py", "nothing_to_fix.py", cwd=tmp_path)
    assert fixed.stdout == after.stdout
    assert lines_about(fixed.stdout, "nothing_to_fix.py") == before.stdout.splitlines() != []
    # The text report shows the fixed file's lines under its findings (one line was added).
    (tmp_path / "train.py").write_text(TRAIN)
    text = advisor_run("check", "--fix", "train.py", cwd=tmp_path)
    assert "train.py:14:18: GPU101" in text.stdout and "14 │         total += loss.item()" in text.stdout
    assert "6 │ loader = DataLoader(ds, batch_size=4, sampler=sampler, num_workers=2, pin_memory=True)" in text.stdout


# -- the writing module's own fallbacks and refusals ----------------------------------------------
def test_without_the_right_to_give_the_new_file_its_owner_it_writes_in_place(tmp_path, monkeypatch):
    from advisor import file_writes

    path = tmp_path / "train.py"
    path.write_text(TRAIN)
    inode = path.stat().st_ino

    def not_permitted(*args):
        raise PermissionError(1, "Operation not permitted")

    # The file belongs to another user, and giving the new file to them is not permitted.
    fields = list(path.stat())
    fields[stat.ST_UID] += 1
    monkeypatch.setattr(os, "fchown", not_permitted)
    file_writes._replace(str(path), os.stat_result(fields), FIXED.encode())
    monkeypatch.undo()
    assert path.read_text() == FIXED and path.stat().st_ino == inode
    assert sorted(os.listdir(tmp_path)) == ["train.py"]  # the temporary file is gone


def test_a_folder_that_takes_no_new_file_is_written_in_place(tmp_path, monkeypatch):
    import tempfile as tempfile_module

    from advisor import file_writes

    path = tmp_path / "train.py"
    path.write_text(TRAIN)
    inode = path.stat().st_ino

    def no_new_files(*args, **kwargs):
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(tempfile_module, "mkstemp", no_new_files)
    file_writes.write_fixed(str(path), lambda data: True, FIXED.encode())
    assert path.read_text() == FIXED and path.stat().st_ino == inode


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs here")
def test_a_fifo_in_the_files_place_is_refused_without_blocking(tmp_path):
    from advisor.file_writes import WriteRefused, write_fixed

    fifo = tmp_path / "train.py"
    os.mkfifo(fifo)
    with pytest.raises(WriteRefused, match="not a regular file"):
        write_fixed(str(fifo), lambda data: True, FIXED.encode())


def test_a_file_changed_since_it_was_read_is_not_overwritten(tmp_path):
    from advisor.file_writes import FileChangedOnDisk, write_fixed

    path = tmp_path / "train.py"
    path.write_text("# the user's newer text\n")
    with pytest.raises(FileChangedOnDisk):
        write_fixed(str(path), lambda data: data == TRAIN.encode(), FIXED.encode())
    assert path.read_text() == "# the user's newer text\n"


def test_fixed_text_the_files_encoding_cannot_hold_is_refused(tmp_path, capsys):
    from advisor.cli import _FixedResult, _write_fixes
    from advisor.findings import FileResult
    from advisor.source import SourceText

    path = tmp_path / "latin.py"
    path.write_bytes(b"# -*- coding: latin-1 -*-\nx = 1\n")
    source = SourceText("# -*- coding: latin-1 -*-\nx = 1\n", "iso-8859-1")
    unfixed = FileResult(str(path), [], None, source)
    fixed = _FixedResult(str(path), [], None, source, "# -*- coding: latin-1 -*-\nx = '\u20ac'\n", 1, unfixed)
    assert _write_fixes(str(path), fixed) is unfixed
    assert capsys.readouterr().err == (
        f"advisor: warning: {path}: the fixed text cannot be encoded as iso-8859-1; not fixed\n")
    assert path.read_bytes() == b"# -*- coding: latin-1 -*-\nx = 1\n"
