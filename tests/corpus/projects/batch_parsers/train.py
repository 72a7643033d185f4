import torch
from torch.utils.data import DataLoader

from model import Synthesizer


def train(hparams, trainset):
    model = Synthesizer(hparams).cuda()
    optimizer = torch.optim.Adam(model.parameters(), lr=hparams.lr)
    loader = DataLoader(trainset, batch_size=hparams.batch_size, shuffle=True, num_workers=4,  # expect: GPU201
                        pin_memory=False, drop_last=True, persistent_workers=True)
    for epoch in range(hparams.epochs):
        for batch in loader:
            text, mel = model.parse_batch(batch)
            loss = nn.functional.mse_loss(model(text), mel)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()

