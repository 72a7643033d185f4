"""Networks and the functions that build them for training and for evaluation."""
