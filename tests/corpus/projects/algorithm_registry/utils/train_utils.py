"""The epoch runner: it only knows that `model` is some algorithm."""


def run_epoch(model, data_loader, epoch, num_steps, tracker):
    data_iter = iter(data_loader)
    logs = []
    for _ in range(num_steps):
        try:
            batch = next(data_iter)
        except StopIteration:
            data_iter = iter(data_loader)
            batch = next(data_iter)
        batch = model.process_batch_for_training(batch)
        info = model.train_on_batch(batch, epoch)
        logs.append(model.log_info(info))
        # The tracker comes from an installed package: the project's own `record_stats`
        # methods belong to unrelated classes, so neither is taken to run here.
        logs.append(tracker.record_stats(info))
    return logs
