from model.prefix import BertPrefixForClassification


def get_model(model_args, config):
    return BertPrefixForClassification.from_pretrained(model_args.model_name_or_path, config=config)
