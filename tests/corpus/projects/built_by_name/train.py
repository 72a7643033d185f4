import torch

from model import load_model


def main(args, loader):
    agent = load_model(args)
    for epoch in range(args["epochs"]):
        for batch in loader:
            agent.train_step(batch)


if __name__ == "__main__":
    main({"model_name": "CaptionNet", "lr": 1e-4, "epochs": 3}, torch.load("batches.pt"))
