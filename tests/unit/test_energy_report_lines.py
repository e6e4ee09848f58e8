#!/usr/bin/python3
"""test_energy_report_lines.py - slurm-energy-report on damaged input, a
property test (hypothesis): valid sacct lines, some of them cut, with
fields swapped, bytes put in or huge numbers, with or without sacct's
header.  Whatever the damage:

  - no traceback: the tool returns an exit status;
  - every line is a job of the period, a job that ended outside it, one
    that never started or has not ended, a line counted as bad, or an
    ignored one (blank, the header again), as a model of the man page's
    rule ("Lines that cannot be read") classes it, and the counts add up;
  - the good lines' sums are exact: per account and in total, energy to
    the joule, jobs, jobs without energy, node- and GPU-seconds, and the
    power cap records of AdminComment (issue #45): jobs capped, capped
    job-seconds, the share of the jobs' ElapsedRaw, the lowest cap; in
    files of the 14 fields and in older ones without AdminComment;
  - the first five bad lines are quoted with their line numbers in the
    file; without --accept-bad-lines the exit status is 3 and nothing is
    written.

The tariff, intensity and attribution-map files get the same: mutated
lines, no traceback, each line used or counted as bad.

The tool is loaded into this process (its main(), a few ms a run), with
TZ=UTC.  Derandomized (a fixed sequence of examples, no example database
written), about 5 s.  Run by make check, or alone:
python3 tests/unit/test_energy_report_lines.py (exit 0 when every property
holds; hypothesis prints the smallest failing input otherwise).
"""
import calendar
import contextlib
import datetime
import importlib.machinery
import importlib.util
import io
import json
import os
import re
import sys
import tempfile
import time

try:
    from hypothesis import HealthCheck, given, settings
    from hypothesis import strategies as st
except ImportError:
    sys.stderr.write("test_energy_report_lines.py needs hypothesis: "
                     "apt-get install python3-hypothesis "
                     "(contribs/install-deps.sh installs it)\n")
    sys.exit(1)

HERE = os.path.dirname(os.path.abspath(__file__))
TOP = os.path.abspath(os.path.join(HERE, "..", ".."))
TOOL = os.environ.get("SE_REPORT_TOOL") or \
    os.path.join(TOP, "contribs", "report", "slurm-energy-report")
TMP = tempfile.mkdtemp(prefix="se-report-lines-")

os.environ["TZ"] = "UTC"
time.tzset()
sys.dont_write_bytecode = True  # no __pycache__ beside the tool
_loader = importlib.machinery.SourceFileLoader("se_report", TOOL)
_spec = importlib.util.spec_from_loader("se_report", _loader)
tool = importlib.util.module_from_spec(_spec)
_loader.exec_module(tool)

FIELDS = ["JobID", "User", "Account", "Partition", "QOS", "NodeList",
          "NNodes", "Start", "End", "ElapsedRaw", "ConsumedEnergyRaw",
          "AllocTRES", "State", "AdminComment"]
# files saved before the report read AdminComment
OLD_FIELDS = FIELDS[:-1]
# the period of the runs: the jobs end from T0 to T0 + 40 days, the period
# is the middle 20 days, so that some lines end outside it
T0 = 1790000000
PERIOD = (T0 + 10 * 86400, T0 + 30 * 86400)
SETTINGS = settings(max_examples=int(os.environ.get("SE_EXAMPLES", "150")),
                    deadline=None, derandomize=True, database=None,
                    suppress_health_check=[HealthCheck.too_slow,
                                           HealthCheck.data_too_large])


def run_tool(*args):
    """(exit status, stdout, stderr) of the tool's main(); any exception
    but SystemExit goes up: a traceback fails the property."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        rc = tool.main(list(args))
    return rc, out.getvalue(), err.getvalue()


def write_bytes(name, data):
    path = os.path.join(TMP, name)
    with open(path, "wb") as h:
        h.write(data)
    return path


# ------------------------------------------------------------ valid lines
def iso(t):
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(t))


CAP_WORD = "powercap=capped:%ds,min:%dW"
SITE_WORDS = ["energy_key=ann/app", "ticket#7", "note:powercap=x",
              "xpowercap=capped:5s,min:1W", "\tpowercap=capped:5s,min:1W"]


@st.composite
def admin_comment(draw):
    """An AdminComment as sites and slurm-energy-powercapd write it: the
    site's words, perhaps the daemon's powercap= word among them."""
    words = draw(st.lists(st.sampled_from(SITE_WORDS), max_size=2))
    if draw(st.booleans()):
        word = CAP_WORD % (draw(st.integers(0, 3 * 86400)),
                           draw(st.integers(0, 1000)))
        words.insert(draw(st.integers(0, len(words))), word)
    return " ".join(words)


@st.composite
def job_fields(draw, jobid):
    """The 14 fields of a valid job line (one of sacct's)."""
    start = T0 + draw(st.integers(0, 40 * 86400))
    el = draw(st.integers(0, 3 * 86400))
    kind = draw(st.sampled_from(["ended", "ended", "ended", "ended",
                                 "never", "running"]))
    as_iso = draw(st.booleans())
    when = (lambda t: iso(t)) if as_iso else str
    s_field, e_field = when(start), when(start + el)
    if kind == "never":
        s_field, e_field, el = "Unknown", draw(st.sampled_from(
            ["Unknown", when(start)])), 0
    elif kind == "running":
        e_field = draw(st.sampled_from(["Unknown", "None", ""]))
    energy = draw(st.one_of(st.just(""), st.just("0"),
                            st.integers(1, (1 << 62) - 1).map(str),
                            st.integers(1, 10 ** 9).map(str)))
    nn = draw(st.integers(0, 64))
    tres = ["billing=%d" % nn, "cpu=%d" % (nn * 8)]
    if draw(st.booleans()):
        g = draw(st.integers(0, 8))
        tres += ["gres/gpu=%d" % g, "gres/gpu:a100=%d" % g]
    tres.append("node=%d" % nn)
    return [str(jobid), draw(st.sampled_from(["ann", "bob", "cy"])),
            draw(st.sampled_from(["phys", "chem", "geo"])),
            draw(st.sampled_from(["cpu", "gpu"])), "normal",
            "n[01-%02d]" % max(nn, 1) if nn else "None assigned", str(nn),
            s_field, e_field, str(el), energy, ",".join(tres),
            draw(st.sampled_from(["COMPLETED", "FAILED", "CANCELLED by 0"])),
            draw(admin_comment())]


# --------------------------------------------------------------- damage
HUGE = ["-1", "-5", str(1 << 32), str((1 << 32) - 1), str(1 << 62),
        str((1 << 62) - 1), str(1 << 64), "9" * 30, "1e9", "0x10",
        "4102444800", "946684799", "00000000001791000000"]
JUNK = st.binary(min_size=1, max_size=6).filter(lambda b: b"\n" not in b)


CAP_DAMAGE = ["12m", "-5", "", "x", "1.5", "\u0665", "4294967296",
              "12345678901", "0004294967295"]


def damaged_cap(draw, comment):
    """comment with its powercap= word damaged (one put in if it has
    none): a number replaced, a letter or separator changed, the word
    cut, doubled or split, a '|' in it."""
    words = comment.split(" ") if comment else []
    at = [i for i, w in enumerate(words) if w.startswith("powercap=")]
    if not at:
        words.append(CAP_WORD % (5, 280))
        at = [len(words) - 1]
    w = words[at[0]]
    how = draw(st.sampled_from(["number", "letter", "cut", "twice",
                                "split", "pipe", "blank"]))
    if how == "number":
        parts = re.split(r"([0-9]+)", w, maxsplit=2)
        k = draw(st.sampled_from([1, 3]))
        parts[k] = draw(st.sampled_from(CAP_DAMAGE + HUGE))
        w = "".join(parts)
    elif how == "letter":
        i = draw(st.integers(9, len(w) - 1))
        w = w[:i] + draw(st.sampled_from("swW:,;=0 ")) + w[i + 1:]
    elif how == "cut":
        w = w[:draw(st.integers(9, len(w) - 1))]
    elif how == "twice":
        w = w + " " + CAP_WORD % (draw(st.integers(0, 99)), 100)
    elif how == "split":
        w = w.replace(",", draw(st.sampled_from([" ", ", ", "\t,"])))
    elif how == "pipe":
        w = w.replace(",", "|")
    else:
        w = " " + w + draw(st.sampled_from(["", " ", "  x"]))
    words[at[0]] = w
    return " ".join(words)


@st.composite
def damaged(draw, fields, numbers=None, tres=None, comment=None):
    """A line's bytes ('|' between fields), perhaps damaged; numbers: the
    fields a huge number may replace (default: any); tres: the field of
    KEY=VALUE items whose values may be damaged (default: any); comment:
    the AdminComment field whose powercap= word may be damaged (None:
    none)."""
    f = list(fields)
    last = len(f) - 1
    how = draw(st.sampled_from(["none", "none", "cut", "swap", "bytes",
                                "huge", "empty", "drop", "dup", "quote",
                                "value"] +
                               (["cap", "cap"] if comment is not None
                                else [])))
    if how == "cap":
        f[comment] = damaged_cap(draw, f[comment])
    if how == "swap":
        i, j = draw(st.integers(0, last)), draw(st.integers(0, last))
        f[i], f[j] = f[j], f[i]
    elif how == "huge":
        f[draw(st.sampled_from(numbers or range(len(f))))] = draw(
            st.sampled_from(HUGE))
    elif how == "empty":
        f[draw(st.integers(0, last))] = ""
    elif how == "drop":
        del f[draw(st.integers(0, last))]
    elif how == "dup":
        i = draw(st.integers(0, last))
        f.insert(i, f[i])
    elif how == "quote":
        i = draw(st.integers(0, last))
        f[i] = draw(st.sampled_from(['"', "'", "x", " "])) + f[i]
    elif how == "value":
        i = draw(st.integers(0, last)) if tres is None else tres
        items = f[i].split(",")
        k = draw(st.integers(0, len(items) - 1))
        items[k] = items[k].split("=")[0] + "=" + draw(
            st.sampled_from(HUGE + ["x", "", "1.5", "2x"]))
        f[i] = ",".join(items)
    data = "|".join(f).encode()
    if how == "cut":
        data = data[:draw(st.integers(0, len(data)))]
    elif how == "bytes":
        at = draw(st.integers(0, len(data)))
        junk = draw(JUNK)
        data = data[:at] + junk + data[at + draw(st.integers(0, 3)):]
    return data


@st.composite
def sacct_file(draw):
    """(file bytes, header columns or None); a third of the files in the
    older form without AdminComment."""
    n = draw(st.integers(1, 25))
    old = draw(st.integers(0, 2)) == 0
    names = OLD_FIELDS if old else FIELDS
    cols = None
    if draw(st.booleans()):
        cols = list(names)
        if draw(st.booleans()):
            cols = draw(st.permutations(names))
    order = cols if cols is not None else names
    lines = []
    for i in range(n):
        fields = draw(job_fields(1000 + i))
        fields = [fields[FIELDS.index(c)] for c in order]
        numbers = [order.index(x) for x in ("NNodes", "Start", "End",
                                            "ElapsedRaw",
                                            "ConsumedEnergyRaw")]
        lines.append(draw(damaged(
            fields, numbers, order.index("AllocTRES"),
            order.index("AdminComment") if not old else None)))
    if draw(st.integers(0, 5)) == 0:
        lines.insert(draw(st.integers(0, len(lines))), b"")
    head = [] if cols is None else ["|".join(cols).encode()]
    if cols is not None and draw(st.integers(0, 5)) == 0:
        lines.insert(draw(st.integers(0, len(lines))), head[0])
    text = b"\n".join(head + lines) + (b"\n" if draw(st.booleans()) else b"")
    return text, cols


# ------------------------------------------------------------------ model
# The man page's rule, written out again here (not the tool's code).
WHOLE = re.compile(r"[0-9]+\Z")
LOCAL = re.compile(r"([0-9]{4})-([0-9]{2})-([0-9]{2})T([0-9]{2}):([0-9]{2}):"
                   r"([0-9]{2})\Z")


class Bad(Exception):
    pass


def m_time(s):
    if s in ("Unknown", "None", ""):
        return None
    if WHOLE.match(s):
        t = int(s)
    else:
        m = LOCAL.match(s)
        if not m:
            raise Bad
        try:
            t = calendar.timegm(datetime.datetime(
                *(int(x) for x in m.groups())).timetuple())  # TZ=UTC
        except ValueError:
            raise Bad
    if not 946684800 <= t < 4102444800:
        raise Bad
    return t


def m_count(s, empty_ok=True):
    if s == "" and empty_ok:
        return 0
    if not WHOLE.match(s) or int(s) >= 1 << 32:
        raise Bad
    return int(s)


def m_energy(s):
    if s == "":
        return 0
    if not WHOLE.match(s) or int(s) >= 1 << 62:
        raise Bad
    return int(s)


CAP_RE = re.compile(r"powercap=capped:([0-9]+)s,min:([0-9]+)W\Z")


def m_cap(comment):
    """(seconds, W) of the comment's powercap= word (a blank-separated
    word starting with it), None without one; Bad for one not exactly the
    daemon's form, numbers of more than 10 digits or 2^32 or more, or
    two words."""
    words = [w for w in comment.split(" ") if w.startswith("powercap=")]
    if not words:
        return None
    m = CAP_RE.match(words[0])
    if len(words) > 1 or not m or len(m.group(1)) > 10 or \
            len(m.group(2)) > 10:
        raise Bad
    secs, watts = int(m.group(1)), int(m.group(2))
    if secs >= 1 << 32 or watts >= 1 << 32:
        raise Bad
    return secs, watts


def m_gpus(tres):
    for item in tres.split(","):
        if item.startswith("gres/gpu="):
            return m_count(item[9:], empty_ok=False)
    return 0


def model(data, cols):
    """What the report must say of the file: counts, sums, bad lines."""
    text = data.decode("utf-8", "replace")
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()  # the file's last newline ends a line, starts none
    r = {"read": 0, "outside": 0, "unfinished": 0, "ignored": 0,
         "bad": [], "jobs": 0, "noe": 0, "ej": 0, "node_s": 0, "gpu_s": 0,
         "by_account": {}, "caps": {}}
    first = 1
    header = None
    # without a header: the first line that is not blank has 13 fields
    # (an older file) or the file has 14
    seen = [x.rstrip("\r") for x in lines if x.rstrip("\r").strip()]
    ncols = 13 if seen and len(seen[0].split("|")) == 13 else 14
    names = FIELDS if ncols == 14 else OLD_FIELDS
    if cols is not None:
        header, ncols, first, names = lines[0], len(cols), 2, cols
        lines = lines[1:]
    for n, line in enumerate(lines, first):
        r["read"] += 1
        line = line.rstrip("\r")
        if not line.strip() or line == header:
            r["ignored"] += 1
            continue
        f = line.split("|")
        try:
            if len(f) != ncols:
                raise Bad
            f = [f[names.index(x)] if x in names else "" for x in FIELDS]
            if f[0] == "":
                raise Bad
            start, end = m_time(f[7]), m_time(f[8])
            nn, el = m_count(f[6]), m_count(f[9])
            ej, gpus = m_energy(f[10]), m_gpus(f[11])
            cap = m_cap(f[13])
        except Bad:
            r["bad"].append(n)
            continue
        if start is None or end is None:
            r["unfinished"] += 1
        elif not PERIOD[0] <= end < PERIOD[1]:
            r["outside"] += 1
        else:
            r["jobs"] += 1
            r["noe"] += ej == 0
            r["ej"] += ej
            r["node_s"] += nn * el
            r["gpu_s"] += gpus * el
            r["by_account"][f[2]] = r["by_account"].get(f[2], 0) + ej
            for g in (f[2], None):  # the account, the total
                c = r["caps"].setdefault(g, [0, 0, None, 0])
                c[3] += el
                if cap is not None:
                    c[0] += 1
                    c[1] += cap[0]
                    c[2] = cap[1] if c[2] is None else min(c[2], cap[1])
    return r


def caps_of(row):
    return [row["capped_jobs"], row["capped_job_s"], row["min_cap_w"]]


def want_caps(c):
    """A model's [jobs, seconds, lowest W, run s] as the report's row has
    them, and the share."""
    return c[:3], (100.0 * c[1] / c[3] if c[3] else None)


# ------------------------------------------------------------- properties
PERIOD_ARGS = ["--start", str(PERIOD[0]), "--end", str(PERIOD[1])]


@SETTINGS
@given(sacct_file())
def test_sacct_lines(case):
    data, cols = case
    path = write_bytes("jobs.txt", data)
    want = model(data, cols)
    rc, out, err = run_tool("--sacct-file", path, *PERIOD_ARGS, "--json",
                            "--by", "account", "--price", "0.25",
                            "--accept-bad-lines")
    assert rc == 0, (rc, err)
    doc = json.loads(out)
    t = doc["total"]
    got_lines = [int(q.split(":")[1]) for q in doc["bad_lines"]]
    assert got_lines == want["bad"][:5], (got_lines, want["bad"], err)
    assert doc["lines_bad"] == len(want["bad"])
    assert doc["lines_read"] == want["read"]
    assert doc["lines_outside_period"] == want["outside"]
    assert doc["jobs_not_started_or_not_ended"] == want["unfinished"]
    assert doc["lines_ignored"] == want["ignored"]
    assert t["jobs"] + doc["lines_outside_period"] + \
        doc["jobs_not_started_or_not_ended"] + doc["lines_bad"] + \
        doc["lines_ignored"] == doc["lines_read"]
    assert t["jobs"] == want["jobs"]
    assert t["jobs_without_energy"] == want["noe"]
    assert t["energy_j"] == want["ej"]
    assert t["node_hours"] == want["node_s"] / 3600.0
    assert t["gpu_hours"] == want["gpu_s"] / 3600.0
    got = {r["group"]: r["energy_j"] for r in doc["by"]["account"]}
    assert got == want["by_account"], (got, want["by_account"])
    rows = {r["group"]: r for r in doc["by"]["account"]}
    rows[None] = t
    for g, c in want["caps"].items():
        three, share = want_caps(c)
        assert caps_of(rows[g]) == three, (g, caps_of(rows[g]), c)
        assert rows[g]["capped_pct"] == share, (g, rows[g], c)
    if not want["caps"]:
        assert caps_of(t) == [0, 0, None] and t["capped_pct"] is None
    assert abs(t["cost"] - want["ej"] / 3.6e6 * 0.25) <= \
        1e-9 * max(t["cost"], 1.0)
    rc, out, err = run_tool("--sacct-file", path, *PERIOD_ARGS, "--json")
    if want["bad"]:
        assert rc == 3 and out == "", (rc, err)
        assert "%s:%d: " % (path, want["bad"][0]) in err
        assert "%d line" % len(want["bad"]) in err
    else:
        assert rc == 0, (rc, err)


# the small files: timestamp,value series, weekly tariffs, attribution maps
SERIES = ["timestamp,g_per_kwh"] + \
    ["%s,%d" % (iso(T0 + 3600 * k) + "Z", 100 + k) for k in range(8)]
WEEKLY = ["weekdays,start,end,price", "mon-fri,07:00,22:00,0.30",
          "mon-thu,22:00,07:00,0.10", "fri,22:00,24:00,0.10",
          "sat+sun,00:00,24:00,0.05", "mon,00:00,07:00,0.10"]
AMAP = ["# nodes", "n[01-04] node", "n[05-64],g[1-2] share", "g3 node"]


@st.composite
def small_file(draw, lines):
    out = []
    for line in lines:
        out.append(draw(damaged(line.split(","))).replace(b"|", b","))
    return b"\n".join(out) + b"\n"


def data_lines(data):
    """The numbers of the lines that are neither blank nor comments, the
    first of them left out if it has no digit (the header)."""
    nums = []
    for n, line in enumerate(data.decode("utf-8", "replace").split("\n"),
                             1):
        s = line.strip()
        if s and not s.startswith("#"):
            nums.append((n, s))
    if nums and not any(c.isdigit() for c in nums[0][1]):
        nums = nums[1:]
    return [n for n, _ in nums]


@SETTINGS
@given(small_file(SERIES))
def test_intensity_lines(data):
    path = write_bytes("grid.csv", data)
    rc, out, err = run_tool("--sacct-file", write_bytes("none.txt", b""),
                            "--intensity-file", path, "--json",
                            "--accept-bad-lines")
    assert rc in (0, 2), (rc, err)
    if rc == 0:
        doc = json.loads(out)
        steps = int(re.search(r"\((\d+) steps", doc["intensity"]).group(1))
        nbad = doc["bad_line_counts"].get(path, 0)
        assert steps + nbad == len(data_lines(data)), (doc, data)
        assert [int(q.split(":")[1]) for q in doc["bad_lines"]] == \
            sorted(int(q.split(":")[1]) for q in doc["bad_lines"])
    else:
        assert re.search(r"grid\.csv(:\d+)?: ", err), err
    rc, out, err = run_tool("--sacct-file", write_bytes("none.txt", b""),
                            "--intensity-file", path, "--json")
    assert rc in (0, 2, 3), (rc, err)


@SETTINGS
@given(small_file(WEEKLY), small_file([x.replace(" ", ",") for x in AMAP]))
def test_tariff_and_map_lines(tariff, amap):
    amap = amap.replace(b",", b" ")
    tpath, mpath = write_bytes("t.csv", tariff), write_bytes("a.map", amap)
    jobs = write_bytes("j.txt", b"1|a|b|c|d|n[01-02]|2|1791000000|"
                       b"1791003600|3600|7200000|node=2|COMPLETED\n")
    for extra in (["--accept-bad-lines"], []):
        rc, out, err = run_tool("--sacct-file", jobs, "--tariff", tpath,
                                "--attribution-map", mpath, "--json", *extra)
        assert rc in (0, 2, 3), (rc, err)
        if rc == 3:
            assert re.search(r"(t\.csv|a\.map):\d+: ", err), err
            assert not extra
        if rc == 0:
            doc = json.loads(out)
            assert doc["total"]["energy_j"] == 7200000


def main():
    failed = 0
    for test in (test_sacct_lines, test_intensity_lines,
                 test_tariff_and_map_lines):
        t0 = time.monotonic()
        try:
            test()
            print("ok   %s (%.1f s)" % (test.__name__,
                                        time.monotonic() - t0))
        except Exception:
            failed += 1
            import traceback
            traceback.print_exc()
            print("FAIL %s" % test.__name__)
    print("%d failed" % failed)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
