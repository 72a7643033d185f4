import torch

from loss import MultiBoxLoss

torch.set_default_tensor_type("torch.cuda.FloatTensor")
criterion = MultiBoxLoss()
model = build_ssd().cuda()
optimizer = torch.optim.SGD(model.parameters(), lr=1e-3, momentum=0.9)
for images, targets in loader:
    loss = criterion(model(images.cuda()), targets)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
