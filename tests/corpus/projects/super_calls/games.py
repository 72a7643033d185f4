import torch

from gan.game import ContrastiveLoss, Game


def train(encoder, loader, batch_size, epochs):
    game = Game(encoder, ContrastiveLoss(batch_size)).cuda()
    opt = torch.optim.Adam(game.parameters())
    for epoch in range(epochs):
        for x in loader:
            loss = game(x.cuda())
            opt.zero_grad()
            loss.backward()
            opt.step()
