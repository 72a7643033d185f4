"""Dataset statistics next to a model on the GPU: the batches themselves stay on the host."""
import torch
from torch.utils.data import DataLoader

from model import Synthesizer
from utils import summarize


def dataset_report(hparams, dataset):
    model = Synthesizer(hparams).cuda()
    print(sum(p.numel() for p in model.parameters()))
    loader = DataLoader(dataset, batch_size=64, num_workers=4, pin_memory=False, persistent_workers=True)
    for batch in loader:
        print(summarize(batch))
