import torch


class Trainer:
    def __init__(self, cfg, net_G, net_D, opt_G, opt_D):
        self.cfg = cfg
        self.net_G, self.net_D = net_G.cuda(), net_D.cuda()
        self.opt_G, self.opt_D = opt_G, opt_D

    def gen_update(self, data):
        loss = self.net_D(self.net_G(data["label"])).mean()
        self.opt_G.zero_grad()
        loss.backward()
        if hasattr(self.cfg.gen_opt, "clip_grad_norm"):
            total_norm = torch.nn.utils.clip_grad_norm_(self.net_G.parameters(), self.cfg.gen_opt.clip_grad_norm)
            if total_norm > self.cfg.gen_opt.clip_grad_norm:  # expect: GPU104
                print("generator gradient clipped")
        self.opt_G.step()

    def dis_update(self, data):
        loss = -self.net_D(data["images"]).mean()
        self.opt_D.zero_grad()
        loss.backward()
        if hasattr(self.cfg.dis_opt, "clip_grad_norm"):
            total_norm = torch.nn.utils.clip_grad_norm_(self.net_D.parameters(), self.cfg.dis_opt.clip_grad_norm)
            if total_norm > self.cfg.dis_opt.clip_grad_norm:  # expect: GPU104 info
                print("discriminator gradient clipped")
        self.opt_D.step()

    def train(self, loader, epochs):
        for epoch in range(epochs):
            for data in loader:
                data = {k: v.cuda(non_blocking=True) for k, v in data.items()}
                self.dis_update(data)
                self.gen_update(data)
