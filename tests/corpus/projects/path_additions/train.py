import sys
sys.path.append("core")

import torch

import datasets


def train(args, model):
    model = model.cuda()
    optimizer = torch.optim.AdamW(model.parameters(), lr=args.lr)
    train_loader = datasets.fetch_dataloader(args)
    total_steps = 0
    keep_training = True
    while keep_training:
        for i_batch, data_blob in enumerate(train_loader):
            image1, image2, flow = [x.cuda() for x in data_blob]
            loss = (model(image1, image2) - flow).abs().mean()
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            total_steps += 1
            if total_steps > args.num_steps:
                keep_training = False
                break
