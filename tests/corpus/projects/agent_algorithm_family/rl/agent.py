import torch

from rl import algorithm


class Agent:
    def __init__(self, spec, net, memory):
        self.memory = memory
        AlgorithmClass = getattr(algorithm, spec["algorithm"])
        self.algorithm = AlgorithmClass(self, net)

    def act(self, state):
        # exploration only in this sketch: a uniformly random action
        return torch.randint(0, 2, (), device=state.device)

    def update(self, state, action, reward, next_state, done):
        self.memory.update(state, action, reward, next_state, done)
        return self.algorithm.train()
