"""A detector of the project, built by the OpenMMLab registry from the config."""
import torch
from mmdet.models import DETECTORS
from mmdet3d.models.detectors.mvx_two_stage import MVXTwoStageDetector


@DETECTORS.register_module()
class PlanDetector(MVXTwoStageDetector):
    def forward(self, return_loss=True, **kwargs):
        if return_loss:
            return self.forward_train(**kwargs)
        else:
            return self.forward_test(**kwargs)

    def forward_train(self, img=None, gt_labels=None):
        feats = self.extract_feat(img)
        losses = self.pts_bbox_head(feats, gt_labels)
        count = torch.clamp(gt_labels.sum(), min=1).item()  # expect: GPU101
        return {k: v / count for k, v in losses.items()}

    def forward_test(self, img=None):
        feats = self.extract_feat(img)
        boxes = self.pts_bbox_head(feats, None)
        return [{"trajs": boxes[0].cpu()}]
