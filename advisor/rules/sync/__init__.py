"""Host-device synchronisation in the training loop (GPU1xx)."""


# What the host-sync rules say about `FileModel.batch_heat`'s forward path (added to `what`).
FORWARD_PATH_DOC = """
        The same holds in the forward path of a model the call graph does not see trained (built
        from a registry or a config name, handed to a `Trainer`): the `forward` of an
        `nn.Module` or Hugging Face model class and the project functions it calls, with
        gradients on, outside `if not self.training:`, outside the arms a forward takes only
        when handed no targets (`if target is None or return_preds:` decoding predictions, in
        a forward whose `if target is not None:` computes the loss), and outside the branches that every
        training call switches off (`else:` of `if train:` when it calls `model(x, y,
        train=True)`; `if label is None:` when every call passes a label); a warning when that forward evidently
        trains (a registered class that holds parameters, also one that a module-level dict of
        models names, `MODELS = {"unet": UNet, ...}`, a forward that takes `labels`/`targets` or
        computes a loss),
        informational for a plain layer, and for a class the project builds by name that no call
        is seen to run (put in a list of blocks the model's loop may skip).
"""
