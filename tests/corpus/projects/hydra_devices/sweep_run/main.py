import hydra
import torch
import torch.nn as nn


def run(cfg, env_batches):
    policy = nn.Sequential(nn.Linear(8, 64), nn.Tanh(), nn.Linear(64, 2)).to(cfg.algorithm.device)
    optimizer = torch.optim.Adam(policy.parameters(), lr=cfg.algorithm.lr)
    for epoch in range(cfg.algorithm.max_epochs):
        obs, ret = next(env_batches)
        obs, ret = obs.to(cfg.algorithm.device), ret.to(cfg.algorithm.device)
        loss = ((policy(obs).sum(-1) - ret) ** 2).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        print(epoch, loss.item())  # expect: GPU101


@hydra.main(config_path=".", config_name="main.yaml")
def main(cfg):
    run(cfg, iter([]))


if __name__ == "__main__":
    main()
