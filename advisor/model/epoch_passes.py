"""Passes an epoch loop makes only on some of its epochs: a loop inside an epoch loop that runs
under a test of the epoch loop's body holding now and then (`if epoch % 5 == 0:`, `if epoch in
[10, 30, 100]:`, `if is_power2(epoch):`). Asked by the loader rules: workers started again, or
batches copied, on those epochs only."""

from __future__ import annotations

from typing import Optional


def inside_loops(loop, loop_ids) -> bool:
    """``loop`` is one of ``loop_ids`` or nested in one."""
    while loop is not None:
        if id(loop) in loop_ids:
            return True
        loop = loop.parent
    return False


def pass_every_few_epochs(model, loop, epochs: Optional[set] = None) -> bool:
    """``loop``, inside an epoch loop (``epochs``: their ids; the file's epoch loops by default),
    runs only under a test of that epoch loop's body that holds on some epochs, also a few
    rounds deep (`for rep in range(3): for batch in val_loader:`). A test inside the batch loop
    (`if step % 1000 == 0:` validation) does not count: it holds many times an epoch. Nor does a
    test whose every divisor is 1 unless the run asks otherwise (`if (epoch + 1) %
    args.eval_interval == 0:` with `--eval_interval` defaulting to 1): it holds every epoch."""
    if epochs is None:
        epochs = model.shared("epoch-loop-ids", lambda m: {id(e) for e in m.epoch_loops()})
    return (bool(epochs) and inside_loops(loop.parent, epochs) and model.guards.periodic(loop.ctx, within=epochs)
            and not model.guards.every_pass_by_default(loop.ctx))
