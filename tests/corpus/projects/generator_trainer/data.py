from torch.utils.data import DataLoader, Dataset


class ImageDataset(Dataset):
    def __init__(self, files):
        self.files = files

    def __len__(self):
        return len(self.files)

    def __getitem__(self, i):
        return self.files[i], {}


def load_data(*, files, batch_size):
    dataset = ImageDataset(files)
    loader = DataLoader(dataset, batch_size=batch_size, shuffle=True, num_workers=1, drop_last=True)  # expect: GPU201, GPU204
    while True:
        yield from loader
