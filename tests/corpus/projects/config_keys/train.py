import torch
import yaml

from trainer import Trainer


def main(config_path, net_G, net_D, loader):
    with open(config_path) as f:
        cfg = yaml.safe_load(f)
    opt_G = torch.optim.Adam(net_G.parameters(), lr=1e-4)
    opt_D = torch.optim.Adam(net_D.parameters(), lr=4e-4)
    trainer = Trainer(cfg, net_G, net_D, opt_G, opt_D)
    trainer.train(loader, epochs=100)


if __name__ == "__main__":
    main("configs/spade.yaml", *build())
