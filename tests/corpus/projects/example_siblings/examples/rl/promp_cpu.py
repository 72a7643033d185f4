"""Look-alike: this example shares the policy with the GPU one, but keeps every tensor on the
host: its reads wait for no device."""
import torch

from policies import DiagNormalPolicy


def main(env, iterations=100):
    policy = DiagNormalPolicy(8, 2)
    optimizer = torch.optim.Adam(policy.parameters(), lr=1e-3)
    for iteration in range(iterations):
        state = torch.as_tensor(env.reset())
        loss = policy(state).pow(2).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        print(loss.item())  # expect: GPU101 info
