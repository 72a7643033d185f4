"""A small deterministic-policy learner on a classic-control task, run on the CPU: no tensor
ever leaves it, so the graphs its rollouts record cost host memory only."""

import random

import gym
import torch
import torch.nn as nn
import torch.nn.functional as F


class Policy(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(3, 64)
        self.out = nn.Linear(64, 1)

    def forward(self, x):
        return torch.tanh(self.out(F.relu(self.fc(x)))) * 2.0


def update(policy, critic, optimizer, buffer):
    states = torch.tensor([b[0] for b in random.sample(buffer, 32)]).float()
    loss = -critic(torch.cat([states, policy(states)], dim=1)).mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()


def main():
    env = gym.make("Pendulum-v1")
    policy = Policy()
    critic = nn.Linear(4, 1)
    optimizer = torch.optim.Adam(policy.parameters(), lr=1e-3)
    buffer = []
    for episode in range(500):
        state, _ = env.reset()
        done, steps = False, 0
        while steps < 200 and not done:
            action = policy(torch.from_numpy(state).float())  # expect: GPU601 info
            next_state, reward, done, _, _ = env.step([action.item()])
            buffer.append((state, reward))
            state, steps = next_state, steps + 1
        if len(buffer) > 1000:
            for _ in range(10):
                update(policy, critic, optimizer, buffer)


if __name__ == "__main__":
    main()
