num_classes = 80
max_iter = 90000
