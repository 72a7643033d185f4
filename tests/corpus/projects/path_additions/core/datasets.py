"""Datasets and the loader factory, imported by scripts that put `core` on `sys.path`."""
from torch.utils import data


class FlowPairs(data.Dataset):
    def __init__(self, root):
        self.files = sorted(root.glob("*.flo"))

    def __len__(self):
        return len(self.files)

    def __getitem__(self, index):
        return read_pair(self.files[index])


def fetch_dataloader(args):
    train_dataset = FlowPairs(args.root)
    return data.DataLoader(train_dataset, batch_size=args.batch_size,  # expect: GPU201, GPU204
                           pin_memory=False, shuffle=True, num_workers=4, drop_last=True)
