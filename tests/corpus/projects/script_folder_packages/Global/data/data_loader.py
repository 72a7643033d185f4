def CreateDataLoader(opt):
    # Imported here, as the pix2pixHD family does: `data` is found beside the scripts.
    from data.custom_dataset_data_loader import CustomDatasetDataLoader

    data_loader = CustomDatasetDataLoader()
    data_loader.initialize(opt)
    return data_loader
