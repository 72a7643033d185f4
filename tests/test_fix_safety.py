"""Fixes offered as safe must keep what the program does. Issue 16 §3: GPU401's
`zero_grad(set_to_none=False)` -> `True` was offered as safe, but changes the trained weights."""

from __future__ import annotations

import subprocess
import sys

import pytest

SCRIPT = """\
import torch

torch.manual_seed(0)
encoder, head = torch.nn.Linear(4, 4), torch.nn.Linear(4, 1)
optimizer = torch.optim.AdamW(list(encoder.parameters()) + list(head.parameters()), lr=0.1, weight_decay=0.1)
for step in range(10):
    optimizer.zero_grad(set_to_none=False)
    hidden = encoder(torch.randn(8, 4))
    loss = head(hidden).sum() if step % 2 == 0 else hidden.sum()  # the head is unused on odd steps
    loss.backward()
    optimizer.step()
print(round(head.weight.sum().item(), 4))
"""


def _advisor(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "advisor", "check", "--no-cache", "--select", "GPU401", *args],
                          capture_output=True, text=True, timeout=120)


def test_gpu401_fix_needs_unsafe_fixes(tmp_path):
    script = tmp_path / "train.py"
    script.write_text(SCRIPT)
    _advisor("--fix", str(script))
    assert script.read_text() == SCRIPT, "`--fix` applied GPU401's fix, which changes the trained weights"
    _advisor("--fix", "--unsafe-fixes", str(script))
    assert "zero_grad(set_to_none=True)" in script.read_text()


def test_gpu401_fix_changes_the_weights_adam_trains(tmp_path):
    """Why the fix is unsafe: AdamW steps a parameter whose gradient is zero (its moments and
    weight decay move it) but skips one whose gradient is None."""
    pytest.importorskip("torch")
    script = tmp_path / "train.py"
    script.write_text(SCRIPT)
    before = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=300)
    _advisor("--fix", "--unsafe-fixes", str(script))
    after = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=300)
    assert before.returncode == after.returncode == 0, before.stderr + after.stderr
    assert before.stdout.strip() != after.stdout.strip()
