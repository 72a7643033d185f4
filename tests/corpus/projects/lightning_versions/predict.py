import sys

import lightning as L
import torch

from models.folder_v2 import FolderV2


def predict(checkpoint, inputs):
    model = FolderV2.load_from_checkpoint(checkpoint)
    loader = torch.utils.data.DataLoader(inputs, batch_size=8, num_workers=2, pin_memory=True)
    trainer = L.Trainer(accelerator="cuda", devices=1)
    return trainer.predict(model, loader)


if __name__ == "__main__":
    predict(sys.argv[1], torch.load(sys.argv[2]))
