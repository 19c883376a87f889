"""The server's settings: command-line flags over CIRULLA_* environment
variables over safe defaults (loopback only, no search without limits)."""
from __future__ import annotations

import argparse
import dataclasses
import difflib
import math
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from cirulla.solver.rules import PRESETS
from cirulla.solver.search import DEFAULT_BUDGET

from .stopping import ABANDONED, OVERRUN_SECONDS

LOG_FORMATS = ("text", "json")
LOG_LEVELS = ("DEBUG", "INFO", "WARNING", "ERROR")


class ConfigError(ValueError):
    """A setting refused: `fields` names it, or the settings that conflict
    (ServerConfig's names; the command lines name the flag or environment
    variable a value came from instead: `source`)."""

    def __init__(self, message: str, *fields: str) -> None:
        super().__init__(f"{fields[0]}: {message}")
        self.fields = fields
        self.message = message

    def source(self, given: Mapping[str, str]) -> str:
        """`given` maps the fields set to where from ("--max-budget-ms 0"):
        the first of this error's fields given, else its first field's flag."""
        return next((given[f] for f in self.fields if f in given), flag_name(self.fields[0]))


CGROUP_CPU_MAX = Path("/sys/fs/cgroup/cpu.max")


def available_cores(cpu_max: Path = CGROUP_CPU_MAX) -> int:
    """The CPUs this process may keep busy: those it may run on, fewer if its
    cgroup (a container's CPU limit, cgroup v2) allows less time, rounded down
    (at least 1): a search thread per CPU the node has would be throttled."""
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
    try:
        quota, period = cpu_max.read_text().split()
        if quota != "max":
            cores = min(cores, int(quota) // int(period))
    except (OSError, ValueError):
        pass                                # no cgroup v2 limit to read: the CPUs it may run on
    return max(cores, 1)


@dataclass(frozen=True)
class ServerConfig:
    listen: str = "127.0.0.1:50051"
    # Bearer token every call must carry (health checks aside); None: no auth.
    token: str | None = None
    # TLS from PEM files; with a client CA, clients must present a certificate.
    tls_cert: str | None = None
    tls_key: str | None = None
    tls_client_ca: str | None = None
    # Limits: searches at once (each search thread counts), and what one request may ask.
    max_concurrent_searches: int = available_cores()
    max_budget_ms: int = 10_000
    max_iterations: int = 5_000_000
    # half the cores by default: one call leaves room for others
    max_threads: int = max(available_cores() // 2, 1)
    # the time cap of the default budget (search.DEFAULT_BUDGET), which stops
    # far sooner once its answer is settled
    default_budget_ms: int = int(DEFAULT_BUDGET.time_ms or 0)
    # A call that finds every search slot taken waits this long for one (fairly
    # between peers), with at most max_waiting_searches calls waiting and only
    # if the line should clear in time; else RESOURCE_EXHAUSTED with a RetryInfo.
    # At the default budget (about 15 ms a hint) the line of 16 clients on 2 slots
    # clears in about 120 ms: with 8 waiting at most, the others were refused again
    # and again, and the refusals took a third of a saturated server's CPU.
    slot_wait_ms: int = 200
    max_waiting_searches: int = 32
    # AnalyzeGame: the longest analysis a request may ask for (estimated from its
    # iterations and the record's decisions; one running twice as long is stopped)
    max_analysis_seconds: int = 300
    max_message_bytes: int = 1 << 20
    # Time kept back from a call's deadline to encode and send the answer.
    deadline_margin_ms: int = 25
    # Seconds that calls in flight get to finish after SIGTERM.
    grace_seconds: float = 10.0
    # After SIGTERM, with clients watching health (client-side health checking), the
    # server goes on serving this long, NOT_SERVING, so that they move their calls away
    # before it stops taking any (part of the grace).
    lame_duck_ms: int = 1000
    # Presets whose match-equity tables are built before serving (comma-separated,
    # "all" or ""): the first hint of a preset otherwise spends ~0.5 s on it.
    warm_presets: str = "classic"
    # Long-lived streams anyone may open (Health.Watch needs no token), at most
    # this many at once; past it RESOURCE_EXHAUSTED. Watch holds no thread while
    # open; each reflection stream holds one (worker_threads makes room for them).
    max_watch_streams: int = 100
    max_reflection_streams: int = 4
    # Handler threads; 0: enough for the searches, the reflection streams and cheap calls.
    workers: int = 0
    # Connection age (0: unlimited): past it a client connection gets a GOAWAY, so that
    # clients balancing round_robin resolve the replicas again; then calls in flight get
    # the grace (0: as long as they need) before the connection is closed.
    max_connection_age_ms: int = 0
    max_connection_age_grace_ms: int = 0
    # Prometheus metrics over HTTP on HOST:PORT (see metrics.py); None: not served.
    metrics_listen: str | None = None
    log_level: str = "INFO"
    # "text" for a terminal, "json" (one object a line) for a log collector
    log_format: str = "text"

    def __post_init__(self) -> None:
        for name, address in (("listen", self.listen), ("metrics_listen", self.metrics_listen)):
            problem = None if address is None else host_port_problem(address)
            if problem:
                raise ConfigError(f"{problem}, got {address!r}", name)
        if self.log_level.upper() not in LOG_LEVELS:
            raise ConfigError(f"must be {', '.join(LOG_LEVELS[:-1])} or {LOG_LEVELS[-1]}, got {self.log_level!r}",
                              "log_level")
        if self.log_format not in LOG_FORMATS:
            raise ConfigError(f"must be {' or '.join(LOG_FORMATS)}, got {self.log_format!r}", "log_format")
        if (self.tls_cert is None) != (self.tls_key is None):
            raise ConfigError("TLS needs both a certificate and its key", "tls_cert", "tls_key")
        if self.tls_client_ca and not self.tls_cert:
            raise ConfigError("mutual TLS (a client CA) needs the server's own certificate and key",
                              "tls_client_ca")
        for name in ("max_concurrent_searches", "max_budget_ms", "max_iterations", "max_threads",
                     "max_analysis_seconds", "default_budget_ms", "max_message_bytes", "max_watch_streams",
                     "max_reflection_streams"):
            if getattr(self, name) < 1:
                raise ConfigError(f"must be at least 1, got {getattr(self, name)}", name)
        if self.default_budget_ms > self.max_budget_ms:
            raise ConfigError(f"the default budget ({self.default_budget_ms} ms) is larger than the largest "
                              f"({self.max_budget_ms} ms)", "default_budget_ms", "max_budget_ms")
        unknown = set(self.presets_to_warm) - set(PRESETS)
        if unknown:
            raise ConfigError(f"unknown preset(s) {', '.join(sorted(unknown))}", "warm_presets")
        for name in ("grace_seconds", "deadline_margin_ms", "workers", "slot_wait_ms", "max_waiting_searches",
                     "max_connection_age_ms", "max_connection_age_grace_ms", "lame_duck_ms"):
            if not 0 <= getattr(self, name) < math.inf:         # (NaN fails it too)
                raise ConfigError(f"must be a finite number, not negative, got {getattr(self, name)}", name)

    @property
    def thread_cap(self) -> int:
        """The most threads one search may ask for: it must fit in the slots."""
        return min(self.max_threads, self.max_concurrent_searches)

    @property
    def worker_threads(self) -> int:
        # one thread per search slot, per waiting call and per reflection stream, and room for
        # health checks and cheap calls (Watch streams hold none)
        return self.workers or \
            self.max_concurrent_searches + self.max_waiting_searches + self.max_reflection_streams + 8

    @property
    def presets_to_warm(self) -> tuple[str, ...]:
        if self.warm_presets.strip() == "all":
            return tuple(PRESETS)
        return tuple(p.strip() for p in self.warm_presets.split(",") if p.strip())

    @property
    def tls(self) -> bool:
        return self.tls_cert is not None


def host_port_problem(address: str) -> str | None:
    """What is wrong with a HOST:PORT address; None if nothing."""
    host, sep, port = address.rpartition(":")
    if not (sep and host and port.isascii() and port.isdigit()):
        return "must be HOST:PORT"
    if int(port) > 65535:
        return "must be HOST:PORT with a port from 0 to 65535"
    return None


_HELP = {
    "listen": "address to listen on, HOST:PORT (0.0.0.0:PORT for every interface)",
    "token": "require 'authorization: Bearer TOKEN' on every call (prefer the environment "
             "variable: flags show in the process list)",
    "tls_cert": "PEM certificate chain of the server (enables TLS)",
    "tls_key": "PEM private key of the server",
    "tls_client_ca": "PEM CA bundle; clients must present a certificate it signed (mutual TLS)",
    "max_concurrent_searches": "search threads at once; past it calls get RESOURCE_EXHAUSTED",
    "max_budget_ms": "the largest time budget a request may ask for",
    "max_iterations": "the largest iteration budget a request may ask for",
    "max_threads": "the most search threads one request may ask for (default: half the cores, so that one "
                   "call leaves room for others)",
    "max_analysis_seconds": "the longest AnalyzeGame a request may ask for, estimated from its iterations and "
                            "the record's decisions; one that runs twice as long is stopped",
    "default_budget_ms": "the time cap of a request that names no budget (the default budget, which "
                         "stops much sooner once its answer is settled)",
    "slot_wait_ms": "how long a call waits for a free search slot before RESOURCE_EXHAUSTED",
    "max_waiting_searches": "calls that may wait for a search slot at once (if the line should clear within "
                            "--slot-wait-ms); more are refused at once",
    "max_message_bytes": "the largest request or response, in bytes",
    "deadline_margin_ms": "time kept back from a call's deadline to send the answer",
    "grace_seconds": "on SIGTERM, how long calls in flight get to finish",
    "lame_duck_ms": "on SIGTERM, with clients watching health (client-side health checking), how long the "
                    "server goes on serving, NOT_SERVING, for them to move their calls to other replicas "
                    "(part of the grace)",
    "warm_presets": "presets whose match-equity tables are built before serving (comma-separated, "
                    "'all' or ''); others are built on their first hint (about 0.5 s)",
    "max_watch_streams": "Health.Watch streams open at once (they need no token); more get RESOURCE_EXHAUSTED",
    "max_reflection_streams": "server reflection streams open at once (each holds a handler thread); more get "
                              "RESOURCE_EXHAUSTED",
    "workers": "handler threads (0: max-concurrent-searches + max-waiting-searches + max-reflection-streams + 8)",
    "max_connection_age_ms": "close client connections this old (with a GOAWAY, so that clients balancing "
                             "round_robin resolve the replicas again); 0: never",
    "max_connection_age_grace_ms": "how long calls in flight on a connection past its age get to finish; "
                                   "0: as long as they need",
    "metrics_listen": "serve Prometheus metrics over HTTP on HOST:PORT (none: not served)",
    "log_level": "DEBUG, INFO, WARNING or ERROR",
    "log_format": "text (for a terminal) or json (one object a line, for a log collector)",
}


def flag_name(name: str) -> str:
    """The command-line flag of ServerConfig's field `name` (max_budget_ms: --max-budget-ms)."""
    return "--" + name.replace("_", "-")


def _variable(name: str) -> str:
    return "CIRULLA_" + name.upper()


# CIRULLA_ variables that are not the server's settings: the command line's, the tests'
OTHER_VARIABLES = frozenset({"CIRULLA_CONNECT_SECONDS", "CIRULLA_REQUIRE_ALL", "CIRULLA_FUZZ_SEED",
                             "CIRULLA_FUZZ_REQUESTS"})


def unknown_variables(env: Mapping[str, str] | None = None) -> list[str]:
    """The CIRULLA_ variables set that name no setting, each with the setting it
    may have meant ("CIRULLA_MAX_BUDGET (CIRULLA_MAX_BUDGET_MS?)"): a typo is
    otherwise a setting silently left at its default."""
    env = os.environ if env is None else env
    known = {_variable(f.name) for f in dataclasses.fields(ServerConfig)}
    settings = sorted(f.name.upper() for f in dataclasses.fields(ServerConfig))
    out = []
    for var in sorted(v for v in env if v.startswith("CIRULLA_") and v not in known | OTHER_VARIABLES):
        close = difflib.get_close_matches(var.removeprefix("CIRULLA_"), settings, n=1, cutoff=0.75)
        out.append(f"{var} (CIRULLA_{close[0]}?)" if close else var)
    return out


def parse_config(argv: Sequence[str] | None = None, env: Mapping[str, str] | None = None) -> ServerConfig:
    """Flags (--max-budget-ms) win over environment variables (CIRULLA_MAX_BUDGET_MS),
    which win over the defaults."""
    env = os.environ if env is None else env
    parser = argparse.ArgumentParser(
        prog="cirulla-server",
        description="The Cirulla gRPC service: hints, AI moves and the rules (cirulla.v1).",
        epilog="Every flag can also be set by an environment variable: --max-budget-ms by "
               "CIRULLA_MAX_BUDGET_MS, and so on. On SIGTERM or SIGINT the calls in flight get "
               f"--grace-seconds to finish, then are cancelled; what still runs {OVERRUN_SECONDS} s later "
               "is abandoned (an ERROR line names it). Exit status: 0 stopped cleanly, 1 cannot start, "
               f"2 bad flags or variables, {ABANDONED} stopped by abandoning calls that ignored cancellation.")
    defaults = ServerConfig()
    fields = [f for f in dataclasses.fields(ServerConfig)]
    for f in fields:
        default = getattr(defaults, f.name)
        kind = type(default) if default is not None else str
        parser.add_argument(flag_name(f.name), dest=f.name, type=kind, default=None, metavar=_variable(f.name),
                            help=f"{_HELP[f.name]} (default: {default})")
    args = parser.parse_args(argv)
    values, sources = {}, {}
    for f in fields:
        value = getattr(args, f.name)
        var = _variable(f.name)
        if value is not None:
            sources[f.name] = f"{flag_name(f.name)} {value}"
        elif var in env:
            raw = env[var]
            default = getattr(defaults, f.name)
            try:
                value = type(default)(raw) if default is not None else raw
            except ValueError:
                parser.error(f"{var}: {raw!r} is not {'an integer' if isinstance(default, int) else 'a number'}")
            sources[f.name] = f"{var}={raw}"
        if value is not None:
            values[f.name] = value
    try:
        return ServerConfig(**values)
    except ConfigError as e:
        # the flag or variable the value came from (a default: the flag that would change it)
        parser.error(f"{e.source(sources)}: {e.message}")
