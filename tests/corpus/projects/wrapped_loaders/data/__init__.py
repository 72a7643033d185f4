"""The loader lives inside a wrapper object; the scripts iterate the wrapper."""

import torch


class PairedFolder(torch.utils.data.Dataset):
    def __init__(self, root):
        self.files = sorted(torch.load(f"{root}/index.pt"))

    def __len__(self):
        return len(self.files)

    def __getitem__(self, index):
        return torch.load(self.files[index])


def create_dataset(opt):
    data_loader = WrappedLoader(opt)
    return data_loader.load_data()


class WrappedLoader:
    def __init__(self, opt):
        self.opt = opt
        self.dataset = PairedFolder(opt.dataroot)
        self.dataloader = torch.utils.data.DataLoader(  # expect: GPU201
            self.dataset, batch_size=opt.batch_size, shuffle=True, num_workers=4, persistent_workers=True
        )

    def load_data(self):
        return self

    def __len__(self):
        return len(self.dataset)

    def __iter__(self):
        for i, data in enumerate(self.dataloader):
            if i * self.opt.batch_size >= self.opt.max_dataset_size:
                break
            yield data
