import torch

from agents.ppo import PPO


def main(batches):
    device = torch.device("cuda")
    policy = torch.nn.Linear(8, 1).to(device)
    agent = PPO(policy, torch.optim.Adam(policy.parameters()), device)
    for epoch in range(100):
        agent.optimize(batches)


if __name__ == "__main__":
    main([])
