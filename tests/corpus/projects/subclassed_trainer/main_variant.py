import torch

from variant.trainer import *

model = torch.nn.Linear(8, 8)
trainer = Trainer("variant", model, torch.optim.SGD(model.parameters(), lr=0.1))
trainer.train(torch.utils.data.DataLoader(torch.utils.data.TensorDataset(torch.randn(64, 8), torch.randn(64, 8))), 2)
