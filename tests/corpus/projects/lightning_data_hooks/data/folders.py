import os

import torch
from PIL import Image
from torchvision.transforms.functional import to_tensor


class PairFolder(torch.utils.data.Dataset):
    def __init__(self, root, split="train"):
        self.files = sorted(os.listdir(os.path.join(root, split)))

    def __len__(self):
        return len(self.files)

    def __getitem__(self, i):
        image = to_tensor(Image.open(self.files[i]))
        return image + 0.1 * torch.randn_like(image), image
