"""Stub of _search.pyx: the Searcher the Python search drives, and its stop flag.

SearcherStats names stats()'s value for type checkers only: import it under TYPE_CHECKING."""
from typing import TypedDict

from ._core import CoreFields, CoreMove, CoreRules, Policy
from ._equity import EquityTable

class SearcherStats(TypedDict):
    """The counts behind a search's figures; the lists are by root move."""
    iterations: int                 # ISMCTS iterations
    playouts: int
    nodes: int
    rejected: int                   # determinization draws rejected
    solved: int                     # positions visited by the exact solver
    visits: list[int]               # the tree's
    msum: list[float]
    sum2: list[float]
    win: list[float]
    cat: list[list[float]]          # [move][category]
    worlds: int                     # the paired phase's (or the exact solver's)
    weight: float
    p_sum: list[float]
    p_cross: list[list[float]]      # [move][move]
    p_cat: list[list[float]]
    p_risk: list[float]
    p_win: list[float]
    p_wcross: list[list[float]]

class StopFlag:
    def set(self) -> None: ...
    def clear(self) -> None: ...
    @property
    def is_set(self) -> bool: ...

class Searcher:
    def __init__(self, rules: CoreRules, base: CoreFields, *, observer: int, unseen: list[int],
                 hidden: list[int], nobuona: list[int], played: list[int], fixed: bool, seed: int,
                 stop: StopFlag, plays: list[tuple[int, int, int, int, tuple[int, ...]]] | None = None,
                 past: list[tuple[int, int, int, int, tuple[int, ...]]] | None = None,
                 infer_t: float = 0.0, c_ucb: float = 4.0, eps_milli: int = 100, follow_min: int = 8,
                 follow_own: int = 1, root_floor: float = 0.0,
                 policy: Policy = ..., infer_policy: Policy = ..., own_policy: int = -1,
                 infer_mix: float = -1.0, infer_soft: int = 0, infer_program: float = 0.0, infer_split: int = 0,
                 own_eps_milli: int = -1, learned_value: int = 0,
                 equity: EquityTable | None = None,
                 scores: list[int] | None = None,
                 next_dealer_side: int = 0, match_mode: bool = False) -> None: ...
    def focus_on(self, move: int, share: float) -> None: ...
    @property
    def type_weights(self) -> list[list[float]]: ...
    @property
    def root_moves(self) -> list[CoreMove]: ...
    def ismcts(self, iterations: int, deadline: float) -> int: ...
    def paired(self, worlds: int, deadline: float, min_worlds: int = 0) -> int: ...
    def exact(self, part: int = 0, parts: int = 1, deadline: float = 0.0, respond: bool = False) -> int: ...
    def vs_rollout_player(self, program: float = 0.0) -> list[float] | None: ...
    def sample(self) -> CoreFields: ...
    def has_buona(self, seat: int, holding: int) -> bool: ...
    def likelihood(self, hands: list[int], memo: bool = True) -> float: ...
    def stats(self) -> SearcherStats: ...
