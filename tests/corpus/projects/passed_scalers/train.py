import torch
from torch.utils.data import DataLoader

from normalize import Normalizer
from objectives import train_joint
from plain_objectives import train_normalised


def main():
    model = torch.nn.Linear(16, 16).cuda()
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-4)
    grad_scalar = torch.amp.GradScaler("cuda", 2**10)
    loader = DataLoader(torch.randn(512, 16), batch_size=32, pin_memory=True, num_workers=4, persistent_workers=True)
    for epoch in range(10):
        train_joint(loader, model, optimizer, grad_scalar)
        train_normalised(loader, model, optimizer, Normalizer(0.5, 0.25))


if __name__ == "__main__":
    main()
