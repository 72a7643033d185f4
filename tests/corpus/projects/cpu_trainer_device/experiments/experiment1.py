import torch
from torch.utils.data import DataLoader

from src.train.trainloop import TrainLoop

device = torch.device("cpu")

net = torch.nn.Sequential(torch.nn.Linear(16, 64), torch.nn.Dropout(0.5), torch.nn.Linear(64, 4))
net.to(device)
train_loader = DataLoader(train_set, batch_size=32, shuffle=True)
optimizer = torch.optim.SGD(net.parameters(), lr=1e-2)
TrainLoop(net, train_loader, optimizer, torch.nn.CrossEntropyLoss(), device).fit(epochs=50)
