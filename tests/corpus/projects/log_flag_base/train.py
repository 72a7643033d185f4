import torch

from agent import Agent


def main(batches, logger):
    model = torch.nn.Linear(8, 1)
    agent = Agent(model, torch.optim.Adam(model.parameters()), log_interval=10_000, logger=logger)
    for epoch in range(100):
        agent.train(batches)


if __name__ == "__main__":
    main([], None)
