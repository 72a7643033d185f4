"""The options of every training script: a class that adds them to the parser it is handed."""


class TrainOptions:
    def __init__(self):
        self.initialized = False

    def init(self, parser):
        parser.add_argument("--batch_size", type=int, default=32)
        parser.add_argument("--train_workers", type=int, default=4, help="workers of the training loader")
        parser.add_argument("--eval_workers", type=int, default=2)
        parser.add_argument("--epochs", type=int, default=250)
        self.initialized = True
        return parser


class TestOptions:
    def init(self, parser):
        parser.add_argument("--workers", type=int, default=4)
        parser.add_argument("--checkpoint", required=True)
        return parser
