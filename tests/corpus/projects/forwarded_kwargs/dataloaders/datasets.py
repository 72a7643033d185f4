import torch
from torch.utils.data import Dataset


class Segmentation(Dataset):
    num_classes = 21

    def __init__(self, args, split):
        self.files = sorted(args.files[split])

    def __len__(self):
        return len(self.files)

    def __getitem__(self, index):
        image = torch.load(self.files[index])
        return {"image": image["x"], "label": image["y"]}
