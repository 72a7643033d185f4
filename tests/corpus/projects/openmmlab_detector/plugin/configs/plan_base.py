model = dict(type="PlanDetector", pts_bbox_head=dict(type="DETRHead", num_classes=10))
data = dict(samples_per_gpu=1, workers_per_gpu=4)
