import torch
from torch.utils.data import TensorDataset


def get_tensor_data(output_mode, features):
    if output_mode == "classification":
        all_label_ids = torch.tensor([f.label_id for f in features], dtype=torch.long)
    else:
        all_label_ids = torch.tensor([f.label_id for f in features], dtype=torch.float)
    all_input_ids = torch.tensor([f.input_ids for f in features], dtype=torch.long)
    all_input_mask = torch.tensor([f.input_mask for f in features], dtype=torch.long)
    return TensorDataset(all_input_ids, all_input_mask, all_label_ids), all_label_ids


def get_image_data(images, labels):
    return TensorDataset(torch.stack(images), torch.tensor(labels)), labels
