import os

from PIL import Image
from torch.utils.data import Dataset


class ImageFolderPairs(Dataset):
    def __init__(self, root):
        self.root = root
        self.names = sorted(os.listdir(os.path.join(root, "noisy")))

    def __len__(self):
        return len(self.names)

    def __getitem__(self, index):
        noisy = Image.open(os.path.join(self.root, "noisy", self.names[index]))
        clean = Image.open(os.path.join(self.root, "clean", self.names[index]))
        return to_tensor(noisy), to_tensor(clean)
