import argparse

import torch
from torch.utils.data import DataLoader

from losses import MaskLoss, contrastive_term

parser = argparse.ArgumentParser()
parser.add_argument("--aux_loss", action="store_true", help="add the contrastive term")
parser.add_argument("--log_grads", action="store_true")
parser.add_argument("--clip", type=float, default=0.0)
parser.add_argument("--warmup", type=int, default=0)
parser.add_argument("-n", "--check_nan", action="store_true")
parser.add_argument("--local_rank", type=int, default=-1)
parser.add_argument("--no-overlap", action="store_true", help="separate masks")
parser.add_argument("--use_test_as_train", action="store_true", help="train on the test split")
args = parser.parse_args()

model = torch.nn.Linear(16, 4).cuda()
opt = torch.optim.SGD(model.parameters(), lr=0.1)
mask_loss = MaskLoss(overlap=not args.no_overlap)
loader = DataLoader(torch.randn(512, 16), batch_size=32, num_workers=2, pin_memory=True, persistent_workers=True)
if args.use_test_as_train:
    loader = DataLoader(torch.randn(64, 16), batch_size=32, num_workers=2)  # expect: GPU201 info, GPU204 info
for epoch in range(10):
    for x in loader:
        x = x.cuda(non_blocking=True)
        out = model(x)
        loss = out.pow(2).mean() + mask_loss(out)
        if args.aux_loss:
            loss = loss + contrastive_term(out)
            print("aux", loss.item())  # expect: GPU101 info
        if args.warmup > 0:
            print("warmup", loss.item())  # expect: GPU101 info
        opt.zero_grad()
        loss.backward()  # expect: GPU305 info
        if args.clip > 0:
            norm = torch.nn.utils.clip_grad_norm_(model.parameters(), args.clip)
            print(norm.item())  # expect: GPU101
        if args.log_grads:
            print(model.weight.grad.norm().item())  # expect: GPU101
        if args.local_rank != -1:
            print("rank", args.local_rank, loss.item())  # expect: GPU101 info
        if args.check_nan:
            if torch.isnan(loss).any():  # expect: GPU104
                raise RuntimeError("loss is nan")
        opt.step()
