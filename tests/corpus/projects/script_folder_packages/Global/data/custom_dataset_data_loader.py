import torch.utils.data


class CustomDatasetDataLoader:
    def initialize(self, opt):
        self.dataset = make_dataset(opt)
        self.dataloader = torch.utils.data.DataLoader(  # expect: GPU201
            self.dataset, batch_size=opt.batchSize, shuffle=True, num_workers=int(opt.nThreads), drop_last=True)

    def load_data(self):
        return self.dataloader
