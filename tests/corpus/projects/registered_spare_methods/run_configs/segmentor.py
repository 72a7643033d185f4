model = dict(
    type="Segmentor",
    backbone=dict(type="ResNet", depth=50),
    loss=dict(type="Focal", gamma=2.0),
)
