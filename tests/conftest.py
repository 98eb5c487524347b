# progress: a line with an ETA at every tenth of a run; schedule: the files of the longest tests run first.
pytest_plugins = ["pytester", "tests.support.progress", "tests.support.schedule"]
