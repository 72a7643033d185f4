"""Entry point: the model class comes from the options, by name."""

import torch
from torch.utils.data import DataLoader

from data import PairedImages
from models import create_model


def main(opt):
    loader = DataLoader(
        PairedImages(opt["dataroot"]), batch_size=16, shuffle=True, num_workers=8, pin_memory=True, persistent_workers=True
    )
    model = create_model(opt)
    current_iter = 0
    for epoch in range(opt["epochs"]):
        for data in loader:
            current_iter += 1
            model.feed_data(data)
            model.optimize_parameters(current_iter)
            if current_iter % opt["print_freq"] == 0:
                print(epoch, current_iter, model.get_current_log())


if __name__ == "__main__":
    main({"model_type": "SRModel", "num_gpu": 1, "dataroot": "datasets/div2k", "epochs": 100, "print_freq": 100})
