import torch

from models.configuration import EncoderConfig
from models.modeling import Decoder, Encoder


def main(loader):
    config = EncoderConfig(hidden=512)
    config.grad_ckpt = True
    encoder, decoder = Encoder(config).cuda(), Decoder(config).cuda()
    optimizer = torch.optim.AdamW([*encoder.parameters(), *decoder.parameters()], lr=1e-4)
    for x, y in loader:
        x, y = x.cuda(non_blocking=True), y.cuda(non_blocking=True)
        loss = (decoder(encoder(x)) - y).pow(2).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
