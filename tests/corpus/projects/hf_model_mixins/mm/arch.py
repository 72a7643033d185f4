"""A mixin every model of the project shares: it splices image features into the token
embeddings on each forward. Not a module itself; the models that mix it in are."""
from abc import ABC

import torch

IMAGE_TOKEN = -200


class MetaForCausalLM(ABC):
    def prepare_inputs(self, input_ids, image_features):
        rows = []
        for ids, features in zip(input_ids, image_features):
            spots = torch.where(ids == IMAGE_TOKEN)[0].tolist()  # expect: GPU103, GPU104
            rows.append(features if spots else self.embed_tokens(ids))
        return torch.stack(rows)
