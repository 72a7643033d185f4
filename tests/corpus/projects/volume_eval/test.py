from torch.utils.data import DataLoader

from metrics import evaluate_volume


def run(volumes, net):
    net = net.cuda().eval()
    volume_loader = DataLoader(volumes, batch_size=1, shuffle=False, num_workers=1)
    for batch in volume_loader:
        image, label, case = batch["image"], batch["label"], batch["case"][0]
        print(evaluate_volume(image, label, net, case=case))
