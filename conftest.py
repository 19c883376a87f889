"""With CIRULLA_REQUIRE_ALL=1 (.ci/run sets it) every skip is a failure: a
test skips only for a tool the README lists as optional ("Optional tools for
the full suite"), and CI, which installs them all, must run every test."""
from __future__ import annotations

import math
import os
import signal

import pytest

REQUIRE_ALL = os.environ.get("CIRULLA_REQUIRE_ALL") == "1"

# The tests read the player's texts in English unless they ask for a language
# (--lang, or LANG set for the one test): a developer's Italian locale must
# not turn every other test's expected English into Italian (solver/i18n.py
# reads LC_ALL, LC_MESSAGES, then LANG).
for _name in ("LC_ALL", "LC_MESSAGES", "LANGUAGE"):
    os.environ.pop(_name, None)
os.environ["LANG"] = "C.UTF-8"

# A suite started in the background (`nohup ... &`, a job runner) inherits SIGINT
# ignored, and so would every command the tests start, which then could not be
# stopped by the Ctrl-C the tests send them: they get Python's own handler back,
# as a terminal would give them (a handled signal is reset to the default on exec).
if signal.getsignal(signal.SIGINT) == signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)


def _fail_the_skip(report: pytest.TestReport | pytest.CollectReport) -> None:
    if REQUIRE_ALL and report.skipped and not hasattr(report, "wasxfail"):
        reason = report.longrepr[2].removeprefix("Skipped: ") if isinstance(report.longrepr, tuple) else ""
        report.outcome = "failed"
        report.longrepr = f"CIRULLA_REQUIRE_ALL=1 and this would have skipped: {reason}"


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]):
    report = yield
    _fail_the_skip(report)
    return report


@pytest.hookimpl(wrapper=True)
def pytest_make_collect_report(collector: pytest.Collector):
    report = yield
    _fail_the_skip(report)
    return report


@pytest.fixture
def exact_against_any_opponent(monkeypatch: pytest.MonkeyPatch) -> None:
    """The last two rounds solved by minimax whoever the opponent is read as.
    The exact solver's tests take their positions from greedy self-play, where
    the opponent reads as the greedy program, whose last rounds the default
    solves as the best response to it instead (search.EXACT_PROGRAM)."""
    from cirulla.solver import search
    monkeypatch.setattr(search, "EXACT_PROGRAM", math.inf)
