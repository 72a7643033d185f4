import torch


class PPO:
    """Several epochs of minibatch updates each time a rollout is complete."""

    def __init__(self, agent, net, epochs=4):
        self.agent, self.net, self.epochs = agent, net, epochs
        self.optim = torch.optim.Adam(net.parameters(), lr=3e-4)
        self.to_train = 0

    def train(self):
        if self.to_train == 1:
            total = 0.0
            for _ in range(self.epochs):
                for states, actions, advs in self.agent.memory.minibatches():
                    ratio = torch.exp(self.net(states).gather(1, actions[:, None]).squeeze(1))
                    loss = -(ratio * advs).mean()
                    self.optim.zero_grad()
                    loss.backward()
                    self.optim.step()
                    total += loss.item()  # expect: GPU101
            self.to_train = 0
            return total
        return float("nan")
