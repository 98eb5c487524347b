"""pytest plugin: a progress line with the elapsed time and an ETA at every tenth of a long run.

`-q` under xdist prints only dots, so a long run looked stuck; this prints at most ten lines per session
(short enough for CI logs), e.g. `progress: 40% (2252/5630 tests) 1m32s elapsed, ETA 2m18s`. The ETA
extrapolates the rate so far to the tests left. It runs in the process that reports (xdist's controller,
or the only process), is silent in xdist workers, and off with `-p no:tests.support.progress`.
"""

import time

import pytest

STEPS = 10  # one line per tenth of the run


def _clock(seconds: float) -> str:
    """`95.2` -> `1m35s`."""
    minutes, secs = divmod(int(round(seconds)), 60)
    return f"{minutes}m{secs:02d}s" if minutes else f"{secs}s"


class Progress:
    """Counts finished tests against the collected total and prints a line when a new tenth is crossed."""

    def __init__(self, config: pytest.Config):
        self.config = config
        self.total = 0
        self.done = 0
        self.step = 0
        self.start = time.monotonic()

    def _write(self, text: str) -> None:
        """One line on the terminal reporter (after the dots of the line being filled)."""
        reporter = self.config.pluginmanager.get_plugin("terminalreporter")
        if reporter is None:
            return
        if getattr(reporter._tw, "width_of_current_line", 0):  # -q's dots of the line being filled
            reporter.write("\n")
        reporter.write_line(text)

    @pytest.hookimpl(trylast=True)
    def pytest_collection_finish(self, session: pytest.Session) -> None:
        """Without xdist: the total is what this process collected (after deselection)."""
        self.total = len(session.items)
        self.start = time.monotonic()

    @pytest.hookimpl(optionalhook=True)
    def pytest_xdist_node_collection_finished(self, node, ids) -> None:
        """Under xdist: every worker collects the same ids; the total is their number."""
        self.total = len(ids)

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        """Count a test when its teardown is reported, and print the tenth it completes, if any."""
        if report.when != "teardown" or not self.total:
            return
        self.done += 1
        step = self.done * STEPS // self.total
        if step <= self.step or self.done == self.total:
            return  # the last tenth is the summary line pytest prints anyway
        self.step = step
        elapsed = time.monotonic() - self.start
        eta = elapsed * (self.total - self.done) / self.done
        self._write(f"progress: {step * 100 // STEPS}% ({self.done}/{self.total} tests) "
                    f"{_clock(elapsed)} elapsed, ETA {_clock(eta)}")


def pytest_configure(config: pytest.Config) -> None:
    """Register the counter in the reporting process only (xdist workers have `workerinput`)."""
    if not hasattr(config, "workerinput") and not config.getoption("collectonly"):
        config.pluginmanager.register(Progress(config), "progress-eta")
