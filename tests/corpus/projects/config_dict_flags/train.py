import sys

import torch
import yaml

from modeling.builders import build_mlp
from modeling.davit import build_davit
from modeling.head import Head
from modeling.swin import build_swin
from modeling.swin_large import LargeSwinBlock


def main(path):
    # Large inputs: use_checkpoint=True in the YAML file trades compute for memory.
    with open(path) as f:
        cfg = yaml.safe_load(f)
    model = torch.nn.Sequential(Head(cfg), build_davit(cfg['MODEL']['BACKBONE']['DAVIT']), build_swin(cfg), LargeSwinBlock(10), build_mlp(cfg)).cuda()
    opt = torch.optim.AdamW(model.parameters())
    for _ in range(100):
        x = torch.randn(8, 96, device="cuda")
        loss = model(x).square().mean()
        opt.zero_grad()
        loss.backward()
        opt.step()


if __name__ == "__main__":
    main(sys.argv[1])
