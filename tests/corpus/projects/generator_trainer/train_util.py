import torch


class TrainLoop:
    def __init__(self, *, model, data, batch_size, microbatch, lr):
        self.model = model
        self.data = data
        self.batch_size = batch_size
        self.microbatch = microbatch
        self.opt = torch.optim.AdamW(model.parameters(), lr=lr)

    def run_loop(self):
        while True:
            batch, cond = next(self.data)
            self.run_step(batch, cond)

    def run_step(self, batch, cond):
        self.forward_backward(batch, cond)
        self.opt.step()

    def forward_backward(self, batch, cond):
        self.opt.zero_grad()
        for i in range(0, batch.shape[0], self.microbatch):
            micro = batch[i : i + self.microbatch].to("cuda")
            loss = self.model(micro).mean()
            loss.backward()
