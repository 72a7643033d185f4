import torch.utils.data as data


def get_loaders(train_set, test_set, batch_size):
    train_loader = data.DataLoader(train_set, batch_size=batch_size, shuffle=True)  # expect: GPU201 GPU202
    test_loader = data.DataLoader(test_set, batch_size=batch_size, pin_memory=True, num_workers=4, persistent_workers=True)
    return train_loader, test_loader
