"""Inputs a linter meets in the wild: each gives a one-line message (or a normal result), the
right exit code, and never a traceback; the other files of the run are still checked."""

from __future__ import annotations

import os
import sys

import pytest

from advisor.cli import main
from advisor.rules import ALL_RULES

HOT = (
    "import torch\n"
    "for x, y in loader:\n"
    "    loss = model(x)\n"
    "    loss.backward()\n"
    "    optimizer.step()\n"
    "    total += loss.item()\n"
)


def run(capsys, *args):
    code = main([str(a) for a in args])
    out, err = capsys.readouterr()
    assert "Traceback" not in out + err
    return code, out, err


def concise(capsys, *paths):
    return run(capsys, "check", "--format", "concise", "--show-info", *paths)


@pytest.mark.parametrize(
    "tail, message",
    [
        ("if x\n    pass\n", "expected ':'"),
        ("y = (1,\n", "was never closed"),
        ("  z = 1\n", "unexpected indent"),
        ("print 'a'\nx = `y`\n", "syntax error"),  # a Python 2 file that stays unreadable once lifted
        ("mode = 0777\n", "leading zeros"),
        ('s = "unterminated\n', "unterminated string"),
        ("def f(:\n", "syntax error"),
        ("x = f'{'\n", "syntax error"),
        ("x = [1, 2\ny = 3\n", "syntax error"),
        ("x = 1 +\n", "invalid syntax"),
    ],
    ids=["colon", "bracket", "indent", "py2-backquote", "py2-octal", "string", "params", "fstring", "list", "mid-token"],
)
def test_syntax_errors_are_one_line_with_exit_1(tmp_path, capsys, tail, message):
    path = tmp_path / "broken.py"
    path.write_text(HOT + tail)
    other = tmp_path / "other.py"
    other.write_text(HOT)
    code, out, _ = concise(capsys, path, other)
    assert code == 1
    lines = out.splitlines()
    problem = [line for line in lines if line.startswith(str(path))]
    assert len(problem) == 1 and "error: " in problem[0]
    assert message.lower() in problem[0].lower() or "syntax error" in problem[0]
    assert any(line.startswith(f"{other}:6:14: GPU101") for line in lines)


@pytest.mark.parametrize(
    "data, reason",
    [
        (b"# -*- coding: ascii -*-\n" + HOT.encode() + "s = 'é'\n".encode("utf-8"), "cannot decode: line 8"),
        (b"# coding: no-such-codec\n" + HOT.encode(), "unknown encoding"),
        (HOT.encode() + b"x = 1\x00\n", "NUL"),
        (b"\x7fELF\x02\x01\x01\x00" + bytes(range(256)) * 4, "cannot decode"),
        (b"\xef\xbb\xbf# coding: latin-1\n" + HOT.encode(), "encoding problem"),
    ],
    ids=["wrong-cookie", "unknown-codec", "nul", "binary", "bom-vs-cookie"],
)
def test_undecodable_inputs(tmp_path, capsys, data, reason):
    path = tmp_path / "bad.py"
    path.write_bytes(data)
    code, out, _ = concise(capsys, path)
    assert code == 1
    assert out.count("\n") == 1 and reason in out


@pytest.mark.parametrize(
    "data",
    [b"", b"# only a comment\n", b"\n\n\n", b"\xef\xbb\xbf", b"\xef\xbb\xbf# bom and comment\r\n"],
    ids=["empty", "comment", "blank", "bom-only", "bom-crlf"],
)
def test_trivial_files_are_clean(tmp_path, capsys, data):
    path = tmp_path / "t.py"
    path.write_bytes(data)
    code, out, _ = concise(capsys, path)
    assert code == 0 and out == ""


@pytest.mark.parametrize(
    "transform",
    [
        lambda t: t.replace("\n", "\r\n"),
        lambda t: t.replace("\n", "\r"),
        lambda t: "\n".join(line + ("\r" if i % 2 else "") for i, line in enumerate(t.split("\n"))),
        lambda t: t.replace("    ", "\t"),
        lambda t: "\ufeff" + t,
        lambda t: t.replace("\n", "\n\x0c", 1),
    ],
    ids=["crlf", "cr", "mixed", "tabs", "bom", "form-feed"],
)
def test_line_endings_and_whitespace_keep_rows(tmp_path, capsys, transform):
    path = tmp_path / "le.py"
    path.write_bytes(transform(HOT).encode("utf-8"))
    code, out, _ = concise(capsys, path)
    assert code == 1
    row, column = out.split(":")[1:3]
    assert row == "6"


def test_non_ascii_identifiers_and_strings_have_code_point_columns(tmp_path, capsys):
    path = tmp_path / "名前 with space.py"
    path.write_text(
        "import torch\n"
        "for x, y in loader:\n"
        "    pérte = model(x)\n"
        "    pérte.backward()\n"
        "    optimizer.step()\n"
        "    étiquette = '日本語'; total += pérte.item()\n"
    )
    code, out, _ = concise(capsys, path)
    assert code == 1
    assert out.startswith(f"{path}:6:33: GPU101 [info] `pérte.item()`")


def test_large_file_is_checked_in_bounded_time(tmp_path, capsys):
    filler = "".join(f"value_{i} = compute({i}, 'text')\n" for i in range(100_000))
    path = tmp_path / "big.py"
    path.write_text(HOT + filler)
    code, out, _ = concise(capsys, path)
    # Within the default analysis budget (CPU time, not wall time: a loaded machine does not
    # change it): the finding is reported, not the over-budget line.
    assert code == 1 and ":6:14: GPU101" in out
    assert "budget" not in out


def test_unreadable_file_is_named_and_the_run_goes_on(tmp_path, capsys, monkeypatch):
    locked = tmp_path / "a_locked.py"
    locked.write_text(HOT)
    fine = tmp_path / "b_fine.py"
    fine.write_text(HOT)
    import advisor.runner as runner

    original = runner._read

    def read(job):
        if job.display.endswith("a_locked.py"):
            raise PermissionError(13, "Permission denied")
        return original(job)

    monkeypatch.setattr(runner, "_read", read)
    code, out, _ = concise(capsys, tmp_path)
    assert code == 1
    assert f"{locked}:1:1: error: cannot read: Permission denied" in out
    assert f"{fine}:6:14: GPU101" in out


def test_file_deleted_during_the_run(tmp_path, capsys, monkeypatch):
    gone = tmp_path / "a_gone.py"
    gone.write_text(HOT)
    (tmp_path / "b.py").write_text(HOT)
    import advisor.cli as cli

    real_discover = cli.discover_root

    def discover_then_delete(*args, **kwargs):
        for found in real_discover(*args, **kwargs):
            if found.path.name == "a_gone.py":
                found.path.unlink()
            yield found

    monkeypatch.setattr(cli, "discover_root", discover_then_delete)
    code, out, _ = concise(capsys, tmp_path)
    assert code == 1
    assert "a_gone.py:1:1: error: cannot read: No such file or directory" in out
    assert "b.py:6:14: GPU101" in out


@pytest.mark.skipif(sys.platform == "win32", reason="symlinks")
def test_symlink_loops_and_dangling_links(tmp_path, capsys):
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "train.py").write_text(HOT)
    os.symlink(tmp_path, tmp_path / "pkg" / "loop")
    os.symlink(tmp_path / "missing.py", tmp_path / "pkg" / "dangling.py")
    code, out, _ = concise(capsys, tmp_path)
    assert code == 1
    lines = out.splitlines()
    assert sum(1 for line in lines if "GPU101" in line) == 1
    assert any("dangling.py:1:1: error: cannot read" in line for line in lines)


@pytest.mark.parametrize(
    "body, message",
    [
        ("select = 5", "`select` must be a list"),
        ('select = ["GPU1"]\nselect = ["GPU2"]', "invalid TOML"),
        ("per-file-ignores = 3", "`per-file-ignores` must be a table"),
        ('per-file-ignores = { "a.py" = "GPU101" }', "must be a list of rule codes"),
        ('exclude = "build"', "`exclude` must be a list"),
        ('select = ["GPU' + "1" * 5000 + '"]', "not a rule code"),
        ("[tool.advisor.nested]\nx = 1", "unknown key `nested`"),
        ("\x00", "invalid TOML"),
    ],
    ids=["int", "duplicate", "pfi-int", "pfi-str", "exclude-str", "huge-code", "nested", "nul"],
)
def test_hostile_pyproject(tmp_path, capsys, body, message):
    (tmp_path / "pyproject.toml").write_text(f"[tool.advisor]\n{body}\n")
    (tmp_path / "t.py").write_text(HOT)
    code, out, err = run(capsys, "check", tmp_path)
    assert code == 2
    assert message in err and err.count("\n") == 1


def test_huge_but_valid_config_values(tmp_path, capsys):
    known = [rule.code for rule in ALL_RULES]  # an unknown code would be an error of its own
    codes = ", ".join(f'"{known[i % len(known)]}"' for i in range(20_000))
    (tmp_path / "pyproject.toml").write_text(f"[tool.advisor]\nignore = [{codes}]\n")
    (tmp_path / "t.py").write_text(HOT)
    code, out, _ = run(capsys, "check", "--format", "concise", tmp_path)
    assert code == 0 and out == ""


def test_pyproject_that_is_a_folder_or_unreadable_bytes(tmp_path, capsys):
    (tmp_path / "pyproject.toml").write_bytes(b"\xff\xfe[tool.advisor]\n")
    (tmp_path / "t.py").write_text(HOT)
    code, _, err = run(capsys, "check", tmp_path)
    assert code == 2 and "pyproject.toml" in err


UNSAFE = (
    "import torch\n"
    "from torch.utils.data import DataLoader\n"
    "loader = DataLoader(ds, batch_size=4, num_workers=2, pin_memory=False)\n"
    "for x, y in loader:\n"
    "    x = x.cuda()\n"
)


def test_fix_applies_only_safe_fixes_unless_asked(tmp_path, capsys):
    path = tmp_path / "u.py"
    path.write_text(UNSAFE)
    code, out, _ = run(capsys, "check", "--fix", path)
    assert code == 1 and path.read_text() == UNSAFE  # pin_memory=False is an explicit choice
    assert "fix (unsafe)" in out
    run(capsys, "check", "--fix", "--unsafe-fixes", path)
    assert "pin_memory=True" in path.read_text()


def test_fix_never_overwrites_a_file_changed_during_the_run(tmp_path, capsys, monkeypatch):
    path = tmp_path / "c.py"
    path.write_text(UNSAFE)
    import advisor.fixes as fixes

    real = fixes.fix_until_stable

    def edited_meanwhile(*args, **kwargs):
        result = real(*args, **kwargs)
        path.write_text("# the user saved something else\n")
        return result

    monkeypatch.setattr(fixes, "fix_until_stable", edited_meanwhile)
    code, _, err = run(capsys, "check", "--fix", "--unsafe-fixes", path)
    assert code == 2
    assert "changed on disk while it was being checked; not fixed" in err
    assert path.read_text() == "# the user saved something else\n"


def test_a_config_file_nested_past_the_json_parser_is_no_setting(tmp_path, capsys):
    """A command line passes the script a JSON config nested deeper than Python's parser goes:
    the settings it would give are unknown, and the script is checked as usual."""
    (tmp_path / "setup.cfg").write_text("[metadata]\nname = deep\n")
    (tmp_path / "deep.json").write_text("[" * 100000 + "]" * 100000)
    (tmp_path / "README.md").write_text("    python train.py --config deep.json\n")
    (tmp_path / "train.py").write_text(
        "import argparse\nimport json\nimport torch\n\n"
        "parser = argparse.ArgumentParser()\nparser.add_argument('--config')\nargs = parser.parse_args()\n"
        "cfg = json.load(open(args.config))\n"
        "model = torch.nn.Linear(2, 2).cuda()\noptimizer = torch.optim.SGD(model.parameters(), lr=0.1)\n"
        "for step, x in enumerate(loader):\n"
        "    loss = model(x.cuda()).sum()\n"
        "    loss.backward()\n"
        "    if (step + 1) % args.accumulation_steps == 0:\n"
        "        optimizer.step()\n"
        "        optimizer.zero_grad()\n"
    )
    code, out, err = run(capsys, "check", "--no-cache", tmp_path)
    assert "skipped" not in out + err  # the script is not the deep one: it is analysed as usual
    assert code in (0, 1)
