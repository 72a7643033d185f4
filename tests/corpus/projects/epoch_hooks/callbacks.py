from trainer import Callback


class SamplerEpochSetter(Callback):
    """Sets the epoch of the training loader's sampler at the start of each epoch."""

    def on_epoch_begin(self, epoch):
        sampler = self.trainer.train_data.sampler
        if hasattr(sampler, "set_epoch"):
            sampler.set_epoch(epoch)
