from models import losses as loss_hub


def init_criterion(conf_criterion, device):
    return getattr(loss_hub, conf_criterion["name"])(conf_criterion).to(device)
