"""The truth of a load-following meter: energy of min(demand, cap).

A node's demand is a trace column (selab.trace), its cap a history of
changes [(trace_time, watts)] as the meter logged them (se-modbus-sim
--cap-log: "UNIT TRACE_TIME CAP_W" lines); before the first change the
first cap holds.  The power is min(demand(t), cap(t)).

Written apart from src/common/power_trace.c's power_trace_joules_capped
(the meter's): here the interval is cut at every row time, every cap
change and every point where the demand's line crosses the cap, so that
min(demand, cap) is linear on each piece, and each piece's integral is
its length times its value at the midpoint (exact for a line).
"""
import math


def read_cap_log(path, unit):
    """[(trace_time, cap_w)] of one unit from a cap log: se-modbus-sim
    --cap-log names a unit by its id, bmc-sim and the Redfish simulator by
    their trace column; "inf" is no cap."""
    history = []
    with open(path, encoding="utf-8") as f:
        for line in f:
            fields = line.split()
            if len(fields) == 3 and fields[0] == str(unit):
                history.append((float(fields[1]), float(fields[2])))
    if not history:
        raise ValueError("%s: no cap of unit %s" % (path, unit))
    return history


def cap_at(history, t):
    """The cap in force at trace time t (a change counts from its time)."""
    cap = history[0][1]
    for when, watts in history:
        if when > t:
            break
        cap = watts
    return cap


def _row_times(trace, t0, t1):
    """The trace's row times inside (t0, t1), unfolded over periods."""
    times = trace.times
    if trace.period is None:
        return [t for t in times if t0 < t < t1]
    out = []
    k = math.floor(t0 / trace.period)
    while k * trace.period < t1:
        base = k * trace.period
        out += [base + t for t in times + [trace.period] if t0 < base + t < t1]
        k += 1
    return out


def _line_joules(trace, column, a, b, cap):
    """Integral of min(demand, cap) over [a, b], no row time inside: the
    demand is one line there, read off two interior points (at a step the
    right-hand value would be wrong at a, the left-hand one at b)."""
    if b <= a:
        return 0.0
    xa, xb = a + (b - a) / 4, a + 3 * (b - a) / 4
    wa, wb = trace.watts(column, xa), trace.watts(column, xb)
    slope = (wb - wa) / (xb - xa)
    cuts = [a, b]
    if slope:
        cross = xa + (cap - wa) / slope
        if a < cross < b:
            cuts = [a, cross, b]
    total = 0.0
    for x, y in zip(cuts, cuts[1:]):
        mid = (x + y) / 2
        total += (y - x) * min(wa + slope * (mid - xa), cap)
    return total


def capped_joules(trace, column, t0, t1, history):
    """Exact energy of min(demand, cap) over [t0, t1], t0 <= t1."""
    cuts = sorted({t0, t1, *_row_times(trace, t0, t1),
                   *(t for t, _ in history if t0 < t < t1)})
    return sum(_line_joules(trace, column, a, b, cap_at(history, (a + b) / 2))
               for a, b in zip(cuts, cuts[1:]))


def capped_watts(trace, column, t, history):
    return min(trace.watts(column, t), cap_at(history, t))


def played_capped_joules(trace, pieces, t0, t1, history):
    """Exact energy over [t0, t1] of a GPU of the fake NVML that follows
    its limits: it plays pieces [(from trace time, column)] (the first
    from -inf; the col switches of its control file after it, in time
    order) under the cap history of its cap log."""
    total = 0.0
    for i, (start, column) in enumerate(pieces):
        end = pieces[i + 1][0] if i + 1 < len(pieces) else math.inf
        a, b = max(t0, start), min(t1, end)
        if b > a:
            total += capped_joules(trace, column, a, b, history)
    return total
