import torch
from torch.utils.data import DataLoader

from src.train.gpu_loop import GpuLoop

device = torch.device("cuda:0" if torch.cuda.is_available() else "cpu")

net = torch.nn.Linear(16, 4).to(device)
train_loader = DataLoader(train_set, batch_size=64, shuffle=True)  # expect: GPU201, GPU202
optimizer = torch.optim.Adam(net.parameters(), lr=1e-3)
GpuLoop(net, train_loader, optimizer, device).fit(epochs=20)
