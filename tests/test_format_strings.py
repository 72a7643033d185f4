"""A `%`-format of a tensor is text: the tensor it formats is reported once, not the string too
(GPU102's fixtures compare sets of lines, which cannot see a second report on one line)."""

from advisor.engine import check_source

SCRIPT = '''\
import torch
from tqdm import tqdm


def train(model, loader, optimizer):
    model.cuda()
    correct, total = 0, 0
    pbar = tqdm(loader)
    for x, y in pbar:
        out = model(x.cuda())
        loss = torch.nn.functional.cross_entropy(out, y.cuda())
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        correct += (out.argmax(1) == y.cuda()).sum()
        total += y.size(0)
        pbar.set_postfix({"acc": "%.02f%%" % (100 * correct / total)})
'''


def test_a_percent_format_of_a_tensor_is_reported_once():
    found = [f for f in check_source(SCRIPT, "train.py").findings if f.code == "GPU102"]
    assert [(f.start.row, f.start.column) for f in found] == [(17, 47)]
