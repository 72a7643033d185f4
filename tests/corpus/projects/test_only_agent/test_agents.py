import unittest

import torch

from agents.planner import PlannerAgent
from agents.ppo import PPO


class TestAgents(unittest.TestCase):
    def test_planner(self):
        policy = torch.nn.Linear(8, 1)
        agent = PlannerAgent(policy, torch.optim.SGD(policy.parameters(), lr=0.1), torch.device("cpu"))
        agent.optimize([(torch.zeros(4, 8), torch.zeros(4, 1))])

    def test_ppo(self):
        policy = torch.nn.Linear(8, 1)
        PPO(policy, torch.optim.SGD(policy.parameters(), lr=0.1), torch.device("cpu")).optimize([])
