import torch


class RLBase:
    def __init__(self, log_interval, logger):
        self.logger = logger
        self.log_interval = log_interval
        self.frame_train = 0
        self._last_log_frame = 0
        self._do_log = False

    def _check_log(self):
        if self.logger is not None and self.log_interval is not None and \
                self.frame_train >= self._last_log_frame + self.log_interval:
            self._last_log_frame += self.log_interval
            self._do_log = True
        else:
            self._do_log = False
