import torch
from torch.utils.data import DataLoader

from models.select_model import define_Model


def main(opt, dataset):
    loader = DataLoader(dataset, batch_size=16, shuffle=True, num_workers=4, pin_memory=True, persistent_workers=True)
    model = define_Model(opt)
    step = 0
    for epoch in range(100):
        for train_data in loader:
            step += 1
            model.feed_data(train_data)
            model.optimize_parameters(step)


if __name__ == "__main__":
    main({"model": "plain"}, None)
