"""Jupyter notebooks: cells checked as one program, magics harmless, findings and fixes per cell."""

from __future__ import annotations

import copy
import json
from pathlib import Path

from advisor.cli import main
from advisor.notebook import build_program, split_program

SETUP = [
    "%matplotlib inline\n",
    "!pip install torch\n",
    "import torch\n",
    "from torch.utils.data import DataLoader\n",
    "loader = DataLoader(ds, batch_size=4, num_workers=2)",
]
LOOP = [
    "%%time\n",
    "for x, y in loader:\n",
    "    x = x.cuda()\n",
    "    %time step()\n",
    "    loss = model(x).mean()\n",
    "    loss.backward()\n",
    "    optimizer.step()\n",
    "    total += loss.item()",
]


def notebook(*cells) -> dict:
    return {
        "cells": list(cells),
        "metadata": {"kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"},
                     "language_info": {"name": "python", "version": "3.11.7"}},
        "nbformat": 4,
        "nbformat_minor": 5,
    }


def code(source, count=None, outputs=(), **metadata) -> dict:
    return {"cell_type": "code", "execution_count": count, "id": f"c{count}", "metadata": metadata,
            "outputs": list(outputs), "source": source}


MARKDOWN = {"cell_type": "markdown", "id": "md", "metadata": {}, "source": ["# Training\n", "100% of the text"]}
OUTPUT = {"name": "stdout", "output_type": "stream", "text": ["Requirement already satisfied\n"]}


def write_nb(path: Path, nb: dict) -> Path:
    path.write_text(json.dumps(nb, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    return path


def sample(tmp_path: Path) -> Path:
    return write_nb(tmp_path / "train.ipynb", notebook(
        MARKDOWN,
        code(SETUP, 1, [OUTPUT], tags=["setup"]),
        code(LOOP, 2),
        code(["%%bash\n", "echo 'not python (' \n"], 3),
        code("s = '''\n%s is text'''\nx = (1\n     % 2)\nloader?\n", 4),
    ))


def run(capsys, *args):
    status = main([str(a) for a in args])
    out, err = capsys.readouterr()
    return status, out, err


def test_findings_name_the_cell_and_the_row_in_it(tmp_path, capsys):
    path = sample(tmp_path)
    status, out, err = run(capsys, "check", "--format", "concise", path)
    assert status == 1, err
    assert out.splitlines()[0].startswith(f"{path}:cell 2:5:10: GPU201")
    assert out.splitlines()[-1].startswith(f"{path}:cell 3:8:14: GPU101")


def test_json_has_cell_and_cell_relative_rows(tmp_path, capsys):
    path = sample(tmp_path)
    _, out, _ = run(capsys, "check", "--format", "json", path)
    items = {i["code"]: i for i in json.loads(out)}
    assert items["GPU101"]["cell"] == 3 and items["GPU101"]["location"] == {"row": 8, "column": 14}
    assert items["GPU201"]["cell"] == 2 and items["GPU201"]["fix"]["edits"][0]["location"]["row"] == 5
    text_file = tmp_path / "plain.py"
    text_file.write_text("import torch\nfor b in loader:\n    loss = m(b.cuda())\n    loss.backward()\n    print(loss.item())\n")
    _, out, _ = run(capsys, "check", "--format", "json", text_file)
    assert all(i["cell"] is None for i in json.loads(out))


def test_text_output_shows_the_cell_line(tmp_path, capsys):
    path = sample(tmp_path)
    _, out, _ = run(capsys, "check", path)
    assert f"{path}:cell 3:8:14:" in out
    assert "8 │     total += loss.item()" in out


def test_magics_never_cause_a_syntax_error():
    cells = [
        (1, "%load_ext autoreload\n%autoreload 2\n!nvidia-smi\nfiles = !ls\nt = %timeit -o f()\n%env A=1 \\\n  B=2"),
        (2, "%%writefile x.py\ndef broken(:\n"),
        (3, "for i in range(3):\n    !echo {i}\n    %time f(i)\nobj?\n??obj\n"),
        (4, "%%capture out\nimport torch\n"),
    ]
    program = build_program(cells)
    compile(program.text, "<nb>", "exec")
    assert program.rows.count((0, 0)) == 4  # one marker per cell, then one row per cell row
    assert split_program(program, program.text) == {i: t for i, t in cells}


def test_automagic_lines_without_their_percent_are_magics_when_they_are_not_python():
    cells = [
        (1, "cd articulated-animation\npip install -r requirements.txt\nload_ext autoreload\n"),
        (2, "time = 3\nls = [1]\nenv = dict(a=1)\nprint(time, ls, env)\n"),
    ]
    program = build_program(cells)
    compile(program.text, "<nb>", "exec")
    assert len(program.magics) == 3  # the Python lines of cell 2 stay Python
    assert split_program(program, program.text) == {i: t for i, t in cells}


def test_a_cell_magic_body_keeps_no_indentation_and_a_multiline_statement_is_no_automagic():
    cells = [
        (1, "%%writefile base_config.yaml\nMODEL:\n  META_ARCHITECTURE: \"GeneralizedRCNN\"\n    WEIGHT: \"x.pth\"\n"),
        (2, "config = {\n    \"name\": \"synthetic\",\n}\ntime (1)\n"),
    ]
    program = build_program(cells)
    compile(program.text, "<nb>", "exec")
    assert len(program.magics) == 4  # the YAML cell's lines; cell 2 is Python
    assert split_program(program, program.text) == {i: t for i, t in cells}


def test_percent_inside_strings_and_brackets_is_python():
    text = "s = '''\n%d items\n'''\nx = (a\n     % b)\ny = 1 \\\n    % 2\n"
    program = build_program([(1, text)])
    assert "magic" not in program.text
    compile(program.text, "<nb>", "exec")


def test_fix_writes_only_the_right_cells_and_keeps_everything_else(tmp_path, capsys):
    path = sample(tmp_path)
    before = json.loads(path.read_text())
    status, _, err = run(capsys, "check", "--fix", "--format", "concise", path)
    assert status == 1  # GPU101 has no fix and remains
    assert "Fixed 2 findings." in err
    raw = path.read_text()
    assert raw.endswith("}\n") and raw.startswith('{\n "cells": [\n  {')  # indent 1, trailing newline
    after = json.loads(raw)
    expected = copy.deepcopy(before)
    expected["cells"][1]["source"][-1] = "loader = DataLoader(ds, batch_size=4, num_workers=2, pin_memory=True)"
    expected["cells"][2]["source"][2] = "    x = x.cuda(non_blocking=True)\n"
    assert after == expected  # outputs, counts, metadata, magics and other cells as they were
    assert list(after) == list(before) and list(after["cells"][1]) == list(before["cells"][1])
    status, out, _ = run(capsys, "check", "--fix", "--format", "concise", path)
    assert path.read_text() == raw  # a second --fix changes nothing
    assert out.splitlines() == [f"{path}:cell 3:8:14: GPU101 `loss.item()` waits for the GPU on every training step"]


def test_diff_shows_cells_and_writes_nothing(tmp_path, capsys):
    path = sample(tmp_path)
    raw = path.read_text()
    status, out, err = run(capsys, "check", "--diff", path)
    assert status == 1 and path.read_text() == raw
    assert f"--- {path}:cell 2\n+++ {path}:cell 2\n" in out
    assert "+loader = DataLoader(ds, batch_size=4, num_workers=2, pin_memory=True)" in out
    assert "+    x = x.cuda(non_blocking=True)" in out
    assert "Would fix 2 findings in 1 file." in err


def test_string_sources_stay_strings(tmp_path, capsys):
    path = write_nb(tmp_path / "s.ipynb", notebook(code("".join(SETUP), 1), code("".join(LOOP), 2)))
    run(capsys, "check", "--fix", path)
    cells = json.loads(path.read_text())["cells"]
    assert isinstance(cells[0]["source"], str) and "pin_memory=True" in cells[0]["source"]


def test_broken_notebooks_are_one_line_problems(tmp_path, capsys):
    bad = tmp_path / "bad.ipynb"
    bad.write_text('{"cells": [', encoding="utf-8")
    odd = tmp_path / "odd.ipynb"
    odd.write_text("[1, 2]", encoding="utf-8")
    status, out, err = run(capsys, "check", "--format", "concise", bad, odd)
    assert status == 1 and "Traceback" not in err
    lines = out.splitlines()
    assert lines[0].startswith(f"{bad}:1:1: error: not a valid notebook: invalid JSON:")
    assert lines[1] == f"{odd}:1:1: error: not a valid notebook: no `cells` list at the top level"


def test_an_empty_placeholder_notebook_has_nothing_to_check(tmp_path, capsys):
    # A 0-byte `.ipynb` committed as a placeholder opens in Jupyter as a notebook with no cells.
    empty = tmp_path / "Low Pass Filter.ipynb"
    empty.write_text("", encoding="utf-8")
    status, out, err = run(capsys, "check", "--format", "concise", empty)
    assert status == 0 and out == "" and err == ""
    assert empty.read_text(encoding="utf-8") == ""


def test_syntax_error_in_a_cell_names_the_cell(tmp_path, capsys):
    path = write_nb(tmp_path / "e.ipynb", notebook(code(SETUP, 1), code(["x = (\n"], 2), code(LOOP, 3)))
    status, out, _ = run(capsys, "check", "--format", "concise", path)
    assert status == 1
    assert out.startswith(f"{path}:cell ")
    assert "error:" in out


def test_folders_are_walked_for_notebooks_but_not_checkpoints(tmp_path, capsys):
    sample(tmp_path)
    checkpoints = tmp_path / ".ipynb_checkpoints"
    checkpoints.mkdir()
    sample(checkpoints)
    _, out, _ = run(capsys, "check", "--format", "concise", tmp_path)
    assert out.count("train.ipynb:cell") >= 2
    assert ".ipynb_checkpoints" not in out


def test_noqa_in_a_cell(tmp_path, capsys):
    loop = LOOP[:-1] + ["    total += loss.item()  # noqa: GPU101"]
    path = write_nb(tmp_path / "q.ipynb", notebook(code(SETUP, 1), code(loop, 2)))
    _, out, _ = run(capsys, "check", "--format", "concise", path)
    assert "GPU101" not in out and "GPU201" in out


def test_other_languages_are_skipped(tmp_path, capsys):
    nb = notebook(code(["x <- 1"], 1))
    nb["metadata"]["language_info"]["name"] = "R"
    status, _, _ = run(capsys, "check", write_nb(tmp_path / "r.ipynb", nb))
    assert status == 0


def test_a_fix_is_offered_in_a_cell_only_when_it_stays_there():
    from advisor.engine import check_source
    from advisor.findings import Applicability, Edit, Finding, Fix, Position, Severity
    from advisor.notebook import build_program, cell_fix

    setup = "%matplotlib inline\nimport torch\nfrom torch.utils.data import DataLoader\nloader = DataLoader(ds, batch_size=4)\n"
    program = build_program([(2, setup), (3, "for x in loader:\n    x = x.cuda()\n")])
    found = {f.code: f for f in check_source(program.text, "nb.ipynb").findings}
    fix = cell_fix(program, found["GPU201"])
    assert fix is not None and fix.edits == (Edit(Position(4, 37), Position(4, 37), ", pin_memory=True"),)

    def finding_with(*edits):
        return Finding("GPU999", "x", "m", Severity.WARNING, Position(5, 1), Position(5, 2), "",
                       fix=Fix("f", tuple(edits), Applicability.SAFE))

    inside = Edit(Position(5, 1), Position(5, 1), "y")
    assert cell_fix(program, finding_with(inside)) is not None
    on_magic = Edit(Position(2, 1), Position(2, 5), "")  # program row 2 stands in for %matplotlib
    assert cell_fix(program, finding_with(inside, on_magic)) is None
    other_cell = Edit(Position(7, 1), Position(7, 1), "z")  # row 7: cell 3
    assert cell_fix(program, finding_with(inside, other_cell)) is None
    on_marker = Edit(Position(6, 1), Position(6, 1), "w")  # row 6: cell 3's marker line
    assert cell_fix(program, finding_with(on_marker)) is None


def test_a_message_names_a_related_place_by_its_cell(tmp_path, capsys):
    # The epoch loop is in another cell: "line 180" of the joined program would mean nothing.
    path = write_nb(tmp_path / "ddp.ipynb", notebook(
        code("import torch\nfrom torch.utils.data import DataLoader\n"
             "from torch.utils.data.distributed import DistributedSampler\n"
             "sampler = DistributedSampler(train_set)\n"
             "loader = DataLoader(train_set, batch_size=32, sampler=sampler)\n", 1),
        code("model = torch.nn.parallel.DistributedDataParallel(net.cuda())\n"
             "for epoch in range(10):\n"
             "    for x, y in loader:\n"
             "        loss = model(x.cuda()).sum()\n"
             "        loss.backward()\n"
             "        optimizer.step()\n", 2),
    ))
    status, out, err = run(capsys, "check", "--format", "concise", "--select", "GPU501", path)
    assert status == 1, err
    assert "epoch loop at line 2 of cell 2" in out, out


def test_a_loader_no_cell_mentions_again_is_left_alone(tmp_path, capsys):
    # A notebook's top-level names are its own: nothing imports a notebook, so a loader built
    # and never mentioned again copies nothing; the loader the loop reads is still reported.
    unused = ["test_loader = DataLoader(test_set, batch_size=4)\n"]
    path = write_nb(tmp_path / "train.ipynb", notebook(code(SETUP, 1), code(unused, 2), code(LOOP, 3)))
    status, out, err = run(capsys, "check", "--format", "concise", "--select", "GPU201,GPU202", path)
    assert f"{path}:cell 1:5:10: GPU201" in out, out
    assert "cell 2:" not in out, out


DDP_CELL = [
    "import torch\n",
    "from torch.nn.parallel import DistributedDataParallel as DDP\n",
    "torch.distributed.init_process_group('nccl')\n",
    "model = DDP(model.cuda())\n",
    "for x in loader:\n",
    "    loss = model(x.cuda()).sum()\n",
    "    loss.backward()\n",
    "    optimizer.step()\n",
    "torch.save(model.module.state_dict(), 'model.pth')\n",
]


def test_a_notebook_runs_in_one_process_unless_it_launches_more(tmp_path, capsys):
    """Rank rules (a checkpoint saved on every rank) need processes a kernel does not start,
    whatever a cell copied from a launched script; `notebook_launcher` starts them."""
    single = tmp_path / "copied.ipynb"
    single.write_text(json.dumps(notebook(code(DDP_CELL))))
    _, out, _ = run(capsys, "check", "--format", "concise", "--select", "GPU504", single)
    assert "GPU504" not in out
    launched = tmp_path / "launched.ipynb"
    launched.write_text(json.dumps(notebook(code(["from accelerate import notebook_launcher\n", *DDP_CELL]))))
    _, out, _ = run(capsys, "check", "--format", "concise", "--select", "GPU504", launched)
    assert "GPU504" in out


def test_a_notebook_that_starts_processes_itself_runs_once_per_rank(tmp_path, capsys):
    path = tmp_path / "workers.ipynb"
    path.write_text(json.dumps(notebook(code(["import torch.multiprocessing as mp\n", *DDP_CELL,
                                              "p = mp.Process(target=worker, args=(0,))\n"]))))
    _, out, _ = run(capsys, "check", "--format", "concise", "--select", "GPU504", path)
    assert "GPU504" in out


def test_a_magic_between_two_definitions_may_call_the_first(tmp_path, capsys):
    """`%time train(...)` between two `def train` runs the first: it is no replaced definition."""
    first = ["import torch\n", "def train(model, loader, optimizer):\n", "    for x in loader:\n",
             "        loss = model(x.cuda()).sum()\n", "        loss.backward()\n", "        optimizer.step()\n",
             "        print(loss.item())\n"]
    path = tmp_path / "twice.ipynb"
    path.write_text(json.dumps(notebook(code(first), code(["%time train(model, loader, opt)\n"]),
                                        code(["def train(model, loader, optimizer):\n", "    pass\n"]))))
    _, out, _ = run(capsys, "check", "--format", "concise", "--select", "GPU101", path)
    assert "GPU101" in out
