import algorithms


def main(args, loader):
    model = {"erm": algorithms.ERM, "dro": algorithms.GroupDRO}[args.method](args)
    for epoch in range(args.epochs):
        for x, y in loader:
            model.update(x, y)
    print(model.summary())
