"""Takes a collated batch apart on the host: each view's crop record becomes one tensor."""
import torch


def split_views(collated):
    images, crops, sizes = [], [], []
    for view in collated:
        image, crop, size = view.image, view.crop, view.size
        images.append(image)
        crop = torch.cat(crop).reshape(len(crop), image.size(0))
        crops.append(torch.transpose(crop, 1, 0))
        sizes.append(size)
    return images, crops, sizes


def split_views_on_gpu(collated):
    crops = []
    for view in collated:
        crops.append(torch.cat(view.crop).cuda())
    return crops
