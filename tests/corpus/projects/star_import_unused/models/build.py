import importlib


def build_model(args):
    # Either arm names a module of the `models` package, nothing else.
    if args.model_type == "mlp":
        module_name = "models." + args.model_type
        module = importlib.import_module(module_name)
    else:
        module_name = "models." + "conv"
        module = importlib.import_module(module_name)
    return module.Net(args)
