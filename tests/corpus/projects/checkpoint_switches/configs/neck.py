# Settings of the fine-tuning runs, read by the launcher as a Python config module.
model = dict(neck=dict(type="Neck", channels=64, neck_cp=False))
