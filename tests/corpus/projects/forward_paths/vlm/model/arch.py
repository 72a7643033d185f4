"""Methods the captioning model mixes in: splice image features into the token sequence."""
from abc import ABC, abstractmethod

import torch

IMAGE_TOKEN = -200


class ImageSpliceMixin(ABC):
    @abstractmethod
    def encoder(self):
        pass

    def splice_images(self, input_ids, attention_mask, labels, images):
        features = self.encoder()(images)
        input_ids = input_ids[attention_mask.bool()]
        is_image = torch.eq(input_ids, IMAGE_TOKEN)
        n_images = is_image.sum()
        if n_images == 0:  # expect: GPU104
            return self.embed(input_ids), labels
        positions = torch.where(is_image)[0].tolist()  # expect: GPU103 GPU104
        pieces = []
        start = 0
        for k, pos in enumerate(positions):
            pieces.append(self.embed(input_ids[start:pos]))
            pieces.append(features[k])
            start = pos + 1
        pieces.append(self.embed(input_ids[start:]))
        embeds = torch.cat(pieces)
        if not self.training:
            print(f"spliced {n_images} images into {embeds.shape[0]} positions")
            return embeds, labels
        return embeds[torch.isfinite(embeds[:, 0])], labels  # expect: GPU104

    def splice_for_sampling(self, input_ids, images):
        is_image = torch.eq(input_ids, IMAGE_TOKEN)
        return self.embed(input_ids), torch.nonzero(is_image).tolist()
