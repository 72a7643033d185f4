import torch


def model_training(args, batches, model, total_steps):
    optimizer = torch.optim.AdamW(model.parameters(), lr=args.lr)
    model.train()
    for step in range(total_steps):
        input_ids, labels = batches.next_batch()
        loss = model(input_ids.cuda(non_blocking=True), labels.cuda(non_blocking=True)).mean()
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()
    return model


@torch.no_grad()
def model_inference(model, batches):
    model.eval()
    return [model(x.cuda(non_blocking=True)) for x in batches]
