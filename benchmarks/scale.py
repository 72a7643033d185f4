"""How `advisor check --no-cache` scales with the size of one file: generated files of about
1,000 to 100,000 lines in five shapes, each checked by a fresh process whose wall time, CPU time
and peak memory are recorded. A benchmark, not a test: run it by hand.

    .venv/bin/python benchmarks/scale.py [--quick] [--shapes distinct,repeated] [--sizes 1000,5000]
                                         [--plot docs/scale.png] [--table]

Shapes (each file is valid Python of about the requested number of lines):
- distinct: many training scripts' functions and modules, every name different;
- repeated: one realistic training script pasted again and again (generated or concatenated
  code: the same function, class and variable names defined once per copy);
- nested: blocks of loops, branches and `with` statements nested 40 deep, one after another;
- table: a short script under one long literal table (a list of tuples of numbers and strings);
- huge-function: one training function whose body is the whole file.

`--quick` stops at 20,000 lines (a few minutes on a loaded 2-core machine); the default goes to
100,000. `--plot` draws time and peak memory against lines (needs matplotlib, in the `dev`
extra). The table printed at the end gives, per shape, the growth exponent between the two
largest sizes (1.0 = linear, 2.0 = quadratic).
"""

from __future__ import annotations

import argparse
import math
import os
import subprocess
import sys
import time
from pathlib import Path
from tempfile import TemporaryDirectory

HEADER = """\
import math
import os

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, Dataset

"""

# One copy of a realistic single-file training script; {n} numbers the copies where names must
# differ, and is left out of the names where they must repeat.
SCRIPT = """\

class Net{n}(nn.Module):
    def __init__(self, width=128, classes=10):
        super().__init__()
        self.conv = nn.Conv2d(3, width, 3, padding=1)
        self.bn = nn.BatchNorm2d(width)
        self.head = nn.Linear(width, classes)

    def forward(self, x):
        x = F.relu(self.bn(self.conv(x)))
        x = F.adaptive_avg_pool2d(x, 1).flatten(1)
        return self.head(x)


class Shapes{n}(Dataset):
    def __init__(self, root, size=1000):
        self.root = root
        self.size = size

    def __len__(self):
        return self.size

    def __getitem__(self, index):
        image = torch.randn(3, 32, 32)
        label = torch.tensor(index % 10)
        return image, label


def train_one_epoch{n}(model, loader, optimizer, scaler, device):
    model.train()
    total = 0.0
    for step, (images, labels) in enumerate(loader):
        images = images.to(device)
        labels = labels.to(device)
        optimizer.zero_grad()
        with torch.autocast("cuda", dtype=torch.float16):
            loss = F.cross_entropy(model(images), labels)
        scaler.scale(loss).backward()
        scaler.step(optimizer)
        scaler.update()
        total += loss.item()
        if step % 50 == 0:
            print(f"step {{step}} loss {{total / (step + 1):.4f}}")
    return total / max(1, len(loader))


def evaluate{n}(model, loader, device):
    model.eval()
    correct = 0
    for images, labels in loader:
        outputs = model(images.to(device))
        correct += (outputs.argmax(1) == labels.to(device)).sum()
    return correct.item() / len(loader.dataset)


def main{n}():
    device = torch.device("cuda")
    model = Net{n}().to(device)
    train_set = Shapes{n}(os.environ.get("DATA", "data"))
    loader = DataLoader(train_set, batch_size=64, shuffle=True)
    test_loader = DataLoader(Shapes{n}("data", size=200), batch_size=64)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    scaler = torch.cuda.amp.GradScaler()
    for epoch in range(10):
        loss = train_one_epoch{n}(model, loader, optimizer, scaler, device)
        accuracy = evaluate{n}(model, test_loader, device)
        print(epoch, loss, accuracy, math.exp(-loss))
    torch.save(model.state_dict(), "model.pt")


if __name__ == "__main__":
    main{n}()
"""

NEST_DEPTH = 40
_OPENERS = (
    "for i{d} in range(2):",
    "if i{p} % 2 == 0:",
    "with torch.no_grad():",
    "while total < {d}:",
)

TABLE_HEADER = HEADER + """\

def lookup(index):
    return TABLE[index % len(TABLE)]


TABLE = [
"""

HUGE_HEADER = HEADER + """\

def train(model, loader, optimizer, device):
    model.train()
    total = 0.0
    for step, (images, labels) in enumerate(loader):
        images = images.to(device)
        labels = labels.to(device)
"""

# The body of the huge function, repeated: plain statements, small branches and a backward.
HUGE_STEP = """\
        out{n} = model(images)
        loss{n} = F.cross_entropy(out{n}, labels)
        optimizer.zero_grad()
        loss{n}.backward()
        optimizer.step()
        total += loss{n}.item()
        if step % {m} == 0:
            print("step", step, total)
"""

SHAPES = ("distinct", "repeated", "nested", "table", "huge-function")


def _lines(text: str) -> int:
    return text.count("\n")


def _fill(head: str, part, lines: int, tail: str = "") -> str:
    """``head``, then ``part(0)``, ``part(1)``, ... until the text (with ``tail``) has about
    ``lines`` lines."""
    parts = [head]
    count = _lines(head) + _lines(tail)
    n = 0
    while count < lines:
        chunk = part(n)
        parts.append(chunk)
        count += _lines(chunk)
        n += 1
    parts.append(tail)
    return "".join(parts)


def _nested_block(n: int) -> str:
    rows = [f"def nested_{n}(model, x):", "    total = 0"]
    indent = "    "
    for d in range(NEST_DEPTH):
        opener = _OPENERS[d % len(_OPENERS)]
        previous = d - 1 - (d - 1) % len(_OPENERS)  # the nearest loop variable above
        rows.append(indent + opener.format(d=d, p=max(previous, 0)))
        indent += "    "
        rows.append(indent + f"x = model(x) + {d}")
        if d % 4 == 3:
            rows.append(indent + "total += 1")
    rows.append("    return x, total")
    return "\n".join(rows) + "\n\n\n"


def _table_row(n: int) -> str:
    return f"    ({n}, {n * 0.5:.1f}, \"label_{n % 97}\", {n % 7 == 0}),\n"


def generate(shape: str, lines: int) -> str:
    """Python source of about ``lines`` lines (never fewer) in the given shape."""
    if shape == "distinct":
        return _fill(HEADER, lambda n: SCRIPT.format(n=f"_{n}"), lines)
    if shape == "repeated":
        return _fill(HEADER, lambda n: SCRIPT.format(n=""), lines)
    if shape == "nested":
        return _fill(HEADER, _nested_block, lines)
    if shape == "table":
        return _fill(TABLE_HEADER, _table_row, lines, tail="]\n")
    if shape == "huge-function":
        return _fill(HUGE_HEADER, lambda n: HUGE_STEP.format(n=n, m=10 + n % 90), lines, tail="    return total\n")
    raise ValueError(f"unknown shape {shape!r}; choose from {', '.join(SHAPES)}")


def measure(path: Path, budget: int) -> dict:
    """Check one file in a fresh process: wall seconds, CPU seconds and peak resident MB."""
    command = [sys.executable, "-m", "advisor", "check", "--no-cache", "--jobs", "1", "--quiet",
               "--exit-zero", "--analysis-budget", str(budget), str(path)]
    start = time.perf_counter()
    child = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    # wait4 gives this child's own rusage (RUSAGE_CHILDREN would be the maximum over all of them).
    _, status, usage = os.wait4(child.pid, 0)
    wall = time.perf_counter() - start
    child.returncode = os.waitstatus_to_exitcode(status)
    errors = child.stderr.read().decode(errors="replace").strip()
    child.stderr.close()
    if child.returncode != 0:
        raise SystemExit(f"{path.name}: advisor exited {child.returncode}: {errors[-500:]}")
    return {"wall": wall, "cpu": usage.ru_utime + usage.ru_stime, "mb": usage.ru_maxrss / 1024,
            "note": errors.splitlines()[-1] if errors else ""}


def exponent(rows):
    """The growth exponent of CPU time between the two largest sizes."""
    if len(rows) < 2:
        return float("nan")
    (l1, r1), (l2, r2) = rows[-2], rows[-1]
    if r1["cpu"] <= 0 or l2 == l1:
        return float("nan")
    return math.log(r2["cpu"] / r1["cpu"]) / math.log(l2 / l1)


def plot(results, path: Path, title: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    figure, (left, middle, right) = plt.subplots(1, 3, figsize=(15, 4.5))
    for shape, rows in results.items():
        xs = [lines for lines, _ in rows]
        left.plot(xs, [r["wall"] for _, r in rows], marker="o", label=shape)
        middle.plot(xs, [r["cpu"] for _, r in rows], marker="o", label=shape)
        right.plot(xs, [r["mb"] for _, r in rows], marker="o", label=shape)
    for axis, label in ((left, "wall time (s)"), (middle, "CPU time (s)"), (right, "peak memory (MB)")):
        axis.set_xlabel("lines in the file")
        axis.set_ylabel(label)
        axis.grid(True, alpha=0.3)
    left.legend()
    figure.suptitle(title)
    figure.tight_layout()
    figure.savefig(path, dpi=100)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="sizes up to 20,000 lines")
    parser.add_argument("--sizes", help="comma-separated line counts (overrides --quick)")
    parser.add_argument("--shapes", default=",".join(SHAPES), help="comma-separated shapes")
    parser.add_argument("--plot", type=Path, help="write a PNG of the curves here")
    parser.add_argument("--title", default="advisor check --no-cache, one file", help="the plot's title")
    parser.add_argument("--budget", type=int, default=3600, help="--analysis-budget for each check")
    args = parser.parse_args(argv)
    if args.sizes:
        sizes = [int(s) for s in args.sizes.split(",")]
    elif args.quick:
        sizes = [1000, 2500, 5000, 10000, 20000]
    else:
        sizes = [1000, 3000, 10000, 30000, 100000]
    shapes = [s.strip() for s in args.shapes.split(",") if s.strip()]
    for shape in shapes:
        if shape not in SHAPES:
            parser.error(f"unknown shape {shape!r}; choose from {', '.join(SHAPES)}")
    results = {}
    with TemporaryDirectory() as folder:
        for shape in shapes:
            rows = results[shape] = []
            for size in sizes:
                text = generate(shape, size)
                path = Path(folder) / f"{shape}_{size}.py"
                path.write_text(text, encoding="utf-8")
                figures = measure(path, args.budget)
                rows.append((_lines(text), figures))
                path.unlink()
                print(f"{shape:14} {_lines(text):>7} lines  wall {figures['wall']:7.2f} s  "
                      f"cpu {figures['cpu']:7.2f} s  peak {figures['mb']:6.0f} MB  {figures['note']}",
                      flush=True)
    print()
    print("| Shape | " + " | ".join(f"{s:,} lines" for s in sizes) + " | exponent (CPU, last two) |")
    print("| --- | " + " | ".join("---" for _ in sizes) + " | --- |")
    for shape, rows in results.items():
        cells = [f"{r['cpu']:.2f} s / {r['mb']:.0f} MB" for _, r in rows]
        print(f"| {shape} | " + " | ".join(cells) + f" | {exponent(rows):.2f} |")
    if args.plot:
        plot(results, args.plot, args.title)
        print(f"\nwrote {args.plot}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
