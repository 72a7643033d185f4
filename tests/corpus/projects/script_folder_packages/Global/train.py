import torch
from torch.autograd import Variable

from data.data_loader import CreateDataLoader
from models.pix2pix_model import Pix2PixModel

data_loader = CreateDataLoader(opt)
dataset = data_loader.load_data()
model = Pix2PixModel()
model.initialize(opt)
optimizer = torch.optim.Adam(model.netG.parameters(), lr=2e-4)
for epoch in range(200):
    for i, data in enumerate(dataset):
        loss = model(Variable(data["label"]), Variable(data["image"]))
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
