import torch
from torch.utils.data import DataLoader

import losses


def main():
    model = torch.nn.Linear(16, 16).cuda()
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
    train_step_fn = losses.get_step_fn(0.1, optimizer)
    report_fn = losses.get_report_fn(0.1)
    loader = DataLoader(torch.randn(1024, 16), batch_size=32, num_workers=4, pin_memory=True, persistent_workers=True)
    for epoch in range(10):
        for batch in loader:
            train_step_fn(model, batch.cuda(non_blocking=True))
    # One report after training: the factory's other closure runs once.
    print(report_fn(model, torch.randn(32, 16, device="cuda")))


if __name__ == "__main__":
    main()
