class PostProcess(object):
    """The look-alike: built the same way, but run once on a demo image after training."""

    def __init__(self, conf_thresh):
        self.conf_thresh = conf_thresh

    def __call__(self, scores):
        keep = scores > self.conf_thresh
        return scores[keep].cpu().numpy()


def build_postprocess(cfg):
    post = PostProcess(cfg["conf_thresh"])
    return post
