"""Source snippets shared by the cache tests."""

# A training loop with one sync per step: GPU101 at 7:14.
HOT = (
    "import torch\n"
    "model.cuda()\n"
    "for x, y in loader:\n"
    "    loss = model(x)\n"
    "    loss.backward()\n"
    "    optimizer.step()\n"
    "    total += loss.item()\n"
)
