"""The session loop: one environment step, then one agent update, until the frame budget."""
import json
import sys

import gymnasium as gym
import torch

from rl.agent import Agent
from rl.memory import Replay


def run(spec):
    env = gym.make(spec["env"])
    net = torch.nn.Sequential(torch.nn.Linear(4, 64), torch.nn.Tanh(), torch.nn.Linear(64, 2)).cuda()
    agent = Agent(spec, net, Replay())
    state, _ = env.reset()
    for frame in range(spec["max_frame"]):
        action = agent.act(torch.as_tensor(state).cuda())
        next_state, reward, terminated, truncated, _ = env.step(action.cpu().numpy())  # expect: GPU103 info
        agent.update(state, action, reward, next_state, terminated or truncated)
        state = next_state if not (terminated or truncated) else env.reset()[0]
    print(agent.algorithm.summary(torch.as_tensor(state).cuda()))


if __name__ == "__main__":
    run(json.load(open(sys.argv[1])))
