"""`tftk train` that SIGKILLs itself at the N-th call of os.replace or os.fsync: a death inside a checkpoint,
state-file or metrics write (the temp file written but not renamed, or not yet flushed).

Usage: python faulty_train.py replace|fsync N <tftk train arguments...>
"""

import os
import signal
import sys


def _dying(name: str, at: int):
    real = getattr(os, name)
    calls = [0]

    def call(*args, **kwargs):
        calls[0] += 1
        if calls[0] == at:
            os.kill(os.getpid(), signal.SIGKILL)
        return real(*args, **kwargs)

    setattr(os, name, call)


if __name__ == "__main__":
    _dying(sys.argv[1], int(sys.argv[2]))
    from tftk.cli import main

    sys.argv = ["tftk", "train", *sys.argv[3:]]
    main()
