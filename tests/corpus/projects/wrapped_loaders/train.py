"""Entry point of the image-to-image runs: options, dataset wrapper, model by name."""

from data import create_dataset
from models import create_model
from options import parse

if __name__ == "__main__":
    opt = parse()
    dataset = create_dataset(opt)
    model = create_model(opt)
    for epoch in range(opt.epochs):
        for i, data in enumerate(dataset):
            model.set_input(data)
            model.optimize_parameters()
