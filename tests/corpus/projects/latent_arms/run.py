import torch

from agent import Agent


class Sampler:
    def __init__(self, states, actions, device):
        self.states, self.actions, self.device = states, actions, device

    def sample(self, batch_size):
        index = torch.randint(0, len(self.states), (batch_size,), device=self.device)
        return self.states[index], self.actions[index]


agent = Agent("cuda")
agent.train(Sampler(torch.randn(1000, 2, device="cuda"), torch.randn(1000, 2, device="cuda"), "cuda"), 5000)
print(agent.sample_action(torch.zeros(64, 2)))
