"""Fuzzing the engine and the CLI with mutated example scripts and generated text.

A fixed seed and a bounded budget keep CI deterministic; `ADVISOR_FUZZ_CASES=5000` runs a longer
session locally. The property under test: every input gives findings or a one-line problem,
never an exception and never a hang.
"""

from __future__ import annotations

import json
import os
import random
import signal
from contextlib import contextmanager
from pathlib import Path

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from advisor.cli import main
from advisor.config import Config
from advisor.engine import check_file, check_source

pytestmark = pytest.mark.fuzz

ROOT = Path(__file__).resolve().parent.parent
SOURCES = sorted((ROOT / "examples").glob("*.py")) + sorted((ROOT / "tests" / "corpus").glob("*.py"))
CASES = int(os.environ.get("ADVISOR_FUZZ_CASES", "300"))
PER_CASE_SECONDS = 300
SHOW_ALL = Config(show_info=True)


@contextmanager
def time_limit(seconds: int):
    def expired(signum, frame):
        raise TimeoutError(f"no result after {seconds} s")

    previous = signal.signal(signal.SIGALRM, expired)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


def _mutate(text: str, rng: random.Random) -> str:
    kind = rng.randrange(7)
    if kind == 0:  # truncated file, as in an editor mid-keystroke
        return text[: rng.randrange(len(text) + 1)]
    if kind == 1:  # a deleted token-sized span
        start = rng.randrange(len(text) + 1)
        return text[:start] + text[start + rng.randrange(1, 12):]
    if kind == 2:  # shuffled lines
        lines = text.splitlines(keepends=True)
        for _ in range(rng.randrange(1, 6)):
            i, j = rng.randrange(len(lines)), rng.randrange(len(lines))
            lines[i], lines[j] = lines[j], lines[i]
        return "".join(lines)
    if kind == 3:  # random characters, some of them exotic
        alphabet = "()[]{}:;,.'\"\\#@=+-*/%\t\n\r\x0c\u2028\u00e9\u4e2d\U0001f600 abcxyz0123"
        out = list(text)
        for _ in range(rng.randrange(1, 20)):
            out.insert(rng.randrange(len(out) + 1), rng.choice(alphabet))
        return "".join(out)
    if kind == 4:  # re-indented blocks
        lines = text.splitlines(keepends=True)
        start = rng.randrange(len(lines))
        for i in range(start, min(len(lines), start + rng.randrange(1, 30))):
            lines[i] = rng.choice(["\t", "  ", "        ", ""]) + lines[i].lstrip(" ")
        return "".join(lines)
    if kind == 5:  # line endings
        return text.replace("\n", rng.choice(["\r\n", "\r", "\n\n"]))
    # duplicated region
    start = rng.randrange(len(text) + 1)
    end = min(len(text), start + rng.randrange(1, 400))
    return text[:end] + text[start:end] + text[end:]


def _check_text(text: str) -> None:
    with time_limit(PER_CASE_SECONDS):  # a hang, not slowness: generous on a loaded machine
        result = check_source(text, "fuzz.py", SHOW_ALL)
    if result.problem is not None:
        assert "\n" not in result.problem.reason, result.problem.reason
        assert result.findings == []
    for finding in result.findings:
        assert finding.start.row >= 1 and finding.start.column >= 1
        assert (finding.end.row, finding.end.column) >= (finding.start.row, finding.start.column)


def test_mutated_scripts_never_crash_or_hang():
    rng = random.Random(20261130)
    texts = [p.read_text() for p in SOURCES]
    for _ in range(CASES):
        text = rng.choice(texts)
        for _ in range(rng.randrange(1, 4)):
            text = _mutate(text, rng)
        _check_text(text)


def test_random_bytes_files_give_one_line_problems(tmp_path):
    rng = random.Random(7)
    originals = [p.read_bytes() for p in SOURCES]
    for i in range(max(20, CASES // 10)):
        data = bytearray(rng.choice(originals))
        for _ in range(rng.randrange(1, 10)):
            data.insert(rng.randrange(len(data) + 1), rng.randrange(256))
        path = tmp_path / f"bytes_{i}.py"
        path.write_bytes(bytes(data))
        with time_limit(PER_CASE_SECONDS):
            result = check_file(path, SHOW_ALL)
        assert result.problem is None or "\n" not in result.problem.reason


@settings(max_examples=max(50, CASES // 3), deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow])
@given(st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=400))
@example("\U00013460")  # found by this test: libcst tokenized it, then refused the Name node
def test_arbitrary_text_with_training_words(text):
    # The pre-filter would skip text without these words, so they are always present.
    _check_text("import torch\nfor x in loader:\n    loss.backward()\n    loss.item()\n" + text)


_FRAGMENTS = [
    "loss = criterion(model(x), y)\n",
    "loss.backward()\n",
    "optimizer.step()\n",
    "total += loss.item()\n",
    "print(f'{loss:.3f}')\n",
    "preds.append(out.cpu())\n",
    "torch.cuda.synchronize()\n",
    "loader = DataLoader(ds, batch_size=8)\n",
    "x = x.cuda()\n",
    "with torch.autocast('cuda'):\n    out = model(x)\n",
    "sampler = DistributedSampler(ds)\n",
    "model = DDP(model)\n",
    "torch.save(model.state_dict(), 'm.pt')\n",
    "if step % 10 == 0:\n    print(loss)\n",
    "for x, y in loader:\n    pass\n",
    "def helper(batch):\n    return batch\n",
    "while step < 10:\n    step += 1\n",
]


@settings(max_examples=max(50, CASES // 3), deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.tuples(st.sampled_from(_FRAGMENTS), st.integers(0, 3)), min_size=1, max_size=25))
def test_generated_training_code(fragments):
    header = (
        "import torch\nfrom torch.utils.data import DataLoader, DistributedSampler\n"
        "from torch.nn.parallel import DistributedDataParallel as DDP\n"
    )
    body = []
    for fragment, depth in fragments:
        prefix = "    " * depth
        body.append("".join(prefix + line + "\n" for line in fragment.splitlines()))
    text = header + "for epoch in range(3):\n    for x, y in loader:\n" + "".join(
        "        " + line + "\n" for chunk in body for line in chunk.splitlines()
    )
    _check_text(text)


def test_cli_over_a_folder_of_mutants(tmp_path, capsys):
    rng = random.Random(99)
    texts = [p.read_text() for p in SOURCES]
    for i in range(40):
        (tmp_path / f"m{i}.py").write_bytes(_mutate(rng.choice(texts), rng).encode("utf-8"))
    code = main(["check", "--format", "json", "--show-info", str(tmp_path)])
    out, err = capsys.readouterr()
    assert code in (0, 1), err
    assert "Traceback" not in err
    items = json.loads(out)
    assert all(item["filename"].startswith(str(tmp_path)) for item in items)


def test_fix_on_mutants_never_breaks_a_parsing_file(tmp_path, capsys):
    import libcst as cst

    rng = random.Random(5)
    texts = [p.read_text() for p in SOURCES]
    for i in range(30):
        path = tmp_path / f"f{i}.py"
        text = _mutate(rng.choice(texts), rng) if i % 2 else rng.choice(texts)
        path.write_bytes(text.encode("utf-8"))
        parsed_before = True
        try:
            cst.parse_module(text)
        except Exception:  # noqa: BLE001
            parsed_before = False
        code = main(["check", "--fix", "--unsafe-fixes", "-q", str(path)])
        capsys.readouterr()
        assert code in (0, 1)
        after = path.read_bytes().decode("utf-8")
        if parsed_before:
            cst.parse_module(after)
        else:
            assert after == text  # a file that does not parse is never touched
