"""Loops that read a result back to the host on every pass, to write a file or to sum up an
evaluation: a script that calls the model on one batch, then `.cpu().numpy()`s the output to
write an image, or a test pass under `no_grad` that adds each batch's `dice.item()`. Each such
read waits for the GPU to finish all queued work, so the next pass starts with an empty queue:
a non-blocking copy of its batch would have nothing to overlap with. (In a training loop the
read itself is the problem, and a rule reports it; here it is the point of the loop.)"""

from __future__ import annotations

from advisor.model.facts import LoopInfo

# Reads that hand a tensor's values to Python, each waiting for the GPU.
_READS = frozenset({"cpu", "numpy", "item", "tolist"})


def reads_back_each_pass(model, loop: LoopInfo) -> bool:
    """The loop trains nothing, and its own body reads a value back to the host on every pass
    (not under a test of its own) and either writes a file (a script that saves each output) or
    runs without autograd (an evaluation pass that adds up `dice.item()` per batch, a feature
    dump that `.cpu()`s each batch's embeddings)."""
    if model.is_training_loop(loop):
        return False
    outer_guard = loop.ctx.guard
    own = [site for site in loop.sites if site.ctx.loop is loop and site.ctx.guard is outer_guard]
    # A read in a loop of the body over the output's parts (`for name in layers:
    # out[name].cpu()`) runs on every pass too.
    reads = [site for site in loop.sites
             if site.method in _READS and not site.node.args and _every_pass(site.ctx, outer_guard)
             and site.ctx.loop is not None and site.ctx.loop.within(loop)]
    if not reads:
        return False
    if loop.ctx.no_grad or (loop.function is not None and loop.function.no_grad) or all(
            site.ctx.no_grad for site in reads):
        return True
    return any((site.qualname or "") in _WRITERS or site.method in _WRITE_METHODS for site in own)


# What writes one output per pass: an image, an array, a tensor, a figure.
_WRITERS = frozenset({
    "cv2.imwrite", "numpy.save", "numpy.savez", "torch.save", "imageio.imwrite", "imageio.imsave",
    "skimage.io.imsave", "matplotlib.pyplot.imsave", "matplotlib.pyplot.savefig", "torchvision.utils.save_image",
    "scipy.misc.imsave", "PIL.Image.fromarray",
})
_WRITE_METHODS = frozenset({"imwrite", "imsave", "save_image", "savefig"})


def _every_pass(ctx, outer_guard) -> bool:
    """No test of the loop's own decides whether the code runs, but those that leave early
    (`if name not in output: raise ValueError(...)`): what follows them runs on every pass that
    goes on."""
    guard = ctx.guard
    while guard is not None and guard is not outer_guard:
        if not guard.exits:
            return False
        guard = guard.ctx.guard
    return True
