"""Single-pass evaluation with loaders configured elsewhere (look-alikes that must stay silent)."""

import torch
from torch.utils.data import DataLoader

from options import get_parser
from settings import BENCH_KWARGS, LOADER_KWARGS, SITE_KWARGS, DataConfig, load_site


@torch.no_grad()
def evaluate(model, loader):
    correct = torch.zeros((), device="cuda")
    for images, targets in loader:
        images = images.cuda(non_blocking=True)
        targets = targets.cuda(non_blocking=True)
        correct += (model(images).argmax(1) == targets).sum()
    return correct


def main(model, test_set):
    args = get_parser().parse_args()
    load_site(args.data + "/site.json")
    kwargs = {**LOADER_KWARGS, "num_workers": args.workers, "pin_memory": True}
    cfg = DataConfig()
    cfg.num_workers = 2 * args.workers
    cfg.pin_memory = torch.cuda.is_available()
    loaders = [
        DataLoader(test_set, **kwargs),
        DataLoader(test_set, **BENCH_KWARGS),
        DataLoader(test_set, **SITE_KWARGS),
        DataLoader(test_set, batch_size=64, num_workers=cfg.num_workers, pin_memory=cfg.pin_memory),
    ]
    return [evaluate(model, loader) for loader in loaders]
