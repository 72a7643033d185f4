from pkg.nets import build_net
