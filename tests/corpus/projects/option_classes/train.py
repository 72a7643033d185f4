import argparse

import torch
from torch.utils.data import DataLoader

import options
from data import ImageFolderPairs

opt = options.TrainOptions().init(argparse.ArgumentParser(description="image denoising")).parse_args()

train_loader = DataLoader(ImageFolderPairs("train"), batch_size=opt.batch_size, shuffle=True,  # expect: GPU204
                          num_workers=opt.train_workers, pin_memory=True)
val_loader = DataLoader(ImageFolderPairs("val"), batch_size=8, num_workers=opt.eval_workers, pin_memory=True)  # expect: GPU204

model = build_model().cuda()
optimizer = torch.optim.AdamW(model.parameters(), lr=2e-4)
for epoch in range(opt.epochs):
    model.train()
    for noisy, clean in train_loader:
        noisy, clean = noisy.cuda(non_blocking=True), clean.cuda(non_blocking=True)
        loss = (model(noisy) - clean).abs().mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    model.eval()
    with torch.no_grad():
        for noisy, clean in val_loader:
            psnr = evaluate(model(noisy.cuda(non_blocking=True)), clean.cuda(non_blocking=True))
