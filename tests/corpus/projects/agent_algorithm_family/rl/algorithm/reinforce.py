import torch


class Reinforce:
    """One policy-gradient update each time a batch of episodes is ready."""

    def __init__(self, agent, net):
        self.agent, self.net = agent, net
        self.optim = torch.optim.Adam(net.parameters(), lr=1e-3)
        self.to_train = 0

    def train(self):
        if self.to_train == 1:
            states, actions, returns = self.agent.memory.sample()
            logits = self.net(states)
            loss = -(torch.log_softmax(logits, -1).gather(1, actions[:, None]).squeeze(1) * returns).mean()
            self.optim.zero_grad()
            loss.backward()
            self.optim.step()
            self.to_train = 0
            return loss.item()  # expect: GPU101
        return float("nan")

    def summary(self, states):
        # trap: GPU101 (called once, after the run)
        return self.net(states).mean().item()
