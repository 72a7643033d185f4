import torch

from features import FeatureNet, ProbeNet


def statistics(batches):
    extractor = FeatureNet().cuda()
    probe = ProbeNet(requires_grad=True).cuda()
    return [(extractor(b.cuda())[0], probe(b.cuda())) for b in batches]
