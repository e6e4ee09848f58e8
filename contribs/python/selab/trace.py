"""The power-trace format (contribs/trace/FORMAT.md), read in Python.

A second implementation of the trace semantics, written from FORMAT.md and
sharing no code with src/common/power_trace.c (which the simulators play
through se-trace): the tests' truth comes from here, and
tests/integration/test_trace_truth.py holds the two to each other.

    tr = Trace("square.trace")
    tr.watts("n1", 12.5); tr.joules("n1", 5, 1005); tr.series("n1", 0, 60, 1)
"""
import bisect
import math
import re

NUMBER = re.compile(r"[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$")
FIELD = re.compile(r"[^ \t\r\n]+")     # fields: between spaces or tabs
MAX_S, MAX_W = 1e9, 1e7     # power_trace.h's bounds (FORMAT.md has none)


class Trace:
    def __init__(self, path):
        self.path, self.period, self.columns = path, None, None
        self.times, self.rows = [], []
        with open(path, encoding="utf-8") as f:
            for line, text in enumerate(f, 1):
                self._line(FIELD.findall(text.split("#", 1)[0]), line)
        if self.columns is None or not self.rows:
            raise ValueError("%s: no header and rows" % path)

    def _line(self, fields, line):
        def bad(what):
            raise ValueError("%s:%d: %s" % (self.path, line, what))

        def number(s, what):
            if not NUMBER.match(s) or not math.isfinite(float(s)):
                bad("%s: %r is not a number" % (what, s))
            return float(s)

        if not fields:
            return
        if fields[0] == "@repeat":
            if self.period is not None or self.columns is not None or \
                    len(fields) != 2:
                bad("expected '@repeat SECONDS' once, before the header")
            self.period = number(fields[1], "@repeat")
            if not 0 < self.period <= MAX_S:
                bad("@repeat needs a period in (0, %g]" % MAX_S)
        elif fields[0].startswith("@"):
            bad("unknown directive %r" % " ".join(fields))
        elif self.columns is None:
            if fields[0] != "time" or len(fields) < 2 or \
                    len(set(fields[1:])) != len(fields) - 1:
                bad('expected a header: "time" then unique column names')
            self.columns = {name: i for i, name in enumerate(fields[1:])}
        else:
            if len(fields) != len(self.columns) + 1:
                bad("expected %d watt values after the time, got %d"
                    % (len(self.columns), len(fields) - 1))
            t = number(fields[0], "time")
            watts = [number(w, "watts") for w in fields[1:]]
            if abs(t) > MAX_S or any(not 0 <= w <= MAX_W for w in watts):
                bad("time or watts out of bounds")
            if self.times and t < self.times[-1]:
                bad("time %r goes back" % fields[0])
            if self.times[-2:] == [t, t]:
                bad("time %r given three times" % fields[0])
            if self.period is not None and not 0 <= t <= self.period:
                bad("time %r outside the period" % fields[0])
            self.times.append(t)
            self.rows.append(watts)

    def knots(self, column):
        """(times, watts) of a column's rows, in file order (steps are two
        rows at one time)."""
        if column not in self.columns:
            raise ValueError("%s: no column %r (columns: %s)"
                             % (self.path, column, " ".join(self.columns)))
        col = self.columns[column]
        return self.times, [row[col] for row in self.rows]

    def _fold(self, t):
        """(whole periods before t, t within its period) or (0, t)."""
        if self.period is None:
            return 0, t
        k = math.floor(t / self.period)
        return k, min(max(t - k * self.period, 0.0), self.period)

    def watts(self, column, t):
        """Power at trace time t: linear between rows, flat before the
        first and after the last, the right-hand value at a step."""
        ts, ws = self.knots(column)
        u = self._fold(t)[1]    # P only for a t an ulp before a period
        i = bisect.bisect_right(ts, u) - 1  # the last row at or before u
        if i < 0:
            return ws[0]
        if i == len(ts) - 1:
            return ws[i]
        return ws[i] + (ws[i + 1] - ws[i]) * (u - ts[i]) / (ts[i + 1] - ts[i])

    def _integral(self, ts, ws, a, b):
        """Exact integral of the unfolded function over [a, b], a <= b."""
        pieces = [(-math.inf, ws[0], ts[0], ws[0])]
        pieces += [(ts[i], ws[i], ts[i + 1], ws[i + 1])
                   for i in range(len(ts) - 1) if ts[i + 1] > ts[i]]
        pieces.append((ts[-1], ws[-1], math.inf, ws[-1]))
        total = 0.0
        for ta, wa, tb, wb in pieces:
            x, y = max(a, ta), min(b, tb)
            if y <= x:
                continue
            if math.isinf(ta) or math.isinf(tb):
                total += wa * (y - x)       # flat piece
            else:
                slope = (wb - wa) / (tb - ta)
                total += (y - x) * (wa + slope * ((x + y) / 2 - ta))
        return total

    def joules(self, column, t0, t1):
        """Exact energy over [t0, t1] (negative if t1 < t0)."""
        if t1 < t0:
            return -self.joules(column, t1, t0)
        ts, ws = self.knots(column)
        (k0, u0), (k1, u1) = self._fold(t0), self._fold(t1)
        if self.period is None:
            return self._integral(ts, ws, u0, u1)
        whole = self._integral(ts, ws, 0.0, self.period)
        return ((k1 - k0) * whole + self._integral(ts, ws, 0.0, u1)
                - self._integral(ts, ws, 0.0, u0))

    def series(self, column, t0, t1, step):
        """[(t, watts)] from t0 every step up to t1 (as se-trace series)."""
        if not step > 0 or t1 < t0:
            raise ValueError("series needs t0 <= t1 and step > 0")
        return [(t0 + i * step, self.watts(column, t0 + i * step))
                for i in range(int((t1 - t0) / step) + 1)]
