import torch

from model import Synthesizer


@torch.no_grad()
def synthesize(checkpoint, texts):
    model = Synthesizer().cuda().eval()
    model.load_state_dict(torch.load(checkpoint))
    return [model(text.cuda(), torch.ones(text.shape[:2], device="cuda")) for text in texts]
