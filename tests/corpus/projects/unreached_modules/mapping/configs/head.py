plugin_dir = "mapping/src/"
head = dict(type="PolylineHead")
