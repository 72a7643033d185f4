"""Loops that read a result back to the host and write a file on every pass: an evaluation script
that calls the model on one batch, then `.cpu().numpy()`s the output to write an image. Each such
read waits for the GPU to finish all queued work, so the next pass starts with an empty queue:
a non-blocking copy of its batch would have nothing to overlap with. (In a training loop the
read itself is the problem, and a rule reports it; here it is the point of the loop.)"""

from __future__ import annotations

from advisor.model.facts import LoopInfo

# Reads that hand a tensor's values to Python, each waiting for the GPU.
_READS = frozenset({"cpu", "numpy", "item", "tolist"})


def reads_back_each_pass(model, loop: LoopInfo) -> bool:
    """The loop trains nothing, and its own body reads a value back to the host and writes a
    file on every pass (not under a test of its own): a script that saves each output."""
    if model.is_training_loop(loop):
        return False
    outer_guard = loop.ctx.guard
    own = [site for site in loop.sites if site.ctx.loop is loop and site.ctx.guard is outer_guard]
    return any(site.method in _READS and not site.node.args for site in own) and any(
        (site.qualname or "") in _WRITERS or site.method in _WRITE_METHODS for site in own)


# What writes one output per pass: an image, an array, a tensor, a figure.
_WRITERS = frozenset({
    "cv2.imwrite", "numpy.save", "numpy.savez", "torch.save", "imageio.imwrite", "imageio.imsave",
    "skimage.io.imsave", "matplotlib.pyplot.imsave", "matplotlib.pyplot.savefig", "torchvision.utils.save_image",
    "scipy.misc.imsave", "PIL.Image.fromarray",
})
_WRITE_METHODS = frozenset({"imwrite", "imsave", "save_image", "savefig"})
