"""Fuzzing the service, bounded for CI (about 45 s in all).

- Malformed requests to every RPC of a real `cirulla-server` child process on
  a free loopback port (tests/fuzz/malformed.py builds and judges them): each
  answer a status the RPC documents, every INVALID_ARGUMENT naming its
  fields, never INTERNAL or UNKNOWN, none costing the server more than
  malformed.SLOW_SECONDS of CPU or left unanswered within the call's deadline
  (malformed.DEADLINE_SECONDS: a hang costs the run that, and ends it); then
  the server still answers a good request, its log shows no failure, and it
  stops on SIGTERM within its grace (the log says "stopped", exit 0). The seed
  is fixed (CIRULLA_FUZZ_SEED picks another, CIRULLA_FUZZ_REQUESTS another
  count); a failure prints the seed, the case and the request, and `python
  bench/soak.py --seed S --case I` sends that request again. The slowest
  request and the costliest in CPU are printed (-s) and recorded as the
  test's property `costs` (--junitxml).
- The coverage-guided fuzzers of the view and record decoders
  (tests/fuzz/fuzz_view.py, fuzz_record.py: atheris) for FUZZ_SECONDS each, at
  the same time, over the committed corpus (tests/fuzz/corpus/), their finds
  written to a temporary folder: a crash, or an input that takes longer than
  FUZZ_TIMEOUT_SECONDS or takes the process past FUZZ_RSS_LIMIT_MB, fails the
  test with libFuzzer's report (with the Python traceback). atheris is in the
  `test` extra on Linux x86-64 (where it has wheels); without it these tests
  skip (in CI a skip is a failure: conftest.py).
- The defects fuzzing found, one regression test each.

bench/soak.py runs the same requests by the hundred thousand.
"""
from __future__ import annotations

import importlib.util
import os
import random
import re
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pytest
from fuzz import malformed
from grpc_health.v1 import health_pb2
from test_server_process import Process

from cirulla.server.errors import BadRequest
from cirulla.solver import record
from cirulla.solver.errors import RecordError
from cirulla.v1 import engine_service_pb2 as epb
from cirulla.v1 import game_pb2 as pb
from server_support import choice_position, view_msg

SEED = int(os.environ.get("CIRULLA_FUZZ_SEED", "20261130"))
REQUESTS = int(os.environ.get("CIRULLA_FUZZ_REQUESTS", "4000"))
FUZZ_SECONDS = 20
# libFuzzer's limits, past which an input is a finding: the targets decode a view or a record through the
# server's own code, at most 42 ms an input of the corpus, and a run of both peaks at 112 MB
FUZZ_TIMEOUT_SECONDS = 5
FUZZ_RSS_LIMIT_MB = 1024
FUZZ = Path(__file__).resolve().parent / "fuzz"


@pytest.fixture(scope="module")
def server():
    p = Process(*malformed.SERVER_FLAGS)
    try:
        yield p
    finally:
        p.stop()


# --- malformed requests against a real server -------------------------------------------

def test_malformed_requests_to_every_rpc(server, record_property):
    generator = malformed.Generator(SEED)
    tally = malformed.Tally(malformed.ServerCosts(server.proc.pid))
    malformed.run(server.channel, generator, range(REQUESTS), tally)
    costs = tally.costs()
    record_property("costs", costs)
    print(f"\nseed {SEED}, {tally.requests} requests; {costs}")           # shown with -s
    counts = "\n".join(f"  {rpc} {code}: {n}" for (rpc, code), n in sorted(tally.counts.items()))
    if tally.defects:
        shown = "\n\n".join(tally.report(d) for d in tally.defects[:5])
        pytest.fail(f"seed {SEED}: {len(tally.defects)} of {tally.requests} answers out of contract "
                    f"(`python bench/soak.py --seed {SEED} --case I` sends case I again):\n\n{shown}\n\n"
                    f"{tally.stopped}\n{costs}\n{counts}")
    assert tally.requests == REQUESTS
    assert tally.costliest is not None and tally.costliest.cpu_seconds > 0, costs      # the CPU was read
    answered = {rpc for rpc, _ in tally.counts}
    assert answered == set(malformed.RPC), f"RPCs without a case: {set(malformed.RPC) - answered}"
    # the bad input reached the checks, and enough good input the searches
    for rpc in ("EngineService/GetHint", "EngineService/StreamHint", "EngineService/ChooseMove",
                "RulesService/ListLegalMoves", "RulesService/ReplayRecord", "AnalysisService/AnalyzeGame"):
        assert tally.counts[rpc, "INVALID_ARGUMENT"] and tally.counts[rpc, "OK"], counts


def test_the_server_still_serves_then_stops_on_sigterm(server):
    view = view_msg(choice_position())
    answer = server.engine.GetHint(epb.GetHintRequest(view=view, budget=epb.Budget(iterations=200)), timeout=10)
    assert answer.hint.moves and answer.hint.best.text
    assert server.status() == health_pb2.HealthCheckResponse.SERVING
    assert malformed.log_defects(server.lines) == []
    status, seconds = malformed.sigterm(server.proc)
    log = "".join(server.lines)
    assert status == 0, f"exit {status} {seconds:.1f} s after SIGTERM:\n{log[-3000:]}"
    assert re.search(r"INFO cirulla.server: stopped\n", log), log[-3000:]
    assert malformed.log_defects(server.lines) == []


def _case(rpc: str) -> malformed.Case:
    return malformed.Case(SEED, 0, malformed.RPC[rpc], malformed.RPC[rpc].method, "valid", [b""])


def test_a_slow_answer_or_none_is_a_defect():
    hint, analysis = _case("EngineService/GetHint"), _case("AnalysisService/AnalyzeGame")
    assert malformed.judge(hint, malformed.Outcome("OK", seconds=0.05, cpu_seconds=0.04)) == []
    slow = malformed.Outcome("OK", seconds=2.6, cpu_seconds=malformed.SLOW_SECONDS + 0.5)
    assert [p for p in malformed.judge(hint, slow) if p.startswith("slow: 2.50 s of the server's CPU")]
    assert malformed.judge(analysis, slow) == []                    # an analysis may take longer
    unknown_cpu = malformed.Outcome("OK", seconds=malformed.SLOW_SECONDS + 0.5)     # a server not ours
    assert [p for p in malformed.judge(hint, unknown_cpu) if p.startswith("slow:")]
    deadline = malformed.DEADLINE_SECONDS
    hang = malformed.Outcome("DEADLINE_EXCEEDED", "Deadline Exceeded", seconds=deadline + 0.01, cpu_seconds=deadline,
                             deadline=deadline)
    assert malformed.judge(hint, hang) == [f"no answer within {deadline:g} s (the call's deadline)"]
    assert malformed.SLOW_SECONDS + malformed.ANALYSIS_SECONDS < deadline   # a slow answer is measured, not cut


class _HungryServer(malformed.ServerCosts):
    def peak_rss_mib(self) -> float:
        return malformed.SERVER_RSS_BOUND_MIB + 1.0


def test_the_request_that_takes_the_server_past_its_memory_bound_is_a_defect():
    tally = malformed.Tally(_HungryServer())
    fast = malformed.Outcome("OK", seconds=0.01, cpu_seconds=0.01)
    first = tally.add(_case("RulesService/ReplayRecord"), fast)
    assert first == [f"memory: the server's peak RSS reached {malformed.SERVER_RSS_BOUND_MIB + 1} MiB "
                     f"(bound {malformed.SERVER_RSS_BOUND_MIB} MiB)"]
    assert tally.add(_case("RulesService/ReplayRecord"), fast) == []         # that one only
    assert len(tally.defects) == 1


def test_the_server_costs_are_read_from_proc():
    costs = malformed.ServerCosts(os.getpid())
    before, end = costs.cpu_seconds(), time.process_time() + 0.3
    while time.process_time() < end:
        pass
    assert 0.25 <= costs.cpu_seconds() - before < 1.0
    assert 10 < costs.peak_rss_mib() < 100_000
    assert malformed.ServerCosts().cpu_seconds() is None and malformed.ServerCosts().busy()


def _hint_with_deals() -> epb.GetHintRequest:
    """A valid GetHint whose view's history holds the most deals."""
    generator = malformed.Generator(SEED)
    views = [pb.SeatView.FromString(v) for v in generator.views]
    view = max(views, key=lambda v: sum(e.WhichOneof("kind") == "deal" for e in v.history))
    return epb.GetHintRequest(view=view, budget=epb.Budget(iterations=20), seed=3)


def _deal_rounds(data: bytes) -> set[int]:
    """The rounds of the deals in the view's history that hold cards (deals of the real history)."""
    view = epb.GetHintRequest.FromString(data).view
    return {e.deal.round for e in view.history if e.WhichOneof("kind") == "deal" and e.deal.hands}


TRIES = 1500


def test_every_integer_field_gets_the_extremes_of_its_type():
    """Each integer field set in a request, however deep, is as likely to be set
    to an extreme of its type (a deal's round at 2^30 hung the server)."""
    valid = _hint_with_deals()
    present = {re.sub(r"\[\d+\]", "", where) for _, _, where in malformed._int_fields(random.Random(0), valid)}
    hits: Counter[str] = Counter()
    values: set[int] = set()
    rounds: set[int] = set()
    for i in range(TRIES):
        request = epb.GetHintRequest()
        request.CopyFrom(valid)
        done = malformed.set_extreme(random.Random(i), request)
        where, _, value = done.partition(" = ")
        hits[re.sub(r"\[\d+\]", "", where)] += 1
        values.add(int(value))
        rounds |= _deal_rounds(request.SerializeToString())
    assert set(hits) == present, present - set(hits)
    assert min(hits.values()) > TRIES / len(present) / 2, hits            # a fair share each
    assert values == set(malformed.EXTREMES)          # seed: uint64; budget.iterations: int64; the rest: int32
    assert {2**30, 2**31 - 1, -2**31} <= rounds


def test_every_integer_field_gets_the_extremes_of_its_type_on_the_wire():
    valid = _hint_with_deals().SerializeToString()
    paths = {name for _, name, _ in malformed._int_paths(epb.GetHintRequest.DESCRIPTOR)}
    assert {"view.round", "view.history.deal.round", "budget.iterations", "seed"} <= paths
    named: set[str] = set()
    rounds: set[int] = set()
    for i in range(TRIES):
        data, done = malformed.wire_extreme(random.Random(i), valid, epb.GetHintRequest)
        named.add(done.partition(" = ")[0])
        rounds |= _deal_rounds(data)
    assert named == paths, paths - named
    assert {2**30, 2**31 - 1, -2**31} <= rounds                 # merged into the deals already there


# --- the coverage-guided fuzzers ------------------------------------------------------------

@pytest.fixture(scope="module")
def fuzzer_runs(tmp_path_factory):
    """Both fuzzers, run at once for FUZZ_SECONDS over the committed corpus;
    name -> (exit status, libFuzzer's output)."""
    if importlib.util.find_spec("atheris") is None:
        pytest.skip("atheris is not installed (pip install -e '.[test]', on Linux x86-64)")
    procs = {}
    for name in ("view", "record"):
        work = tmp_path_factory.mktemp(f"fuzz-{name}")
        (work / "new").mkdir()
        procs[name] = subprocess.Popen(
            [sys.executable, str(FUZZ / f"fuzz_{name}.py"), str(work / "new"), str(FUZZ / "corpus" / name),
             f"-max_total_time={FUZZ_SECONDS}", "-seed=1", f"-timeout={FUZZ_TIMEOUT_SECONDS}",
             f"-rss_limit_mb={FUZZ_RSS_LIMIT_MB}",
             "-print_final_stats=1", f"-artifact_prefix={work}/"],
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, cwd=work)
    runs = {}
    for name, proc in procs.items():
        try:
            output, _ = proc.communicate(timeout=FUZZ_SECONDS + 60)
        except subprocess.TimeoutExpired:
            proc.kill()
            output, _ = proc.communicate()
            output += "\n(killed: it ran far past -max_total_time)"
        runs[name] = (proc.returncode, output)
    return runs


@pytest.mark.parametrize("name", ["view", "record"])
def test_the_coverage_guided_fuzzer_finds_nothing(fuzzer_runs, name):
    status, output = fuzzer_runs[name]
    lines = [line for line in output.splitlines() if not line.startswith("INFO: Instrumenting")]
    tail = "\n".join(lines[-80:])
    found = re.search(r"ERROR: libFuzzer: (.*)", output)       # a timeout, out-of-memory, a deadly signal
    what = found.group(1) if found else "a crash"
    assert status == 0, f"fuzz_{name}.py found an input: {what} (exit {status}); libFuzzer's report:\n{tail}"
    runs = re.search(r"Done (\d+) runs", output)
    assert runs and int(runs.group(1)) > 100, tail
    corpus = len(list((FUZZ / "corpus" / name).iterdir()))
    assert re.search(rf"INFO: +{corpus} files found", output), tail         # it read the whole corpus


# --- regressions: what the fuzzing found ------------------------------------------------------

@pytest.mark.parametrize("text", ["[" * 100_000, '{"events": ' + "[" * 100_000, '{"a": ' * 50_000 + "1"])
def test_json_nested_too_deeply_is_bad_input_not_a_crash(text):
    """json.loads raises RecursionError past about a thousand levels: a saved
    game (record.loads) got a traceback, and `cirulla engine` died on such a
    line instead of answering it and reading the next."""
    from cirulla.cli import engine

    with pytest.raises(RecordError, match="nested too deeply"):
        record.loads(text)
    with pytest.raises(BadRequest) as refused:
        engine._parse(text)
    assert "nested too deeply" in refused.value.violations[0][1]
    assert engine._id_in(text) == ""
