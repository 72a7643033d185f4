model = dict(type="TextDetector", channels=64)
