"""The copied model's own evaluation script: no command of this project runs it."""
import torch
from torch.utils.data import DataLoader

from vlm.model import CaptionModel


def main(dataset):
    model = CaptionModel().cuda().eval()
    loader = DataLoader(dataset, batch_size=1, num_workers=2)  # expect: GPU201 info
    with torch.inference_mode():
        for epoch in range(3):
            for ids, features in loader:
                model.generate(ids.cuda(), features.cuda())


if __name__ == "__main__":
    main([])
