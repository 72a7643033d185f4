import torch


def train(model, train_dataloader, epochs, lr, loss_fn, summary_fn, steps_til_summary=100):
    optim = torch.optim.Adam(lr=lr, params=model.parameters())
    total_steps = 0
    train_losses = []
    for epoch in range(epochs):
        for step, (model_input, gt) in enumerate(train_dataloader):
            model_input = {key: value.cuda() for key, value in model_input.items()}  # expect: GPU203
            gt = {key: value.cuda() for key, value in gt.items()}  # expect: GPU203
            model_output = model(model_input)
            losses = loss_fn(model_output, gt)
            train_loss = 0.
            for loss_name, loss in losses.items():
                train_loss += loss.mean()
            # Only Python numbers here: the sum stays on the host.
            seen = 0.
            for name, count in model_input.get('counts', {}).items():
                seen += count
            train_losses.append(seen.item())
            train_losses.append(train_loss.item())  # expect: GPU101
            if not total_steps % steps_til_summary:
                summary_fn(model, model_input, gt, model_output, total_steps)
            optim.zero_grad()
            train_loss.backward()
            optim.step()
            total_steps += 1
