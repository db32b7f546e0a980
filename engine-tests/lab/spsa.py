#!/usr/bin/env python3
"""SPSA tuning of Qilin's search parameters, as OpenBench (after fishtest) runs it.

The parameters, their ranges and steps come from the engine: a `tune` build prints them with
`qilin spsa-params` in OpenBench's SPSA input format, one `name, int, default, min, max, c_end,
r_end` a line (src/search/params.rs; `--table FILE` reads such lines from a file instead).

Iteration k (0-based) of N:
  - every tuned parameter i gets a random sign d_i = +1 or -1 and the perturbation c_k;
  - `--pairs-per-iter` game pairs (each opening twice, colours swapped) are played between the
    engine set to theta + c_k*d ("plus") and the engine set to theta - c_k*d ("minus"), each value
    rounded to an integer and clamped to the parameter's range;
  - with r = wins - losses of plus, theta_i += a_k * r / (c_k * d_i), clamped to the range.
The gains are OpenBench's, from each parameter's c_end (its step in params.rs) and r_end:

    c_k = max(c / (k+1)^gamma, 0.5)       c = c_end * N^gamma
    a_k = a / (A + k + 1)^alpha           a = r_end * c_end^2 * (A + N)^alpha,   A = 0.1 * N

with alpha 0.602 and gamma 0.101, so that in the last iteration c_k = c_end and a_k / c_k^2 =
r_end: one game won moves a parameter by r_end * c_end then. Integers are rounded as OpenBench
rounds them, floor(x + u) with u uniform in [0, 1) drawn once per parameter and iteration for
both sides: unbiased, and plus and minus still differ by 2*c_k on average when c_k is below 1.

Everything random comes from --seed and the iteration's number (the signs, the roundings, the
openings), so a run stopped and resumed plays and moves exactly as one run straight through.

Files: --state (JSON: the settings, theta and the tally, written after each finished iteration;
the same command resumes from it), the trajectory CSV (iteration, then every theta; row 0 is the
start) and an SVG of the trajectories, each parameter scaled to its range.

    make spsa ARGS="--engine target-tune/release/qilin --iterations 2000 --pairs-per-iter 4 \\
        --concurrency 4 --state engine-tests/out/spsa/run1.json"

docs/search-parameters.md ("Tuning with SPSA") says how a tuned set is tested and lands.
"""

from __future__ import annotations

import argparse
import csv
import dataclasses
import fnmatch
import io
import json
import math
import os
import queue
import random
import signal
import subprocess
import sys
import threading
import time
from typing import Callable, Optional
from xml.sax.saxutils import escape

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import match as lab  # noqa: E402  (the UCI driver and the game player; python-chess only to play)

ALPHA = 0.602
GAMMA = 0.101
A_RATIO = 0.1
# An integer parameter is never perturbed by less than half a unit (OpenBench's floor).
MIN_C_INT = 0.5
STATE_FORMAT = "qilin-spsa-1"
DEFAULT_STATE = os.path.join("engine-tests", "out", "spsa", "state.json")
DEFAULT_NODES = 5000


class UsageError(Exception):
    pass


# ---------------------------------------------------------------------------
# The parameter table
# ---------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class Param:
    name: str
    start: float
    min: float
    max: float
    c_end: float
    r_end: float


def parse_table(text: str) -> list[Param]:
    """OpenBench's SPSA input: `name, int, default, min, max, c_end, r_end` a line.

    >>> parse_table("rfp_margin, int, 80, 30, 160, 6, 0.002\\n")
    [Param(name='rfp_margin', start=80.0, min=30.0, max=160.0, c_end=6.0, r_end=0.002)]
    """
    params: list[Param] = []
    for lineno, raw in enumerate(text.splitlines(), 1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        fields = [f.strip() for f in line.split(",")]
        if len(fields) != 7:
            raise UsageError(f"table line {lineno}: expected 7 comma-separated fields "
                             f"(name, int, default, min, max, c_end, r_end): {line!r}")
        name, kind = fields[0], fields[1]
        if kind != "int":
            raise UsageError(f"table line {lineno}: {name}: only int parameters are supported, not {kind!r}")
        try:
            start, lo, hi, c_end, r_end = (float(f) for f in fields[2:])
        except ValueError:
            raise UsageError(f"table line {lineno}: {name}: a number is not a number: {line!r}") from None
        if not (lo <= start <= hi) or lo == hi or c_end <= 0 or r_end <= 0:
            raise UsageError(f"table line {lineno}: {name}: needs min <= default <= max, min < max, "
                             f"c_end > 0 and r_end > 0")
        if any(p.name == name for p in params):
            raise UsageError(f"table line {lineno}: {name} twice")
        params.append(Param(name, start, lo, hi, c_end, r_end))
    if not params:
        raise UsageError("the parameter table is empty")
    return params


def select(params: list[Param], patterns: Optional[list[str]], clocked: bool,
           log: Callable[[str], None] = print) -> list[Param]:
    """The parameters named by --params (names or shell patterns, comma-separated).

    Without --params all of them, except that without a clock (fixed nodes or depth) the
    time-management ones are left out: no game would tell their values apart.
    """
    if not patterns:
        if clocked:
            return list(params)
        kept = [p for p in params if not p.name.startswith("time_")]
        if len(kept) < len(params):
            log(f"note: {len(params) - len(kept)} time_* parameters left out: they do nothing without a "
                f"clock (name them in --params, or use --tc, to tune them)")
        return kept
    wanted = [w.strip() for item in patterns for w in item.split(",") if w.strip()]
    chosen: list[Param] = []
    for w in wanted:
        hits = [p for p in params if fnmatch.fnmatchcase(p.name, w)]
        if not hits:
            raise UsageError(f"--params: no parameter matches {w!r} "
                             f"(there are: {', '.join(p.name for p in params)})")
        chosen.extend(p for p in hits if p not in chosen)
    order = {p.name: i for i, p in enumerate(params)}
    return sorted(chosen, key=lambda p: order[p.name])


# ---------------------------------------------------------------------------
# Gains, perturbation and update
# ---------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class Schedule:
    iterations: int
    alpha: float = ALPHA
    gamma: float = GAMMA
    a_ratio: float = A_RATIO

    @property
    def big_a(self) -> float:
        return self.a_ratio * self.iterations

    def c(self, p: Param) -> float:
        """c, so that c_k of the last iteration is c_end."""
        return p.c_end * self.iterations ** self.gamma

    def a(self, p: Param) -> float:
        """a, so that a_k / c_k^2 of the last iteration is r_end."""
        return p.r_end * p.c_end ** 2 * (self.big_a + self.iterations) ** self.alpha

    def c_k(self, p: Param, k: int) -> float:
        return max(self.c(p) / (k + 1) ** self.gamma, MIN_C_INT)

    def a_k(self, p: Param, k: int) -> float:
        return self.a(p) / (self.big_a + k + 1) ** self.alpha


def engine_value(x: float, u: float, p: Param) -> int:
    """A perturbed value as the engine gets it: floor(x + u), clamped to the range.

    >>> p = Param("x", 5, 0, 10, 1, 0.002)
    >>> engine_value(6.3, 0.5, p), engine_value(3.7, 0.5, p), engine_value(11.2, 0.0, p)
    (6, 4, 10)
    """
    return int(min(max(math.floor(x + u), p.min), p.max))


@dataclasses.dataclass
class Perturbation:
    signs: list[int]
    c: list[float]
    plus: dict[str, int]
    minus: dict[str, int]


def perturb(params: list[Param], theta: dict[str, float], k: int, schedule: Schedule,
            seed: int) -> Perturbation:
    """Iteration k's signs, perturbations and the two sides' engine values.

    The random numbers depend only on the seed and k: a resumed run draws what an
    uninterrupted one would.
    """
    rng = random.Random(f"qilin-spsa:{seed}:{k}")
    signs = [1 if rng.getrandbits(1) else -1 for _ in params]
    us = [rng.random() for _ in params]
    cs = [schedule.c_k(p, k) for p in params]
    plus, minus = {}, {}
    for p, d, u, c in zip(params, signs, us, cs):
        plus[p.name] = engine_value(theta[p.name] + d * c, u, p)
        minus[p.name] = engine_value(theta[p.name] - d * c, u, p)
    return Perturbation(signs, cs, plus, minus)


def update(params: list[Param], theta: dict[str, float], pert: Perturbation, k: int,
           schedule: Schedule, result: int) -> dict[str, float]:
    """theta_i + a_k * r / (c_k * d_i), clamped to the range; r = wins - losses of plus."""
    out = dict(theta)
    for p, d, c in zip(params, pert.signs, pert.c):
        moved = theta[p.name] + schedule.a_k(p, k) * result / (c * d)
        out[p.name] = min(max(moved, p.min), p.max)
    return out


def tuned_value(p: Param, x: float) -> int:
    """The integer a tuned value lands as: rounded half up, within the range."""
    return int(min(max(math.floor(x + 0.5), p.min), p.max))


def opening_order(count: int, seed: int) -> list[int]:
    order = list(range(count))
    random.Random(f"qilin-spsa-openings:{seed}").shuffle(order)
    return order


# ---------------------------------------------------------------------------
# Files: state, trajectory CSV, SVG
# ---------------------------------------------------------------------------

# The settings a resumed run must share with the run it continues; the others (engine path,
# concurrency, files) may change between sessions.
FIXED = ("iterations", "pairs_per_iter", "alpha", "gamma", "a_ratio", "seed", "limit", "openings", "params")


def new_state(settings: dict) -> dict:
    return {
        "format": STATE_FORMAT,
        "settings": settings,
        "iteration": 0,
        "theta": {p["name"]: float(p["start"]) for p in settings["params"]},
        "games": 0, "wins": 0, "draws": 0, "losses": 0, "failures": 0,
        "elapsed_s": 0.0,
    }


def load_state(path: str) -> dict:
    try:
        with open(path, encoding="utf-8") as f:
            state = json.load(f)
    except (OSError, ValueError) as exc:
        raise UsageError(f"--state {path}: cannot read it ({exc})") from None
    if not isinstance(state, dict) or state.get("format") != STATE_FORMAT:
        raise UsageError(f"--state {path}: not a state file of this tuner ({STATE_FORMAT})")
    return state


def save_state(path: str, state: dict) -> None:
    """Written whole to a temporary file and renamed: a kill never leaves half a state."""
    tmp = path + ".tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        json.dump(state, f, indent=1)
        f.write("\n")
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)


def resume_differences(saved: dict, settings: dict) -> list[str]:
    out = []
    for key in FIXED:
        if key == "params" or saved.get(key) == settings.get(key):
            continue
        out.append(f"{key}: {saved.get(key)!r} in the state, {settings.get(key)!r} now")
    before = {p["name"]: p for p in saved.get("params", [])}
    now = {p["name"]: p for p in settings["params"]}
    if list(before) != list(now):
        gone, new = [n for n in before if n not in now], [n for n in now if n not in before]
        out.append("params: " + ", ".join(([f"not tuned now: {' '.join(gone)}"] if gone else [])
                                          + ([f"new: {' '.join(new)}"] if new else []) or ["in another order"]))
    for name in before:
        if name in now and before[name] != now[name]:
            out.append(f"{name}: {before[name]} in the state, {now[name]} now")
    return out


def trajectory_header(names: list[str]) -> list[str]:
    return ["iteration"] + names


def trajectory_row(k: int, names: list[str], theta: dict[str, float]) -> list[str]:
    return [str(k)] + [f"{theta[n]:.4f}" for n in names]


def read_trajectory(path: str, names: list[str], last: int) -> list[list[str]]:
    """The CSV's rows up to iteration `last` that are whole and in sequence (normally from
    row 0); [] when the file is missing or has other columns."""
    try:
        with open(path, newline="", encoding="utf-8") as f:
            rows = list(csv.reader(f))
    except OSError:
        return []
    if not rows or rows[0] != trajectory_header(names):
        return []
    kept: list[list[str]] = []
    for row in rows[1:]:
        if len(row) != len(names) + 1 or not row[0].isdigit():
            break
        k = int(row[0])
        if k > last or (kept and k != int(kept[-1][0]) + 1):
            break
        kept.append(row)
    return kept


def write_trajectory(path: str, names: list[str], rows: list[list[str]]) -> None:
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(trajectory_header(names))
    w.writerows(rows)
    tmp = path + ".tmp"
    with open(tmp, "w", newline="", encoding="utf-8") as f:
        f.write(buf.getvalue())
    os.replace(tmp, path)


def append_trajectory(path: str, row: list[str]) -> None:
    with open(path, "a", newline="", encoding="utf-8") as f:
        csv.writer(f, lineterminator="\n").writerow(row)


def reconcile_trajectory(path: str, params: list[Param], state: dict,
                         log: Callable[[str], None] = print) -> None:
    """Make the CSV hold rows 0..state's iteration: the rows of iterations the state never
    recorded (an interrupt between the two writes) are dropped."""
    names = [p.name for p in params]
    done = state["iteration"]
    rows = read_trajectory(path, names, done)
    if rows and int(rows[-1][0]) == done:
        write_trajectory(path, names, rows)
        return
    if done > 0:
        log(f"note: {path} does not hold the iterations up to {done}; it restarts at iteration {done}")
    write_trajectory(path, names, [trajectory_row(done, names, state["theta"])])


PALETTE = ("#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2",
           "#7f7f7f", "#bcbd22", "#17becf")


def _colour(i: int) -> str:
    dash = ("", ' stroke-dasharray="6 3"', ' stroke-dasharray="2 2"', ' stroke-dasharray="8 3 2 3"')
    return f'stroke="{PALETTE[i % len(PALETTE)]}"{dash[(i // len(PALETTE)) % len(dash)]}'


def svg_trajectories(params: list[Param], rows: list[list[str]], iterations: int, title: str,
                     max_points: int = 600) -> str:
    """The trajectories as an SVG: x the iteration (0..N), y each value scaled to its range
    (0 = min, 1 = max); a legend names each line with its start and current value."""
    width, plot_h, left, top, right = 1100, 400, 56, 40, 20
    plot_w = width - left - right
    cols = 3
    legend_rows = (len(params) + cols - 1) // cols
    height = top + plot_h + 40 + 18 * legend_rows + 10
    span = max(iterations, 1)

    def x(k: float) -> float:
        return left + plot_w * k / span

    def y(v: float) -> float:
        return top + plot_h * (1.0 - v)

    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
           f'viewBox="0 0 {width} {height}" font-family="sans-serif" font-size="12">',
           f'<rect width="{width}" height="{height}" fill="white"/>',
           f'<text x="{left}" y="22" font-size="15">{escape(title)}</text>']
    for frac in (0.0, 0.25, 0.5, 0.75, 1.0):
        out.append(f'<line x1="{left}" y1="{y(frac):.1f}" x2="{left + plot_w}" y2="{y(frac):.1f}" '
                   f'stroke="#ddd"/>')
        label = {0.0: "min", 1.0: "max"}.get(frac, f"{frac:g}")
        out.append(f'<text x="{left - 6}" y="{y(frac) + 4:.1f}" text-anchor="end">{label}</text>')
    for k in sorted({round(span * i / 4) for i in range(5)}):
        out.append(f'<text x="{x(k):.1f}" y="{top + plot_h + 16}" text-anchor="middle">{k}</text>')
    out.append(f'<text x="{left + plot_w / 2:.1f}" y="{top + plot_h + 32}" text-anchor="middle">iteration</text>')
    stride = max(1, math.ceil(len(rows) / max_points))
    picked = rows[::stride]
    if rows and picked[-1] is not rows[-1]:
        picked.append(rows[-1])
    for i, p in enumerate(params):
        pts = []
        for row in picked:
            v = (float(row[i + 1]) - p.min) / (p.max - p.min)
            pts.append(f"{x(int(row[0])):.1f},{y(v):.1f}")
        out.append(f'<polyline fill="none" stroke-width="1.5" {_colour(i)} points="{" ".join(pts)}">'
                   f'<title>{escape(p.name)}</title></polyline>')
    for i, p in enumerate(params):
        col, row_i = i % cols, i // cols
        lx = left + col * (plot_w / cols)
        ly = top + plot_h + 50 + 18 * row_i
        now = float(rows[-1][i + 1]) if rows else p.start
        out.append(f'<line x1="{lx:.1f}" y1="{ly - 4}" x2="{lx + 22:.1f}" y2="{ly - 4}" stroke-width="2" '
                   f'{_colour(i)}/>')
        out.append(f'<text x="{lx + 28:.1f}" y="{ly}">{escape(p.name)} {p.start:g} &#8594; {now:.1f} '
                   f'[{p.min:g}, {p.max:g}]</text>')
    out.append("</svg>")
    return "\n".join(out) + "\n"


def write_svg(path: str, params: list[Param], csv_path: str, state: dict) -> None:
    names = [p.name for p in params]
    rows = read_trajectory(csv_path, names, state["iteration"])
    s = state["settings"]
    title = (f"SPSA: {len(params)} parameters, iteration {state['iteration']} of {s['iterations']}, "
             f"{state['games']} games ({s['limit']})")
    text = svg_trajectories(params, rows, s["iterations"], title)
    tmp = path + ".tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        f.write(text)
    os.replace(tmp, path)


# ---------------------------------------------------------------------------
# The tuning loop (no engines here: `play` plays an iteration's games)
# ---------------------------------------------------------------------------

# play(k, plus, minus) -> (wins, draws, losses) of plus over the iteration's pairs.
PlayFn = Callable[[int, dict, dict], tuple]


def _clock(seconds: float) -> str:
    s = int(round(seconds))
    return f"{s // 3600}:{s // 60 % 60:02d}:{s % 60:02d}"


def progress_line(params: list[Param], state: dict, wdl: tuple, pert_result: int, took: float,
                  moves: int = 3) -> str:
    s = state["settings"]
    done, n = state["iteration"], s["iterations"]
    per = state["elapsed_s"] / done if done else 0.0
    biggest = sorted(params, key=lambda p: -abs(state["theta"][p.name] - p.start) / p.c_end)[:moves]
    moved = ", ".join(f"{p.name} {p.start:g}->{state['theta'][p.name]:.2f}" for p in biggest
                      if state["theta"][p.name] != p.start)
    w, d, l = wdl
    return (f"[{done:>{len(str(n))}}/{n}] games {state['games']}  plus W {state['wins']} D {state['draws']} "
            f"L {state['losses']}  (this: +{w} ={d} -{l}, r {pert_result:+d})  {took:.1f}s  "
            f"elapsed {_clock(state['elapsed_s'])}  ETA {_clock(per * (n - done))}"
            + (f"  failures {state['failures']}" if state["failures"] else "")
            + (f"  moved: {moved}" if moved else ""))


def run(settings: dict, state_path: str, csv_path: str, svg_path: str, play: PlayFn,
        stop_after: Optional[int] = None, svg_every: int = 10,
        log: Callable[[str], None] = print, clock: Callable[[], float] = time.monotonic) -> dict:
    """Plays iterations from where the state file left off (or from the start) and returns
    the state. After each iteration: a CSV row, then the state. A KeyboardInterrupt loses
    the iteration in flight only; the SVG is written on the way out."""
    params = [Param(**p) for p in settings["params"]]
    names = [p.name for p in params]
    schedule = Schedule(settings["iterations"], settings["alpha"], settings["gamma"], settings["a_ratio"])
    for path in (state_path, csv_path, svg_path):
        os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    if os.path.exists(state_path):
        state = load_state(state_path)
        diffs = resume_differences(state["settings"], settings)
        if diffs:
            raise UsageError(f"--state {state_path} is a run with other settings; give a new --state "
                             f"or the same settings:\n  " + "\n  ".join(diffs))
        state["settings"] = settings  # the engine path or concurrency may differ
        if state["iteration"] < settings["iterations"]:
            log(f"resuming {state_path} after iteration {state['iteration']} of {settings['iterations']}")
        reconcile_trajectory(csv_path, params, state, log)
    else:
        state = new_state(settings)
        write_trajectory(csv_path, names, [trajectory_row(0, names, state["theta"])])  # an old one goes
        save_state(state_path, state)
    played = 0
    try:
        while state["iteration"] < settings["iterations"] and (stop_after is None or played < stop_after):
            k = state["iteration"]
            t0 = clock()
            pert = perturb(params, state["theta"], k, schedule, settings["seed"])
            w, d, l, *rest = play(k, pert.plus, pert.minus)
            result = w - l
            state["theta"] = update(params, state["theta"], pert, k, schedule, result)
            state["iteration"] = k + 1
            state["games"] += w + d + l
            state["wins"] += w
            state["draws"] += d
            state["losses"] += l
            state["failures"] += rest[0] if rest else 0
            took = clock() - t0
            state["elapsed_s"] += took
            append_trajectory(csv_path, trajectory_row(k + 1, names, state["theta"]))
            save_state(state_path, state)
            played += 1
            log(progress_line(params, state, (w, d, l), result, took))
            if svg_every and state["iteration"] % svg_every == 0:
                write_svg(svg_path, params, csv_path, state)
    finally:
        write_svg(svg_path, params, csv_path, state)
    return state


def final_report(settings: dict, state: dict) -> str:
    params = [Param(**p) for p in settings["params"]]
    out = []
    done, n = state["iteration"], settings["iterations"]
    head = "Tuned values" if done >= n else f"Values so far (iteration {done} of {n}; the same command resumes)"
    out.append(f"{head}: {state['games']} games, plus W {state['wins']} D {state['draws']} L {state['losses']}")
    out.append("  name                      start    now  (theta, moved in steps)")
    for p in params:
        x = state["theta"][p.name]
        out.append(f"  {p.name:24} {p.start:6g} {tuned_value(p, x):6d}  ({x:.2f}, {(x - p.start) / p.c_end:+.2f})")
    changed = [p for p in params if tuned_value(p, state["theta"][p.name]) != p.start]
    if not changed:
        out.append("No parameter moved by a whole unit: nothing to test or paste.")
        return "\n".join(out)
    out.append(f"For src/search/params.rs, the {len(changed)} lines that change (the doc comments stay):")
    for p in changed:
        out.append(f"    {p.name} = {tuned_value(p, state['theta'][p.name])}, {p.min:g}..={p.max:g}, {p.c_end:g};")
    opts = " ".join(f"--engine-opt {p.name}={tuned_value(p, state['theta'][p.name])}" for p in changed)
    out.append("For an SPRT with match.py (the same tune build on both sides, the opponent at the values before):")
    out.append(f"  {opts}")
    return "\n".join(out)


# ---------------------------------------------------------------------------
# Engines: the table, the option check, the games
# ---------------------------------------------------------------------------


def engine_table(cmd: list[str]) -> str:
    try:
        done = subprocess.run(cmd + ["spsa-params"], capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise UsageError(f"cannot run {' '.join(cmd)} spsa-params: {exc}") from None
    if done.returncode != 0:
        raise UsageError(f"{' '.join(cmd)} spsa-params failed (exit {done.returncode}): is it a tune build? "
                         f"Build one with `cargo build --release --features tune`. {done.stderr.strip()[:300]}")
    return done.stdout


def check_options(spec: lab.EngineSpec, params: list[Param]) -> None:
    """Every tuned parameter must be a spin option of the engine with the table's range."""
    eng = lab.UciEngine(spec, "check", lab.UciLog(None))
    try:
        eng.start(configure=False)
    except (lab.EngineCrash, lab.EngineStall) as exc:
        detail = eng.exit_info()
        eng.kill()
        raise UsageError(f"engine '{spec.spec}': UCI handshake failed ({exc}; {detail})") from None
    try:
        for p in params:
            opt = eng.options.get(p.name.lower())
            if opt is None or opt["type"] != "spin":
                raise UsageError(f"the engine has no spin option {p.name}: not a tune build "
                                 f"(`cargo build --release --features tune`)?")
            if (opt.get("min"), opt.get("max")) != (int(p.min), int(p.max)):
                raise UsageError(f"option {p.name}: range {opt.get('min')}..{opt.get('max')} in `uci`, "
                                 f"{p.min:g}..{p.max:g} in the table")
    finally:
        eng.quit()


class FatalError(Exception):
    pass


class GamePool:
    """--concurrency workers, each with two engine processes (plus and minus) started once
    and kept; an iteration's pairs are shared among them."""

    def __init__(self, cfg: "lab.Config", openings: list[str], order: list[int], pairs_per_iter: int,
                 concurrency: int, pgn_path: Optional[str], uci_log: Optional[str] = None,
                 log: Callable[[str], None] = print):
        self.cfg = cfg
        self.openings = openings
        self.order = order
        self.pairs = pairs_per_iter
        self.log = log
        self.ulog = lab.UciLog(uci_log)
        self.aborted = False
        if pgn_path:
            os.makedirs(os.path.dirname(os.path.abspath(pgn_path)), exist_ok=True)
        self.pgn = open(pgn_path, "a", encoding="utf-8") if pgn_path else None
        self.base = {side: dict(cfg.specs[side].applied or {}) for side in lab.SIDES}
        self.slots = []
        for i in range(min(concurrency, pairs_per_iter)):
            # Each engine its own copy of the spec: its `applied` options carry the values
            # of the pair it plays, so that a restart mid-iteration starts it with them.
            self.slots.append({side: lab.UciEngine(dataclasses.replace(cfg.specs[side]), f"w{i}:{side}",
                                                   self.ulog) for side in lab.SIDES})

    def _prepare(self, engines: dict, values: dict[str, dict]) -> None:
        for side, eng in engines.items():
            eng.spec.applied = {**self.base[side], **{n: str(v) for n, v in values[side].items()}}
            if eng.alive():
                try:
                    for n, v in values[side].items():
                        eng.send(f"setoption name {n} value {v}")
                except lab.EngineCrash:
                    eng.kill()
            if not eng.alive():
                last = None
                for _ in range(3):
                    try:
                        eng.start()  # applies spec.applied, the values included
                        break
                    except (lab.EngineCrash, lab.EngineStall) as exc:
                        last = exc
                        eng.kill()
                        time.sleep(0.5)
                else:
                    raise FatalError(f"cannot (re)start {' '.join(eng.spec.cmd)}: {last}; {eng.exit_info()}")

    def _pair(self, engines: dict, k: int, j: int, plus: dict, minus: dict) -> list:
        pair = k * self.pairs + j
        fen = self.openings[self.order[pair % len(self.order)]]
        self._prepare(engines, {"engine": plus, "opponent": minus})
        games = []
        for g, plus_white in enumerate((True, False)):
            if self.aborted:
                return games
            games.append(lab.play_game(self.cfg, engines, fen, 2 * pair + g + 1, pair, plus_white))
        return games

    def play(self, k: int, plus: dict, minus: dict) -> tuple[int, int, int, int]:
        jobs: "queue.Queue[int]" = queue.Queue()
        for j in range(self.pairs):
            jobs.put(j)
        results: list = [None] * self.pairs
        errors: list = []

        def work(engines: dict) -> None:
            while not self.aborted:
                try:
                    j = jobs.get_nowait()
                except queue.Empty:
                    return
                try:
                    results[j] = self._pair(engines, k, j, plus, minus)
                except Exception as exc:  # an engine that cannot start, or a bug here: stop
                    errors.append(exc)
                    self.aborted = True
                    return

        threads = [threading.Thread(target=work, args=(s,), daemon=True) for s in self.slots]
        try:
            for t in threads:
                t.start()
            while any(t.is_alive() for t in threads):
                for t in threads:
                    t.join(timeout=0.2)
        except KeyboardInterrupt:
            self.abort()
            for t in threads:
                t.join(timeout=5)
            raise
        if errors:
            raise FatalError(str(errors[0]))
        w = d = l = failures = 0
        for games in results:
            for g in games:
                pts = g.tested_points()
                w += pts == 1.0
                d += pts == 0.5
                l += pts == 0.0
                if g.failure:
                    failures += 1
                    who = "plus" if g.failure[0] == "engine" else "minus"
                    self.log(f"!!! iteration {k + 1} game {g.number}: {who}: {g.failure[1]}: {g.failure[2]}")
                if self.pgn:
                    self.pgn.write(g.pgn + "\n\n")
        if self.pgn:
            self.pgn.flush()
        return w, d, l, failures

    def abort(self) -> None:
        self.aborted = True
        for s in self.slots:
            for eng in s.values():
                eng.kill()

    def close(self) -> None:
        for s in self.slots:
            for eng in s.values():
                eng.quit()
        if self.pgn:
            self.pgn.close()
        self.ulog.close()


# ---------------------------------------------------------------------------
# CLI
# ---------------------------------------------------------------------------


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        description="SPSA tuning of Qilin's search parameters (OpenBench's gains; resumable).",
        epilog="The engine must be a tune build (cargo build --release --features tune). "
               "docs/search-parameters.md, 'Tuning with SPSA', has the method and how a result lands.")
    p.add_argument("--engine", help="the tune build of the engine")
    p.add_argument("--engine-opt", action="append", metavar="NAME=VALUE",
                   help="another UCI option for both sides, e.g. Hash=16 (repeatable)")
    p.add_argument("--table", metavar="FILE",
                   help="read the parameters from FILE (OpenBench SPSA input) instead of `ENGINE spsa-params`")
    p.add_argument("--params", action="append", metavar="NAMES",
                   help="tune only these (comma-separated names or patterns like 'lmr_*'; repeatable); "
                        "default all, without the time_* ones under fixed nodes")
    p.add_argument("--tc", help="clock BASE[+INC] in seconds, e.g. 8+0.08 (default: fixed nodes)")
    p.add_argument("--nodes", type=int, help=f"go nodes N (default {DEFAULT_NODES} when there is no --tc)")
    p.add_argument("--iterations", type=int, default=1000, help="iterations N of the schedule (default 1000)")
    p.add_argument("--pairs-per-iter", type=int, default=1, help="game pairs per iteration (default 1)")
    p.add_argument("--concurrency", type=int, default=1,
                   help="games at once (default 1); at most --pairs-per-iter are used")
    p.add_argument("--openings", default=lab.DEFAULT_BOOK, help=f"EPD openings (default {lab.DEFAULT_BOOK})")
    p.add_argument("--seed", type=int, help="seed of the signs, roundings and openings (default: random, kept "
                                            "in the state)")
    p.add_argument("--state", default=DEFAULT_STATE,
                   help=f"state file, resumed when it exists (default {DEFAULT_STATE})")
    p.add_argument("--csv", help="trajectory CSV (default: the state's name with .csv)")
    p.add_argument("--svg", help="trajectory picture (default: the state's name with .svg)")
    p.add_argument("--pgn", help="append every game to this PGN file")
    p.add_argument("--uci-log", metavar="FILE", help="log all UCI traffic (timestamped) to FILE")
    p.add_argument("--stop-after", type=int, metavar="K", help="play at most K iterations now (resume later)")
    p.add_argument("--svg-every", type=int, default=10, metavar="K",
                   help="redraw the SVG every K iterations (default 10)")
    p.add_argument("--max-plies", type=int, default=600, help="a game is drawn after this many plies (default 600)")
    p.add_argument("--alpha", type=float, default=ALPHA, help=f"a_k's exponent (default {ALPHA})")
    p.add_argument("--gamma", type=float, default=GAMMA, help=f"c_k's exponent (default {GAMMA})")
    p.add_argument("--a-ratio", type=float, default=A_RATIO, help=f"A as a share of the iterations (default {A_RATIO})")
    p.add_argument("--r-end", type=float, help="r_end for every parameter (default: the table's, 0.002)")
    p.add_argument("--show", action="store_true", help="print the tuned parameters and their gains, and exit")
    return p


def _sibling(path: str, ext: str) -> str:
    root, _ = os.path.splitext(path)
    return root + ext


def show(params: list[Param], schedule: Schedule) -> str:
    n = schedule.iterations
    out = [f"{len(params)} parameters, {n} iterations, A {schedule.big_a:g}, alpha {schedule.alpha:g}, "
           f"gamma {schedule.gamma:g}",
           f"  {'name':24} {'start':>6} {'min':>6} {'max':>6} {'c_1':>7} {'c_end':>7} {'a_1/c_1':>8} "
           f"{'a_N/c_N':>8}   (a_k/c_k: the move per game won)"]
    for p in params:
        c1, cn = schedule.c_k(p, 0), schedule.c_k(p, n - 1)
        out.append(f"  {p.name:24} {p.start:6g} {p.min:6g} {p.max:6g} {c1:7.2f} {cn:7.2f} "
                   f"{schedule.a_k(p, 0) / c1:8.4f} {schedule.a_k(p, n - 1) / cn:8.4f}")
    return "\n".join(out)


def main(argv: Optional[list[str]] = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        for flag in ("iterations", "pairs_per_iter", "concurrency", "nodes", "max_plies", "stop_after"):
            val = getattr(args, flag)
            if val is not None and val <= 0:
                raise UsageError(f"--{flag.replace('_', '-')} must be positive")
        if not args.engine:
            raise UsageError("--engine is required (a tune build)")
        spec = lab.resolve_spec(args.engine, lab.parse_opts(args.engine_opt), "plus")
        if args.table:
            try:
                with open(args.table, encoding="utf-8") as f:
                    table = parse_table(f.read())
            except OSError as exc:
                raise UsageError(f"--table: {exc}") from None
        else:
            table = parse_table(engine_table(spec.cmd))
        if args.r_end is not None:
            if args.r_end <= 0:
                raise UsageError("--r-end must be positive")
            table = [dataclasses.replace(p, r_end=args.r_end) for p in table]
        tc = lab.TimeControl(nodes=args.nodes)
        if args.tc:
            tc.base, tc.inc, tc.moves = lab.parse_tc(args.tc)
        if not tc.clocked and not tc.nodes:
            tc.nodes = DEFAULT_NODES
        params = select(table, args.params, tc.clocked)
        schedule = Schedule(args.iterations, args.alpha, args.gamma, args.a_ratio)
        if args.show:
            print(show(params, schedule))
            return 0
        clash = [k for k in lab.parse_opts(args.engine_opt) if k.lower() in {p.name.lower() for p in params}]
        if clash:
            raise UsageError(f"--engine-opt sets tuned parameters: {', '.join(clash)}")
        if lab.chess is None:
            raise UsageError("python-chess is missing; run `make lab-venv` and use engine-tests/.venv/bin/python "
                             "(or `make spsa ARGS=...`)")
        if not os.path.isfile(args.openings):
            raise UsageError(f"--openings {args.openings}: no such file")
        openings = lab.load_openings(args.openings)
        if not openings:
            raise UsageError(f"--openings {args.openings}: no usable positions")
        check_options(spec, params)
        specs = {"engine": spec,
                 "opponent": lab.resolve_spec(args.engine, lab.parse_opts(args.engine_opt), "minus")}
        lab.validate_engines(specs)
    except (UsageError, lab.UsageError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2

    seed = args.seed
    if seed is None and os.path.exists(args.state):
        try:
            seed = load_state(args.state)["settings"]["seed"]
        except (UsageError, KeyError, TypeError):
            seed = None
    if seed is None:
        seed = random.SystemRandom().randrange(1 << 31)
    settings = {
        "engine": " ".join(spec.cmd),
        "iterations": args.iterations, "pairs_per_iter": args.pairs_per_iter,
        "alpha": args.alpha, "gamma": args.gamma, "a_ratio": args.a_ratio,
        "seed": seed, "limit": tc.describe(), "openings": args.openings,
        "concurrency": args.concurrency,
        "params": [dataclasses.asdict(p) for p in params],
    }
    csv_path = args.csv or _sibling(args.state, ".csv")
    svg_path = args.svg or _sibling(args.state, ".svg")
    margs = lab.build_parser().parse_args([])
    margs.event, margs.max_plies = "Qilin SPSA", args.max_plies
    cfg = lab.Config(margs, tc, lab.Adjudication(), specs)
    print(f"engine  : {settings['engine']}  {' '.join(f'{k}={v}' for k, v in (spec.applied or {}).items())}")
    print(f"tuning  : {len(params)} parameters, {args.iterations} iterations of {args.pairs_per_iter} pair(s), "
          f"{tc.describe()}, concurrency {min(args.concurrency, args.pairs_per_iter)}, seed {seed}")
    print(f"files   : {args.state}, {csv_path}, {svg_path}", flush=True)

    def _interrupt(signum, frame):  # SIGINT may be ignored when started in the background
        raise KeyboardInterrupt

    signal.signal(signal.SIGINT, _interrupt)
    signal.signal(signal.SIGTERM, _interrupt)
    pool = GamePool(cfg, openings, opening_order(len(openings), seed), args.pairs_per_iter,
                    args.concurrency, args.pgn, args.uci_log)
    rc = 0
    try:
        state = run(settings, args.state, csv_path, svg_path, pool.play, args.stop_after, args.svg_every,
                    log=lambda line: print(line, flush=True))
    except UsageError as exc:
        print(f"error: {exc}", file=sys.stderr)
        pool.close()
        return 2
    except KeyboardInterrupt:
        print("\ninterrupted: the iteration in flight is dropped; the same command resumes", file=sys.stderr)
        pool.abort()
        rc = 130
    except FatalError as exc:
        print(f"error: {exc}", file=sys.stderr)
        pool.abort()
        rc = 3
    pool.close()
    state = load_state(args.state)
    print(final_report(settings, state), flush=True)
    return rc


if __name__ == "__main__":
    sys.exit(main())
