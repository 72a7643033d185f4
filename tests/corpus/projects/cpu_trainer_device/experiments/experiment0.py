import torch
from torch.utils.data import DataLoader

from src.train.trainloop import TrainLoop

use_cuda = torch.cuda.is_available()
device = torch.device("cpu")
# device = torch.device("cuda:0" if use_cuda else "cpu")

net = torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.ReLU(), torch.nn.Linear(32, 4))
net.to(device)
train_loader = DataLoader(train_set, batch_size=64, shuffle=True)
optimizer = torch.optim.Adam(net.parameters(), lr=1e-3)
trainer = TrainLoop(net, train_loader, optimizer, torch.nn.CrossEntropyLoss(), device)
trainer.fit(epochs=20)
