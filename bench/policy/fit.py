"""Fit the learned rollout policy to make_data.py's records.

A conditional logit: at each decision the probability of a legal move is the
softmax over the moves of ``w . features`` (the core's move_features), fit by
plain full-batch gradient descent on standardized features with a small L2
penalty. The target is the search's choice (``--target chosen``), or the
softmax of the search's expected points at temperature ``--soft-t`` (``--target
soft``), or a mix of both (``--target mix``, the default). Hands with
``hand % 5 == 0`` are held out.

It prints the top-1 agreement with the search, training and held out, beside
the greedy policy's, and the mean regret by the search's own values (its
expected points of its choice less those of the policy's), and with
``--write`` puts the weights, in millionths (integers), into solver/_core.pyx's
LEARNED_W block and bench/policy/weights.json. Rebuild the core after it
(``python setup.py build_ext --inplace``).

Needs numpy (the optional extra ``fit``: ``pip install -e .[fit]``).

    python bench/policy/fit.py bench/policy/data.jsonl.gz --write
"""
from __future__ import annotations

import argparse
import gzip
import json
import re
import sys
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
CORE = ROOT / "solver" / "_core.pyx"
BLOCK = re.compile(r"(# BEGIN LEARNED_W[^\n]*\n)(.*?)(# END LEARNED_W)", re.S)


class Data:
    """The records as flat arrays: X (one row per move), the decision of each
    row, and per decision its first row, the search's choice, greedy's."""

    def __init__(self, recs: list[dict[str, Any]], n_features: int) -> None:
        rows, seg, vals = [], [], []
        self.start, self.chosen, self.greedy, self.hand = [], [], [], []
        for d, r in enumerate(recs):
            self.start.append(len(rows))
            rows.extend(r["features"])
            seg.extend([d] * len(r["features"]))
            vals.extend(r["values"])
            self.chosen.append(r["chosen"])
            self.greedy.append(r["greedy"])
            self.hand.append(r["hand"])
        self.X = np.array(rows, dtype=float).reshape(-1, n_features)
        self.seg = np.array(seg, dtype=np.int64)
        self.values = np.array(vals, dtype=float)
        self.starts = np.array(self.start, dtype=np.int64)
        self.chosen_row = self.starts + np.array(self.chosen, dtype=np.int64)
        self.greedy_row = self.starts + np.array(self.greedy, dtype=np.int64)
        self.n = len(recs)

    def seg_max(self, x: np.ndarray) -> np.ndarray:
        return np.maximum.reduceat(x, self.starts)

    def seg_sum(self, x: np.ndarray) -> np.ndarray:
        return np.add.reduceat(x, self.starts)

    def softmax(self, s: np.ndarray) -> np.ndarray:
        e = np.exp(s - self.seg_max(s)[self.seg])
        return e / self.seg_sum(e)[self.seg]

    def argmax_rows(self, s: np.ndarray) -> np.ndarray:
        """The first row of the best score in each decision (the core's ties)."""
        best = self.seg_max(s)[self.seg]
        idx = np.where(s >= best - 1e-9, np.arange(len(s)), len(s))
        return np.minimum.reduceat(idx, self.starts)

    def agreement(self, rows: np.ndarray) -> float:
        return float(np.mean(rows == self.chosen_row))

    def regret(self, rows: np.ndarray) -> float:
        return float(np.mean(self.values[self.chosen_row] - self.values[rows]))


def load(path: str) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    with gzip.open(path, "rt") as f:
        header = json.loads(f.readline())
        return header, [json.loads(line) for line in f]


def target(d: Data, kind: str, soft_t: float) -> np.ndarray:
    y = np.zeros(len(d.X))
    if kind in ("chosen", "mix"):
        y[d.chosen_row] += 1.0
    if kind in ("soft", "mix"):
        y += d.softmax(d.values / soft_t)
    return y / y.sum() * d.n           # one unit per decision


def fit(d: Data, y: np.ndarray, *, steps: int, lr: float, l2: float, mean: np.ndarray,
        std: np.ndarray, init: np.ndarray) -> np.ndarray:
    """Gradient descent on the mean cross-entropy; returns raw-feature weights."""
    Z = (d.X - mean) / std
    w = init * std                      # init is in raw units
    for _ in range(steps):
        p = d.softmax(Z @ w)
        grad = Z.T @ (p - y) / d.n + l2 * w
        w -= lr * grad
    return w / std


def log_loss(d: Data, w: np.ndarray) -> float:
    p = d.softmax(d.X @ w)
    return float(-np.mean(np.log(p[d.chosen_row] + 1e-300)))


def subset(recs: list[dict[str, Any]], held: bool) -> list[dict[str, Any]]:
    return [r for r in recs if (r["hand"] % 5 == 0) == held]


def write_weights(w: np.ndarray, names: list[str], note: str) -> None:
    """The weights into solver/_core.pyx's LEARNED_W block, in millionths of
    the logit's (integers), and into bench/policy/weights.json."""
    ints = [int(round(1e6 * x)) for x in w]
    text = ", ".join(str(v) for v in ints)
    out, line = [], ""
    for part in text.split(", "):          # wrapped to the project's line length
        if line and len(line) + len(part) + 2 > 100:
            out.append(line + ",")
            line = part
        else:
            line = part if not line else line + ", " + part
    out.append(line)
    words, notes = note.split(" "), [""]
    for word in words:                      # the note in comment lines of the line length too
        if notes[-1] and len(notes[-1]) + len(word) > 110:
            notes.append("")
        notes[-1] += (" " if notes[-1] else "") + word
    block = ("".join(f"# {n}\n" for n in notes) + f"cdef long long LEARNED_W[{len(ints)}]\n"
             + "LEARNED_W[:] = [" + ("\n" + " " * 16).join(out) + "]\n")
    src = CORE.read_text()
    m = BLOCK.search(src)
    if m is None:
        raise SystemExit(f"no LEARNED_W block in {CORE}")
    CORE.write_text(src[:m.start(2)] + block + src[m.end(2):])
    (ROOT / "bench" / "policy" / "weights.json").write_text(json.dumps(
        {"note": note, "logit_weights": dict(zip(names, [float(f"{x:.6g}") for x in w], strict=True)),
         "LEARNED_W": ints}, indent=1) + "\n")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("data", nargs="?", default="bench/policy/data.jsonl.gz")
    ap.add_argument("--target", choices=("chosen", "soft", "mix"), default="mix")
    ap.add_argument("--soft-t", type=float, default=0.25, help="temperature of the soft target, points")
    ap.add_argument("--steps", type=int, default=3000)
    ap.add_argument("--lr", type=float, default=0.5)
    ap.add_argument("--l2", type=float, default=1e-4)
    ap.add_argument("--method", default="", help="fit only decisions of this search method (ismcts, exact)")
    ap.add_argument("--write", action="store_true", help="write the weights into solver/_core.pyx")
    args = ap.parse_args(argv)
    header, recs = load(args.data)
    names: list[str] = header["features"]
    nf = len(names)
    if args.method:
        recs = [r for r in recs if r["method"] == args.method]
    train, test = Data(subset(recs, False), nf), Data(subset(recs, True), nf)
    mean, std = train.X.mean(axis=0), train.X.std(axis=0)
    std[std == 0] = 1.0
    init = np.zeros(nf)
    init[0] = 1.0 / std[0]              # start as a soft greedy policy
    w = fit(train, target(train, args.target, args.soft_t), steps=args.steps, lr=args.lr, l2=args.l2,
            mean=mean, std=std, init=init)
    print(f"data: {args.data} ({header}), {train.n} training and {test.n} held-out decisions")
    for label, d in (("training", train), ("held-out", test)):
        learned = d.argmax_rows(d.X @ w)
        print(f"{label}: top-1 agreement with the search: learned {100 * d.agreement(learned):.1f} %, "
              f"greedy {100 * d.agreement(d.greedy_row):.1f} %; "
              f"regret (search's points): learned {d.regret(learned):.4f}, greedy {d.regret(d.greedy_row):.4f}; "
              f"log-loss {log_loss(d, w):.4f}")
    by_method: dict[str, list[dict[str, Any]]] = {}
    for r in subset(recs, True):
        by_method.setdefault(r["method"], []).append(r)
    for meth, rs in sorted(by_method.items()):
        d = Data(rs, nf)
        learned = d.argmax_rows(d.X @ w)
        print(f"  held-out {meth} ({d.n}): learned {100 * d.agreement(learned):.1f} %, "
              f"greedy {100 * d.agreement(d.greedy_row):.1f} %")
    for name, x in zip(names, w, strict=True):
        print(f"  {name:18s} {100 * x:+10.4f}")
    if args.write:
        note = (f"bench/policy/fit.py {Path(args.data).name} --target {args.target} --soft-t {args.soft_t} "
                f"--steps {args.steps} --lr {args.lr} --l2 {args.l2}"
                + (f" --method {args.method}" if args.method else "")
                + f"; data: make_data.py --hands {header['hands']} --iterations {header['iterations']} "
                  f"--seed {header['seed']}")
        write_weights(w, names, note)
        print(f"wrote the weights into {CORE.relative_to(ROOT)} and bench/policy/weights.json")
    return 0


if __name__ == "__main__":
    sys.exit(main())
