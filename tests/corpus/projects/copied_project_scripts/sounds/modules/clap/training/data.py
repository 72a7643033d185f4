"""Audio features of the copied CLAP project, which the project's encoder imports."""

import torch


def get_audio_features(waveform, max_len):
    return torch.nn.functional.pad(waveform, (0, max(0, max_len - waveform.shape[-1])))
