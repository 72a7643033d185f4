"""This example runs on the GPU when asked."""
import torch

from policies import DiagNormalPolicy


def main(env, iterations=100, cuda=1):
    device = torch.device("cuda" if cuda else "cpu")
    policy = DiagNormalPolicy(8, 2).to(device)
    optimizer = torch.optim.Adam(policy.parameters(), lr=1e-3)
    for iteration in range(iterations):
        state = torch.as_tensor(env.reset(), device=device)
        loss = policy(state).pow(2).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        print(loss.item())  # expect: GPU101
