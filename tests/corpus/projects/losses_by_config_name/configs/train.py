conf = dict(
    criterion=dict(name="FocalLoss", gamma=2.0),
    epochs=100,
)
