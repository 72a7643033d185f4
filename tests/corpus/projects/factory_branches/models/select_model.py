def define_Model(opt):
    model = opt["model"]
    if model == "plain":
        from models.model_plain import ModelPlain as M
    elif model == "gan":
        from models.model_gan import ModelGAN as M
    else:
        raise NotImplementedError(model)
    m = M(opt)
    return m
