"""What CI leans on: the CPU hog it runs the suite beside (tests/cpu_hog.py)
stops by itself, and with CIRULLA_REQUIRE_ALL=1 a skip is a failure
(conftest.py)."""
from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from server_support import until

ROOT = Path(__file__).resolve().parents[1]
HOG = ROOT / "tests" / "cpu_hog.py"


def children(pid: int) -> list[int]:
    with open(f"/proc/{pid}/task/{pid}/children") as f:
        return [int(c) for c in f.read().split()]


def cpu_seconds(pid: int) -> float:
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rpartition(")")[2].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def gone(pid: int) -> bool:
    """Exited: no such process, or a zombie nobody has reaped yet."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rpartition(")")[2].split()[0] == "Z"
    except FileNotFoundError:
        return True


def test_the_hog_spins_and_stops_after_its_time():
    hog = subprocess.Popen([sys.executable, str(HOG), "--procs", "1", "--seconds", "1"],
                           stderr=subprocess.PIPE, text=True)
    _, err = hog.communicate(timeout=60)
    assert hog.returncode == 0
    assert "1 spinning processes" in err and "stopping, load average" in err


def test_the_hog_stops_when_its_parent_dies():
    """Started in the background by a shell that is then killed, the hog and its
    spinner (which burns CPU meanwhile) end by themselves."""
    shell = subprocess.Popen(["sh", "-c", f"{sys.executable} {HOG} --procs 1 --seconds 600 & echo $!; exec sleep 600"],
                             stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    try:
        hog = int(shell.stdout.readline())
        until(lambda: len(children(hog)) == 1, seconds=60)
        [spinner] = children(hog)
        until(lambda: cpu_seconds(spinner) > 0.05, seconds=60)
    finally:
        shell.kill()
        shell.wait()
    until(lambda: gone(hog) and gone(spinner), seconds=60)


def test_the_hog_is_gone_after_a_sigterm():
    """Once it has said it spins (a SIGTERM before that kills it outright, and
    its spinners see their parent gone, as above), it stops them and exits 0."""
    hog = subprocess.Popen([sys.executable, str(HOG), "--procs", "1", "--seconds", "600"],
                           stderr=subprocess.PIPE, text=True)
    assert "1 spinning processes" in hog.stderr.readline()
    [spinner] = children(hog.pid)
    hog.send_signal(signal.SIGTERM)
    assert hog.wait(60) == 0
    until(lambda: gone(spinner), seconds=60)


def test_the_hog_refuses_bad_arguments():
    done = subprocess.run([sys.executable, str(HOG), "--procs", "0"], capture_output=True, text=True, timeout=60)
    assert done.returncode == 2 and "--procs" in done.stderr


SKIPPING = '''
import pytest

def test_skips():
    pytest.skip("no such tool (apt-get install it)")

@pytest.mark.xfail(reason="known")
def test_xfails():
    assert False
'''


@pytest.mark.parametrize("require_all", ["", "1"])
def test_every_skip_is_a_failure_where_ci_requires_it(tmp_path, require_all):
    (tmp_path / "test_skipping.py").write_text(SKIPPING)
    env = {**os.environ, "CIRULLA_REQUIRE_ALL": require_all, "PYTHONPATH": str(ROOT)}
    done = subprocess.run([sys.executable, "-m", "pytest", "-p", "conftest", "-q", "-rA", "-p", "no:cacheprovider",
                           "test_skipping.py"], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)
    summary = done.stdout.strip().splitlines()[-1]
    if require_all:
        assert done.returncode == 1 and "1 failed, 1 xfailed" in summary, done.stdout
        assert "this would have skipped: no such tool (apt-get install it)" in done.stdout
    else:
        assert done.returncode == 0 and "1 skipped, 1 xfailed" in summary, done.stdout
