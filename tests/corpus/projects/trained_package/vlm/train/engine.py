"""The training engine of the model's own runs (a module of a folder without `__init__.py`)."""


def run_epoch(model, loader, opt):
    for input_ids, features, labels in loader:
        loss = model(input_ids.cuda(), features.cuda(), labels.cuda())
        loss.backward()
        opt.step()
        opt.zero_grad()
        print("step loss", loss.item())  # expect: GPU101
