"""The tests' truth against the simulators' truth: the Python reading of the
power-trace format (selab.trace, which selab.energy's true_energy() and
chord_error() use) against the C one (src/common/power_trace.c, through
se-trace, which every simulator plays).  Neither shares code with the
other, so a misreading of a trace in either fails here instead of passing
everywhere.

Random traces from a seeded RNG (rows, irregular times, steps, @repeat or
not, several columns, up to 5 kW) and random windows (inside, before the
first row, straddling period boundaries, thousands of periods long);
se-trace prints joules and watts with 3 decimals, so the two must agree to
1e-6 relative plus that rounding.  Then hand-computed cases, which both
must give, and malformed traces, which both must refuse.  No cluster:
needs only se-trace (SE_BIN_DIR, default _build/stage/bin).
"""
import math
import os
import random
import subprocess

import pytest

from selab import energy
from selab.capped import capped_joules
from selab.meters import tool
from selab.trace import Trace

SE_TRACE = tool("se-trace")
SEEDS = range(80)
WINDOWS = 30                # per trace
REL, ABS = 1e-6, 5e-4 + 1e-9    # se-trace prints %.3f


def c_trace(*args):
    out = subprocess.run([SE_TRACE] + [a if isinstance(a, str) else repr(a)
                                       for a in args],
                         capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    return out.stdout


def c_joules(path, col, t0, t1):
    return float(c_trace("joules", path, col, t0, t1))


def c_watts(path, col, t):
    return float(c_trace("watts", path, col, t))


def agree(py, c):
    return abs(py - c) <= REL * abs(c) + ABS


def fmt(rng, v):
    """A number as a trace may spell it (each one exact for both parsers)."""
    return rng.choice([repr(v), repr(v), "%.3f" % v, "%.6e" % v,
                       "%d" % round(v)])


def random_trace(rng, path):
    """Write a random valid trace; return (columns, period or None,
    row times as written)."""
    cols = ["n%d" % i for i in range(1, rng.randint(1, 4) + 1)]
    if rng.random() < 0.3:
        cols[-1] = "chassis"
    period = None
    n = rng.choice([1, 2, 3] + [rng.randint(4, 60)] * 4)
    if rng.random() < 0.5:
        period = float(fmt(rng, rng.uniform(0.5, 200))) or 1.0
        times = sorted(rng.uniform(0, period) for _ in range(n))
        if rng.random() < 0.5:
            times[0] = 0.0
        if rng.random() < 0.5:
            times[-1] = period
    else:
        t, times = rng.uniform(-100, 100), []
        for _ in range(n):
            times.append(t)
            t += rng.choice([rng.expovariate(0.2), rng.uniform(0, 1e-3),
                             rng.uniform(0, 1000)])
    lines = ["# random trace, %d rows" % n, ""]
    if period is not None:
        lines.append("@repeat\t%s   # the period" % repr(period))
    lines.append("time " + "\t".join(cols))
    written, last = [], None
    for t in times:
        t = float(fmt(rng, t))
        if period is not None:
            t = min(max(t, 0.0), period)
        if last is not None and t < last:
            t = last
        if written[-2:] == [t, t]:
            continue                # a third row at one time: an error
        reps = 2 if rng.random() < 0.15 and written[-1:] != [t] else 1
        for _ in range(reps):       # a step: two rows at one time
            watts = [rng.choice([rng.uniform(0, 5000), 0.0,
                                 float(rng.randint(0, 5000))])
                     for _ in cols]
            lines.append(repr(t) + " " + " ".join(fmt(rng, w)
                                                  for w in watts))
            if rng.random() < 0.1:
                lines[-1] += "  # a comment"
            written.append(t)
        last = t
    path.write_text("\n".join(lines) + "\n")
    return cols, period, written


@pytest.mark.parametrize("seed", range(20))
def test_random_capped_agrees_with_se_trace(seed, tmp_path):
    """min(P, cap) (the load-following meter's energy, issue #45): selab.
    capped against power_trace_joules_capped through se-trace capped, on
    the same random traces and windows (those up to 50 periods or spans
    long: the Python cuts every row), caps from under the lowest row to
    over the highest."""
    rng = random.Random(1000 + seed)
    path = tmp_path / ("c%d.trace" % seed)
    cols, period, times = random_trace(rng, path)
    tr = Trace(str(path))
    scale = period or max(times[-1] - times[0], 1.0)
    bad, checked = [], 0
    for a, b in random_windows(rng, period, times):
        if b - a > 50 * scale:
            continue
        col = rng.choice(cols)
        ws = tr.knots(col)[1]
        cap = round(rng.uniform(0.8 * min(ws), 1.1 * max(ws) + 1), 3)
        py = capped_joules(tr, col, a, b, [(a, cap)])
        c = float(c_trace("capped", str(path), col, a, b, cap))
        checked += 1
        if not agree(py, c):
            bad.append((col, a, b, cap, py, c))
    assert checked >= 10
    assert not bad, "selab.capped and se-trace capped disagree on " \
        "%s:\n%s\n%s" % (path, path.read_text(), "\n".join(map(repr, bad)))


def random_windows(rng, period, times):
    first, last = times[0], times[-1]
    span = max(last - first, 1.0)
    scale = period or span
    out = []
    for _ in range(WINDOWS):
        kind = rng.randrange(7)
        if kind == 0:               # inside the rows
            a, b = sorted(rng.uniform(first, last) for _ in range(2))
        elif kind == 1:             # before (and across) the first row
            a = first - rng.uniform(0, 3 * scale)
            b = a + rng.uniform(0, 4 * scale)
        elif kind == 2:             # straddling a period boundary (or last)
            k = rng.randint(-50, 50) if period else 0
            edge = k * period if period else last
            a = edge - rng.uniform(0, scale / 3)
            b = edge + rng.uniform(0, scale / 3)
        elif kind == 3:             # long: many periods
            a = rng.uniform(-10 * scale, 10 * scale)
            b = a + rng.uniform(100, 5000) * scale
        elif kind == 4:             # from or to a row time exactly
            a = rng.choice(times)
            b = a + rng.choice([0.0, rng.uniform(0, scale)])
        elif kind == 5:             # whole periods, exactly
            a = (period or scale) * rng.randint(-3, 3)
            b = a + (period or scale) * rng.randint(1, 7)
        else:                       # far out (a day of seconds on)
            a = rng.uniform(0, 1e5)
            b = a + rng.uniform(0, 300)
        out.append((a, b))
    return out


@pytest.mark.parametrize("seed", SEEDS)
def test_random_trace_agrees_with_se_trace(seed, tmp_path):
    rng = random.Random(seed)
    path = tmp_path / ("t%d.trace" % seed)
    cols, period, times = random_trace(rng, path)
    tr = Trace(str(path))
    assert c_trace("columns", str(path)).split() == cols
    assert (tr.period, tr.times) == (period, times)
    bad = []
    for a, b in random_windows(rng, period, times):
        col = rng.choice(cols)
        py, c = tr.joules(col, a, b), c_joules(str(path), col, a, b)
        if not agree(py, c):
            bad.append(("joules", col, a, b, py, c))
        t = rng.choice([a, b, rng.uniform(a, b)])
        py, c = tr.watts(col, t), c_watts(str(path), col, t)
        if not agree(py, c):
            bad.append(("watts", col, t, py, c))
    # an ulp either side of period boundaries, where folding t rounds
    for k in rng.sample(range(1, 10000), 5) if period else ():
        k *= rng.choice([-1, 1])
        for t in (math.nextafter(k * period, -math.inf), k * period,
                  math.nextafter(k * period, math.inf)):
            col = rng.choice(cols)
            py, c = tr.watts(col, t), c_watts(str(path), col, t)
            if not agree(py, c):
                bad.append(("watts", col, t, py, c))
    # the series chord_error samples, as se-trace series prints it
    a = rng.uniform(-100, 100)
    b, step = a + rng.uniform(0, 60), rng.choice([0.1, 0.25, 1.0])
    col = rng.choice(cols)
    c = [tuple(map(float, line.split())) for line in
         c_trace("series", str(path), col, a, b, step).splitlines()]
    py = tr.series(col, a, b, step)
    assert len(py) == len(c)
    for (tp, wp), (tc, wc) in zip(py, c):
        assert abs(tp - tc) <= 5e-7 + 1e-12 * abs(tc)
        if not agree(wp, wc):
            bad.append(("series", col, tp, wp, wc))
    assert not bad, "Python and se-trace disagree on %s:\n%s\n%s" % (
        path, path.read_text(), "\n".join(map(repr, bad)))


def write(tmp_path, text, name="hand.trace"):
    path = tmp_path / name
    path.write_text(text)
    return str(path)


# (trace, column, t0, t1, joules by hand)
HAND = [
    # constant 200 W: before, across and after its only row
    ("time a\n5 200\n", "a", -10, 50, 200 * 60),
    # a ramp 0 -> 100 W over 10 s, flat 0 W before and 100 W after
    ("time a\n0 0\n10 100\n", "a", 0, 10, 500),
    ("time a\n0 0\n10 100\n", "a", 0, 5, 125),
    ("time a\n0 0\n10 100\n", "a", -5, 15, 0 + 500 + 500),
    ("time a\n0 0\n10 100\n", "a", 2.5, 7.5, 5 * 50),
    # a square wave, 100 W then 300 W for 10 s each, period 20 s
    ("@repeat 20\ntime a\n0 100\n10 100\n10 300\n20 300\n", "a",
     5, 1005, 200000),
    ("@repeat 20\ntime a\n0 100\n10 100\n10 300\n20 300\n", "a",
     -15, 5, 100 * 5 + 300 * 10 + 100 * 5),
    ("@repeat 20\ntime a\n0 100\n10 100\n10 300\n20 300\n", "a",
     19, 21, 300 + 100),
    # a repeat whose rows leave [0, 2) and (8, 10] of the period: the first
    # row's value before it, the last's after it, 2000 J a period
    ("@repeat 10\ntime a b\n2 100 0\n8 300 0\n", "a", 0, 10, 200 + 1200 + 600),
    ("@repeat 10\ntime a b\n2 100 0\n8 300 0\n", "a", -10, 0, 2000),
    ("@repeat 10\ntime a b\n2 100 0\n8 300 0\n", "a", 9, 11, 300 + 100),
    ("@repeat 10\ntime a b\n2 100 0\n8 300 0\n", "a", 0, 1e5, 2e7),
    ("@repeat 10\ntime a b\n2 100 0\n8 300 0\n", "b", 0, 1e5, 0),
    # a step at the first row: the first row's (left) value before it
    ("time a\n0 50\n0 150\n10 150\n", "a", -1, 1, 50 + 150),
]


@pytest.mark.parametrize("i", range(len(HAND)))
def test_hand_computed_joules(i, tmp_path):
    text, col, t0, t1, want = HAND[i]
    path = write(tmp_path, text)
    assert Trace(path).joules(col, t0, t1) == pytest.approx(want, abs=1e-6)
    assert c_joules(path, col, t0, t1) == pytest.approx(want, abs=1e-3)


# (trace, column, t, watts by hand)
HAND_WATTS = [
    ("time a\n0 0\n10 100\n", "a", -3, 0),
    ("time a\n0 0\n10 100\n", "a", 2.5, 25),
    ("time a\n0 0\n10 100\n", "a", 1e6, 100),
    ("@repeat 20\ntime a\n0 100\n10 100\n10 300\n20 300\n", "a", 10, 300),
    ("@repeat 20\ntime a\n0 100\n10 100\n10 300\n20 300\n", "a", 40, 100),
    ("@repeat 20\ntime a\n0 100\n10 100\n10 300\n20 300\n", "a", -5, 300),
    ("@repeat 10\ntime a b\n2 100 0\n8 300 0\n", "a", 9.5, 300),
    ("@repeat 10\ntime a b\n2 100 0\n8 300 0\n", "a", 10, 100),
    ("@repeat 10\ntime a b\n2 100 0\n8 300 0\n", "a", 5, 200),
]


@pytest.mark.parametrize("i", range(len(HAND_WATTS)))
def test_hand_computed_watts(i, tmp_path):
    text, col, t, want = HAND_WATTS[i]
    path = write(tmp_path, text)
    assert Trace(path).watts(col, t) == pytest.approx(want, abs=1e-9)
    assert c_watts(path, col, t) == pytest.approx(want, abs=1e-3)


EXAMPLES = os.path.join(os.path.dirname(__file__), "..", "..", "contribs",
                        "trace", "examples")


@pytest.mark.parametrize("name,col,t0,t1,want", [      # FORMAT.md's table
    ("constant", "n1", 0, 60, 12000.0), ("square", "n1", 5, 1005, 200000.0),
    ("ramp", "n1", 0, 30, 5250.0), ("sine", "n1", 0, 60, 15000.0)])
def test_format_md_examples(name, col, t0, t1, want):
    path = os.path.join(EXAMPLES, name + ".trace")
    assert Trace(path).joules(col, t0, t1) == pytest.approx(want, abs=1e-6)
    assert c_joules(path, col, t0, t1) == pytest.approx(want, abs=1e-3)


def test_energy_truth_uses_wall_clock(tmp_path):
    """selab.energy: epoch shifts the window; chord_error of a ramp is 0
    and of a triangle its area above the chord."""
    path = write(tmp_path, "time a\n0 0\n10 100\n20 0\n")
    epoch = 1.7e9
    assert energy.trace_joules(path, "a", epoch, epoch, epoch + 20) == \
        pytest.approx(1000, abs=1e-3)
    assert energy.true_energy(path, epoch, {"a": (epoch, epoch + 10)},
                              share_of={"a": 0.5}) == \
        pytest.approx(250, abs=1e-3)
    assert energy.chord_error(path, "a", epoch, epoch, epoch + 10) == \
        pytest.approx(0, abs=1e-3)
    assert energy.chord_error(path, "a", epoch, epoch, epoch + 20,
                              step=0.01) == pytest.approx(1000, rel=1e-2)
    with pytest.raises(ValueError):
        energy.trace_joules(path, "a", epoch, epoch + 2, epoch + 1)


@pytest.mark.parametrize("text", [
    "time a\n0 1\n0 2\n0 3\n",                  # a time three times
    "time a\n5 1\n4 1\n",                       # time goes back
    "@repeat 10\ntime a\n0 1\n11 1\n",          # row outside the period
    "@repeat 0\ntime a\n0 1\n",                 # period not > 0
    "time a\n@repeat 10\n0 1\n",                # @repeat after the header
    "@repeat 10\n@repeat 10\ntime a\n0 1\n",    # @repeat twice
    "@tick 10\ntime a\n0 1\n",                  # unknown directive
    "time a\n0 -1\n",                           # negative watts
    "time a\n0 nan\n",                          # not finite
    "time a\n0 abc\n",                          # not a number
    "time a b\n0 1\n",                          # too few values
    "time a\n0 1 2\n",                          # too many values
    "time a a\n0 1 1\n",                        # a column named twice
    "0 1\n",                                    # no header
    "time\n0\n",                                # no column
    "time a\n",                                 # no row
])
def test_both_refuse_malformed(text, tmp_path):
    path = write(tmp_path, text, "bad.trace")
    with pytest.raises(ValueError, match="bad.trace"):
        Trace(path)
    out = subprocess.run([SE_TRACE, "joules", path, "a", "0", "1"],
                         capture_output=True, text=True)
    assert out.returncode == 2 and "bad.trace" in out.stderr, out
