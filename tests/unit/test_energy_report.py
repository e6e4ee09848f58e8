#!/usr/bin/python3
"""test_energy_report.py - slurm-energy-report (contribs/report) on
hand-computed cases, without a cluster: a saved sacct file and a fake
sacct.  Run by make check, or alone: python3 tests/unit/test_energy_report.py
(exit 0 when every check passes, 1 otherwise; no check is skipped).

The tool is run as installed (its #!/usr/bin/python3) with TZ=UTC, except
the summer-time case (Europe/Paris).
"""
import calendar
import csv
import glob
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
# the tool beside this test in the source tree (make check runs the test
# from there, in VPATH builds too)
TOP = os.path.abspath(os.path.join(HERE, "..", ".."))
# SE_REPORT_TOOL: another copy of the tool (to show a test fails on an
# older one)
TOOL = os.environ.get("SE_REPORT_TOOL") or \
    os.path.join(TOP, "contribs", "report", "slurm-energy-report")
FAILS = []
TMP = tempfile.mkdtemp(prefix="se-report-test-")


def check(cond, what):
    print("%s: %s" % ("ok  " if cond else "FAIL", what))
    if not cond:
        FAILS.append(what)


def close(a, b, what, rel=1e-9):
    ok = a is not None and abs(a - b) <= rel * max(abs(b), 1e-300)
    check(ok, "%s = %r (expected %r)" % (what, a, b))


def write(name, text):
    path = os.path.join(TMP, name)
    with open(path, "w") as h:
        h.write(text)
    return path


def run(*args, tz="UTC"):
    env = dict(os.environ, TZ=tz)
    try:
        p = subprocess.run([TOOL] + list(args), capture_output=True,
                           text=True, env=env, timeout=120)
    except subprocess.TimeoutExpired:
        return 124, "", "timed out after 120 s"
    return p.returncode, p.stdout, p.stderr


def report(*args, tz="UTC"):
    rc, out, err = run("--json", *args, tz=tz)
    if rc != 0:
        check(False, "exit 0 for %s (got %d: %s)" % (" ".join(args), rc,
                                                      err.strip()))
        return None
    return json.loads(out)


def group(doc, key, name):
    for r in doc["by"][key]:
        if r["group"] == name:
            return r
    return None


# ------------------------------------------------------------- the case
# 2026-10-05 is a Monday; TZ=UTC.  Fields: JobID|User|Account|Partition|
# QOS|NodeList|NNodes|Start|End|ElapsedRaw|ConsumedEnergyRaw|AllocTRES|State
JOBS = """\
1|alice|physics|cpu|normal|n[01-02]|2|2026-10-05T06:00:00|2026-10-05T08:00:00|7200|36000000|billing=64,cpu=64,mem=256G,node=2|COMPLETED
2|bob|physics|gpu|high|g01|1|2026-10-05T21:00:00|2026-10-05T23:30:00|9000|27000000|billing=8,cpu=8,gres/gpu=4,gres/gpu:a100=4,node=1|COMPLETED
3|carol|chem|cpu|normal|n03|1|2026-10-05T10:00:00|2026-10-05T11:00:00|3600||cpu=1,node=1|FAILED
4|carol|chem|cpu|normal|n[04-07]|4|2026-10-10T10:00:00|2026-10-10T10:30:00|1800|1800000|cpu=128,node=4|COMPLETED
5|dave|chem|cpu|normal|n01|1|2026-10-06T01:00:00|2026-10-06T02:00:00|3600|0|cpu=1,node=1|TIMEOUT
6|alice|physics|cpu|normal|None assigned|0|Unknown|2026-10-06T03:00:00|0|0||CANCELLED by 0
7|alice|physics|cpu|normal|n01|1|2026-10-31T23:00:00|2026-11-01T00:00:00|3600|3600000|cpu=1,node=1|COMPLETED
"""
# Weekly time-of-use (local time): weekdays 07-22 at 0.30, nights at 0.10
# (mon-thu 22:00-07:00 crosses midnight), weekends 0.05.
TARIFF = """\
# weekdays,start,end,price
weekdays,start,end,price
mon-fri,07:00,22:00,0.30
mon-thu,22:00,07:00,0.10
fri,22:00,24:00,0.10
sat+sun,00:00,24:00,0.05
mon,00:00,07:00,0.10
"""
# g/kWh, a step function from each timestamp to the next
GRID = """\
timestamp,g_per_kwh
2026-10-05T00:00:00Z,200
2026-10-05T06:30:00Z,300
2026-10-05T12:00:00Z,250
2026-10-06T00:00:00Z,100
2026-10-31T00:00:00Z,100
"""
# By hand.
# job 1: 36,000,000 J = 10 kWh over 06:00-08:00 (7200 s): 5 kW, 5 kWh an
#   hour.  Crosses the tariff boundary at 07:00: 5 kWh x 0.10 + 5 kWh x
#   0.30 = 0.50 + 1.50 = 2.00 EUR.  The intensity changes at 06:30:
#   06:00-06:30 2.5 kWh x 200 = 500 g; 06:30-08:00 7.5 kWh x 300 = 2250 g;
#   2750 g = 2.75 kg.
# job 2: 27,000,000 J = 7.5 kWh over 21:00-23:30 (9000 s): 3 kW.
#   21:00-22:00 3 kWh x 0.30 = 0.90; 22:00-23:30 4.5 kWh x 0.10 = 0.45;
#   1.35 EUR.  All at 250 g/kWh: 1875 g = 1.875 kg.  GPU-h 4 x 2.5 = 10.
# job 3: ConsumedEnergyRaw empty: without energy (not 0 J).
# job 4: 1,800,000 J = 0.5 kWh on Saturday 10:00-10:30, 4 nodes: 1 kW.
#   0.5 x 0.05 = 0.025 EUR; 0.5 x 100 = 50 g = 0.05 kg.
# job 5: ConsumedEnergyRaw 0: without energy.
# job 6: never started (Start Unknown): left out, counted as such.
# job 7: ended 2026-11-01T00:00:00: outside --month 2026-10.
# physics (jobs 1, 2): 2 jobs, 63,000,000 J = 17.5 kWh; elapsed with
#   energy 7200 + 9000 = 16200 s: 63e6 / 16200 / 1000 = 3.888... kW;
#   node-h 2 x 2 + 1 x 2.5 = 6.5: 17.5 / 6.5 = 2.6923... kWh/node-h;
#   cost 2.00 + 1.35 = 3.35; CO2 2.75 + 1.875 = 4.625 kg.
# chem (jobs 3, 4, 5): 3 jobs, 2 without energy (66.67 %); 0.5 kWh;
#   node-h 1 + 2 + 1 = 4, of them 2 with energy: 0.25 kWh/node-h; 1 kW
#   (job 3's hour without energy is not in the average); 0.025 EUR;
#   0.05 kg.
# total: 5 jobs, 2 without energy, 64,800,000 J = 18 kWh, 3.375 EUR,
#   4.675 kg.
jobs = write("jobs.txt", JOBS)
tariff = write("tariff.csv", TARIFF)
grid = write("grid.csv", GRID)
base = ["--sacct-file", jobs, "--month", "2026-10", "--tariff", tariff,
        "--intensity-file", grid]

doc = report(*base, "--by", "account,user", "--by", "partition")
if doc:
    p = group(doc, "account", "physics")
    c = group(doc, "account", "chem")
    t = doc["total"]
    check(p["jobs"] == 2 and p["jobs_without_energy"] == 0,
          "physics: 2 jobs, all with energy")
    check(p["energy_j"] == 63000000, "physics energy 63,000,000 J")
    close(p["energy_kwh"], 17.5, "physics kWh")
    close(p["avg_power_kw"], 63e6 / 16200 / 1000, "physics average kW")
    close(p["node_hours"], 6.5, "physics node-hours")
    close(p["gpu_hours"], 10.0, "physics GPU-hours")
    close(p["kwh_per_node_hour"], 17.5 / 6.5, "physics kWh/node-h")
    close(p["cost"], 3.35, "physics cost (job 1 crosses 07:00)")
    close(p["co2_kg"], 4.625, "physics CO2 kg (intensity changes at 06:30)")
    check(c["jobs"] == 3 and c["jobs_without_energy"] == 2,
          "chem: 3 jobs, 2 without energy (empty and 0), not read as 0 J")
    close(c["without_energy_pct"], 200.0 / 3, "chem share without energy")
    check(c["energy_j"] == 1800000, "chem energy 1,800,000 J")
    close(c["avg_power_kw"], 1.0, "chem average kW: jobs with energy only")
    close(c["kwh_per_node_hour"], 0.25, "chem kWh/node-h")
    close(c["node_hours"], 4.0, "chem node-hours (all jobs)")
    close(c["cost"], 0.025, "chem cost (weekend)")
    close(c["co2_kg"], 0.05, "chem CO2 kg")
    check(t["jobs"] == 5 and t["jobs_without_energy"] == 2 and
          t["energy_j"] == 64800000, "total: 5 jobs, 2 without, 64.8 MJ")
    close(t["cost"], 3.375, "total cost")
    close(t["co2_kg"], 4.675, "total CO2 kg")
    check(doc["jobs_not_started_or_not_ended"] == 1,
          "the job that never started is left out and counted")
    a = group(doc, "user", "alice")
    close(a["cost"], 2.0, "alice = job 1: 5 kWh x 0.10 + 5 kWh x 0.30")
    close(a["co2_kg"], 2.75, "alice = job 1: 2.5 x 200 + 7.5 x 300 g")
    d = group(doc, "user", "dave")
    check(d["jobs_without_energy"] == 1 and d["avg_power_kw"] is None and
          d["energy_j"] == 0, "dave: one job without energy, no power")
    check(doc["warnings"] == [], "no warnings: %s" % doc["warnings"])

# flat price and constant intensity: 18 kWh x 0.2 = 3.6; x 300 g = 5.4 kg
doc = report("--sacct-file", jobs, "--month", "2026-10", "--price", "0.2",
             "--intensity", "300")
if doc:
    close(doc["total"]["cost"], 3.6, "flat price: 18 kWh x 0.2")
    close(doc["total"]["co2_kg"], 5.4, "constant intensity: 18 kWh x 300 g")
# without a tariff or an intensity there is no cost and no CO2, not 0
doc = report("--sacct-file", jobs, "--month", "2026-10")
if doc:
    check(doc["total"]["cost"] is None and doc["total"]["co2_kg"] is None,
          "no tariff, no intensity: cost and CO2 are null, not 0")
# without a period: every ended job of the file (job 7 too)
doc = report("--sacct-file", jobs)
if doc:
    check(doc["total"]["energy_j"] == 64800000 + 3600000,
          "no period: all ended jobs (68,400,000 J)")

# ------------------------------------------- summer time ends (Paris)
# Tariff 00:00-12:00 local 0.10, 12:00-24:00 0.20.  A job from Saturday
# 24 Oct 2026 12:00 CEST (10:00Z) to Sunday 25 Oct 12:00 CET (11:00Z)
# runs 25 h: 12 h at 0.20 on Saturday, 13 h at 0.10 on Sunday (02:00-03:00
# happens twice).  25 kWh (90,000,000 J) at 1 kWh an hour:
# 12 x 0.20 + 13 x 0.10 = 2.40 + 1.30 = 3.70 EUR.
t0 = calendar.timegm((2026, 10, 24, 10, 0, 0))
t1 = calendar.timegm((2026, 10, 25, 11, 0, 0))
dst_jobs = write("dst.txt", "9|erin|geo|cpu|normal|n01|1|%d|%d|%d|90000000|"
                 "node=1|COMPLETED\n" % (t0, t1, t1 - t0))
dst_tariff = write("dst-tariff.csv", "all,00:00,12:00,0.10\n"
                   "all,12:00,24:00,0.20\n")
doc = report("--sacct-file", dst_jobs, "--month", "2026-10", "--tariff",
             dst_tariff, tz="Europe/Paris")
if doc:
    close(doc["total"]["cost"], 3.70, "25 h across the end of summer time")

# ---------------------------- energy per account is the jobs' sum, to the J
lines, sums, without = [], {}, {}
seed = 12345
for i in range(600):
    seed = (seed * 1103515245 + 12345) % (1 << 31)
    acct = "a%d" % (seed % 7)
    e = (seed * 7919) % 987654321 + 1
    kind = seed % 10
    field = "" if kind == 0 else "0" if kind == 1 else str(e)
    if kind > 1:
        sums[acct] = sums.get(acct, 0) + e
    else:
        without[acct] = without.get(acct, 0) + 1
    start = 1790000000 + (seed % 2000000)
    el = 1 + seed % 50000
    lines.append("%d|u%d|%s|p|normal|n1|1|%d|%d|%d|%s|node=1|COMPLETED"
                 % (i, seed % 13, acct, start, start + el, el, field))
many = write("many.txt", "\n".join(lines) + "\n")
doc = report("--sacct-file", many, "--price", "0.1")
if doc:
    got = {r["group"]: r["energy_j"] for r in doc["by"]["account"]}
    check(got == {a: sums.get(a, 0) for a in got} and
          set(got) == set(sums) | set(without),
          "per-account energy = sum of ConsumedEnergyRaw, to the joule")
    got = {r["group"]: r["jobs_without_energy"]
           for r in doc["by"]["account"]}
    check(all(got[a] == without.get(a, 0) for a in got),
          "jobs without energy counted per account")
    check(doc["total"]["energy_j"] == sum(sums.values()),
          "total = sum of all ConsumedEnergyRaw")

# ----------------------------------------------------- bad input files
# A line that cannot be read: exit 3, named with its line; lines that
# contradict each other: exit 2
def bad(name, text, needle, opt="--tariff", want=3):
    path = write(name, text)
    rc, out, err = run("--sacct-file", jobs, opt, path)
    check(rc == want and needle in err and out == "",
          "%s: exit %d naming '%s', nothing written (got %d: %s)"
          % (name, want, needle, rc, err.strip()))


bad("t-price.csv", "mon-fri,07:00,22:00,0.30\nall,22:00,07:00,cheap\n",
    "t-price.csv:2: price 'cheap' is not a number")
bad("t-overlap.csv", "all,00:00,24:00,0.2\nmon,10:00,11:00,0.3\n",
    "t-overlap.csv:2: mon 10:00 is already priced by line 1", want=2)
bad("t-gap.csv", "all,00:00,23:00,0.2\n", "t-gap.csv: mon 23:00 has no price",
    want=2)
bad("t-time.csv", "all,00:00,25:00,0.2\n", "t-time.csv:1: time '25:00'")
bad("t-days.csv", "mon-fry,00:00,24:00,0.2\n", "t-days.csv:1: weekdays")
bad("t-fields.csv", "all,00:00,24:00\n", "t-fields.csv:1: 3 fields")
bad("i-order.csv", "2026-10-05T01:00:00Z,100\n2026-10-05T00:00:00Z,90\n",
    "i-order.csv:2: timestamp '2026-10-05T00:00:00Z' is not after",
    "--intensity-file", want=2)
bad("i-neg.csv", "# grid\n2026-10-05T00:00:00Z,-5\n",
    "i-neg.csv:2: g_per_kwh '-5' is out of range", "--intensity-file")
bad("i-time.csv", "yesterday,100\n", "i-time.csv:1: timestamp 'yesterday'",
    "--intensity-file")
# every bad line of the file, not only the first, and the file's own
# numbering (comments and the header count)
bad("t-two.csv", "# prices\nweekdays,start,end,price\nall,00:00,12:00,x\n"
    "all,12:00,24:00,0.1\nall,12:00\n",
    "t-two.csv: 2 lines could not be read:\nslurm-energy-report: %s/"
    "t-two.csv:3: price 'x' is not a number: 'all,00:00,12:00,x'\n"
    "slurm-energy-report: %s/t-two.csv:5: 2 fields" % (TMP, TMP))
# a damaged first line is data, not a header dropped without a word
bad("i-first.csv", "2026-10-05T00:00:00Z,abc\n2026-10-05T01:00:00Z,100\n",
    "i-first.csv:1: g_per_kwh 'abc' is not a number", "--intensity-file")
bad("i-inf.csv", "2026-10-05T00:00:00Z,inf\n",
    "i-inf.csv:1: g_per_kwh 'inf' is not a number", "--intensity-file")
bad("i-year.csv", "9999999999999999999999,100\n",
    "i-year.csv:1: timestamp '9999999999999999999999' is not in 2000..2099",
    "--intensity-file")
bad("m-mode.map", "n[01-03] node\nn04 exclusive\nn[05-07 share\n",
    "m-mode.map: 2 lines could not be read", "--attribution-map")
bad("m-range.map", "n[03-01] node\n", "m-range.map:1: hostlist 'n[03-01]'",
    "--attribution-map")
bad("m-huge.map", "n[1-999999999] node\n", "more than 100000 names",
    "--attribution-map")
with open(os.path.join(TMP, "m-bytes.map"), "wb") as h:
    h.write(b"n01 node\nn\xff\xfe02 shar\xe9\n")
rc, out, err = run("--sacct-file", jobs, "--attribution-map",
                   os.path.join(TMP, "m-bytes.map"))
check(rc == 3 and "m-bytes.map:2: expected HOSTLIST node|share" in err and
      "Traceback" not in err,
      "attribution map with bytes that are not UTF-8: line 2 named, exit 3 "
      "(got %d: %s)" % (rc, err.strip()))
rc, out, err = run("--sacct-file", jobs, "--attribution-map",
                   os.path.join(TMP, "no.map"))
check(rc == 2 and "no.map: No such file" in err and "Traceback" not in err,
      "missing attribution map: exit 2, named (got %d: %s)"
      % (rc, err.strip()))
# accepted: the report without them, and the lines named in its warnings
path = write("t-acc.csv", "all,00:00,12:00,0.1\nall,12:00,24:00,0.2\n"
             "all,25:00,26:00,0.3\n")
doc = report("--sacct-file", jobs, "--tariff", path, "--accept-bad-lines")
if doc:
    check(doc["bad_line_counts"] == {path: 1} and
          doc["bad_lines"][0].startswith(path + ":3: time '25:00'") and
          doc["tariff"].startswith(path + " (time-of-use, 2 lines)"),
          "--accept-bad-lines: the tariff's two good lines, line 3 named: "
          "%s" % doc["bad_lines"])

# ------------------------------------------- the tool runs sacct itself
# A fake sacct that logs its arguments and prints every job (Unix times,
# as SLURM_TIME_FORMAT=%s asks) whatever the day: the tool must keep each
# job once, in the day it ended.
def epoch_line(line):
    f = line.split("|")
    for i in (7, 8):
        if f[i][:1].isdigit():
            f[i] = str(calendar.timegm(tuple(
                int(x) for x in f[i].replace("T", "-").replace(":", "-")
                .split("-")) + (0, 0, 0)))
    return "|".join(f)


# the fake prints the fields the tool asks for: AdminComment last, job 1's
# with a power cap record among a site's words
epoch_jobs = write("epoch.txt", "".join(
    epoch_line(x) + ("|site=x powercap=capped:1800s,min:200W"
                     if x.startswith("1|") else "|") + "\n"
    for x in JOBS.splitlines()))
log = os.path.join(TMP, "sacct.log")
fake = write("sacct", "#!/bin/sh\necho \"$SLURM_TIME_FORMAT $*\" >> %s\n"
             "cat %s\n" % (log, epoch_jobs))
os.chmod(fake, 0o755)
doc = report("--sacct", fake, "--month", "2026-10", "--tariff", tariff,
             "--intensity-file", grid, "--by", "account")
if doc:
    calls = open(log).read().splitlines()
    check(len(calls) == 31, "one sacct query a day: %d" % len(calls))
    check(calls and calls[0].startswith(
        "%s -a -X -P --noheader --format=JobID,User,Account,Partition,QOS,"
        "NodeList,NNodes,Start,End,ElapsedRaw,ConsumedEnergyRaw,AllocTRES,"
        "State,AdminComment -S 2026-10-01T00:00:00 -E 2026-10-02T00:00:00"
        % "%s"),
        "sacct arguments and SLURM_TIME_FORMAT=%%s: %s" % calls[:1])
    p = group(doc, "account", "physics")
    check(doc["total"]["jobs"] == 5 and p["energy_j"] == 63000000,
          "each job once, in the day it ended")
    close(doc["total"]["cost"], 3.375, "same cost as from the file")
    close(doc["total"]["co2_kg"], 4.675, "same CO2 as from the file")
    check(p["capped_jobs"] == 1 and p["capped_job_s"] == 1800 and
          p["min_cap_w"] == 200 and doc["total"]["capped_job_s"] == 1800,
          "sacct's AdminComment read: physics 1 job capped 1800 s at 200 W "
          "(got %s %s %s)" % (p["capped_jobs"], p["capped_job_s"],
                              p["min_cap_w"]))
fail = write("sacct-fail", "#!/bin/sh\necho 'sacct: error: down' >&2\n"
             "exit 1\n")
os.chmod(fail, 0o755)
rc, _, err = run("--sacct", fail, "--month", "2026-10")
check(rc == 1 and "sacct: error: down" in err,
      "sacct failing: exit 1 with its message")

# a saved file with a header, fields in another order
cols = ["State", "JobID", "User", "Account", "Partition", "QOS", "NodeList",
        "NNodes", "Start", "End", "ElapsedRaw", "ConsumedEnergyRaw",
        "AllocTRES"]
order = [12, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11]
rows = ["|".join(x.split("|")[i] for i in order) for x in JOBS.splitlines()]
hdr = write("header.txt", "|".join(cols) + "\n" + "\n".join(rows) + "\n")
doc = report("--sacct-file", hdr, "--month", "2026-10", "--tariff", tariff)
if doc:
    close(doc["total"]["cost"], 3.375, "header line: fields by name")

# ------------------------------------------- sacct lines that cannot be read
# Each of these was read wrong before (issue #40): summed as "never
# started", "without energy", or a traceback.
GOOD = "11|ann|geo|cpu|normal|n01|1|1791000000|1791003600|3600|7200000|" \
    "cpu=1,gres/gpu=2,node=1|COMPLETED"


FIELDS = ["JobID", "User", "Account", "Partition", "QOS", "NodeList",
          "NNodes", "Start", "End", "ElapsedRaw", "ConsumedEnergyRaw",
          "AllocTRES", "State"]


def job_line(**over):
    f = GOOD.split("|")
    for name, value in over.items():
        f[FIELDS.index(name)] = value
    return "|".join(f)


def one_bad(name, line, needle):
    """GOOD, then line: exit 3 naming line 2 of the file; accepted, only
    GOOD is summed."""
    path = write(name, GOOD + "\n" + line + "\n")
    rc, out, err = run("--sacct-file", path)
    check(rc == 3 and out == "" and "%s:2: %s" % (path, needle) in err and
          "Traceback" not in err,
          "%s: exit 3 naming line 2: '%s' (got %d: %s)"
          % (name, needle, rc, err.strip()[-400:]))
    doc = report("--sacct-file", path, "--accept-bad-lines")
    if doc:
        t = doc["total"]
        check(t["jobs"] == 1 and t["energy_j"] == 7200000 and
              doc["lines_bad"] == 1 and doc["lines_read"] == 2 and
              doc["jobs_not_started_or_not_ended"] == 0 and
              doc["bad_lines"][0].startswith("%s:2: %s" % (path, needle)),
              "%s accepted: only the good line summed, the bad one counted "
              "and quoted" % name)


one_bad("s-start.txt", job_line(Start="x791000000"),
        "Start 'x791000000' is not a time")
one_bad("s-end.txt", job_line(End='"1791003600'),
        "End '\"1791003600' is not a time")
one_bad("s-local.txt", job_line(End="2026-10-05T25:00:00"),
        "End '2026-10-05T25:00:00' is not a time")
one_bad("s-gpu.txt", job_line(AllocTRES="cpu=1,gres/gpu=x,node=1"),
        "AllocTRES gres/gpu 'x' is not a whole number below 2^32")
one_bad("s-neg.txt", job_line(ConsumedEnergyRaw="-5"),
        "ConsumedEnergyRaw '-5' is negative")
one_bad("s-huge.txt", job_line(ConsumedEnergyRaw=str(1 << 62)),
        "ConsumedEnergyRaw '4611686018427387904' is 2^62 J or more")
one_bad("s-nodes.txt", job_line(NNodes="1x"),
        "NNodes '1x' is not a whole number below 2^32")
one_bad("s-fields.txt", GOOD + "|extra", "14 fields, expected 13")
# the largest figure below 2^62 is joules, summed to the joule
path = write("s-max.txt", job_line(ConsumedEnergyRaw=str((1 << 62) - 1)))
doc = report("--sacct-file", path)
if doc:
    check(doc["total"]["energy_j"] == (1 << 62) - 1,
          "ConsumedEnergyRaw 2^62 - 1: summed")
# sacct's own words are "never started / not ended", and only they
path = write("s-words.txt", "\n".join([
    GOOD, job_line(JobID="12", Start="Unknown", End="Unknown"),
    job_line(JobID="13", End="None"), job_line(JobID="14", End=""),
    ""]) + "\n")
doc = report("--sacct-file", path)
if doc:
    check(doc["jobs_not_started_or_not_ended"] == 3 and
          doc.get("lines_bad") == 0 and doc["total"]["jobs"] == 1 and
          doc.get("lines_ignored") == 1 and doc.get("lines_read") == 5,
          "Unknown, None, empty: 3 never started or not ended; the empty "
          "line ignored and counted")

# sacct's header line: the file's own numbers (the header is line 1)
hdr_bad = write("h-bad.txt", "|".join(cols) + "\n" + "\n".join(
    rows[:2] + ["9|x|y"] + rows[2:]) + "\n")
rc, out, err = run("--sacct-file", hdr_bad, "--month", "2026-10")
check(rc == 3 and "h-bad.txt:4: 3 fields, expected 13" in err,
      "header file: the bad line is line 4, as in the file (got %d: %s)"
      % (rc, err.strip()))
# the header again (two saved files joined with cat) is not a job line
twice = write("h-twice.txt", open(hdr).read() + open(hdr).read())
doc = report("--sacct-file", twice, "--month", "2026-10", "--tariff", tariff)
if doc:
    close(doc["total"]["cost"], 2 * 3.375, "header twice: both halves read")
    check(doc.get("lines_ignored") == 1 and doc.get("lines_bad") == 0,
          "header twice: the second header ignored and counted")
# Lines end at \n only, as wc -l, sed and editors count them; a \r
# elsewhere is a byte of its line (issue #40, found by the property test
# with more examples).  An empty file has no lines: nothing read.
empty = write("s-empty.txt", "")
doc = report("--sacct-file", empty)
if doc:
    check(doc["lines_read"] == 0 and doc["lines_ignored"] == 0 and
          doc["total"]["jobs"] == 0,
          "empty sacct file: 0 lines read, 0 ignored (got %d, %d)"
          % (doc["lines_read"], doc["lines_ignored"]))
# a lone \r in sacct's own output (the tool runs it): one line, not two,
# so the bad line after it is line 2 of the day's query
cr_out = os.path.join(TMP, "cr-out.txt")
with open(cr_out, "wb") as h:
    h.write(job_line(Account="g\reo").encode() + b"|\n9|x|y\n")
cr_sacct = write("sacct-cr", "#!/bin/sh\ncat %s\n" % cr_out)
os.chmod(cr_sacct, 0o755)
rc, out, err = run("--sacct", cr_sacct, "--start", "1791000000", "--end",
                   "1791010000", "--json", "--accept-bad-lines")
doc = json.loads(out) if rc == 0 else {}
check(rc == 0 and doc["lines_read"] == 2 and doc["lines_bad"] == 1 and
      doc["total"]["energy_j"] == 7200000 and
      re.search(r"sacct -S [0-9T:-]+:2: 3 fields", doc["bad_lines"][0]),
      "sacct's output with a lone \\r: 2 lines, line 2 bad, the job summed "
      "(got %d: %s %s)" % (rc, doc.get("bad_lines"), err.strip()))
# the intensity file's first line without a digit is its header, a \r in
# it or not (the csv module refuses a lone \r)
cr_head = os.path.join(TMP, "i-crhead.csv")
with open(cr_head, "wb") as h:
    h.write(b"t\rimestamp,g_per_kwh\n2026-10-05T00:00:00Z,100\n"
            b"2026-10-05T01:00:00Z,90\n")
doc = report("--sacct-file", jobs, "--intensity-file", cr_head)
if doc:
    check(doc["intensity"].startswith(cr_head + " (2 steps") and
          doc["lines_bad"] == 0 and doc["bad_lines"] == [],
          "intensity header with a lone \\r: a header, 2 steps, no bad "
          "line (got %s, %s)" % (doc["intensity"], doc["bad_lines"]))
# bad lines are quoted in file order, a line that is not CSV (a lone \r)
# among the others
cr_order = os.path.join(TMP, "i-crorder.csv")
with open(cr_order, "wb") as h:
    h.write(b"timestamp,g_per_kwh\n2026-10-05T00:00:00Z,100\n2\n"
            b"2\r026-10-05T01:00:00Z,90\n2026-10-05T02:00:00Z,80\n")
doc = report("--sacct-file", jobs, "--intensity-file", cr_order,
             "--accept-bad-lines")
if doc:
    got = [q.split(":", 2)[1:] for q in doc["bad_lines"]]
    check([n for n, _ in got] == ["3", "4"] and
          got[0][1].startswith(" 1 fields") and
          got[1][1].startswith(" not a CSV line") and
          doc["intensity"].startswith(cr_order + " (2 steps"),
          "intensity bad lines in file order: 3 (1 field), 4 (a lone \\r, "
          "not CSV) (got %s)" % doc["bad_lines"])
cr_tariff = os.path.join(TMP, "t-crorder.csv")
with open(cr_tariff, "wb") as h:
    h.write(b"all,00:00,12:00,0.1\nall,12:00\nall,12:00,24\r:00,0.2\n"
            b"all,12:00,24:00,0.2\n")
doc = report("--sacct-file", jobs, "--tariff", cr_tariff,
             "--accept-bad-lines")
if doc:
    check([q.split(":", 2)[1] for q in doc["bad_lines"]] == ["2", "3"],
          "tariff bad lines in file order: 2, 3 (got %s)" % doc["bad_lines"])
# a header of 14 columns: a line of 13 fields is bad, not read in another
# order
path = write("h-14.txt", "|".join(FIELDS + ["Elapsed"]) + "\n" +
             GOOD + "|01:00:00\n" + GOOD + "\n")
rc, out, err = run("--sacct-file", path)
check(rc == 3 and "h-14.txt:3: 13 fields, expected 14" in err,
      "header of 14 columns: a 13-field line is line 3, bad (got %d: %s)"
      % (rc, err.strip()))

# more than five: all counted, five quoted
path = write("s-many.txt", "\n".join(
    [GOOD] + [job_line(JobID=str(20 + i), ConsumedEnergyRaw="e%d" % i)
              for i in range(7)]) + "\n")
rc, out, err = run("--sacct-file", path)
check(rc == 3 and "7 lines could not be read, the first 5:" in err and
      err.count("is not a whole number of joules") == 5 and
      "s-many.txt:6:" in err and "s-many.txt:7:" not in err,
      "7 bad lines: counted, lines 2-6 quoted (got %d: %s)"
      % (rc, err.strip()))
rc, _, err = run("--sacct-file", jobs, "--tariff", os.path.join(TMP, "none"))
check(rc == 2 and "none" in err, "missing tariff file: exit 2, named")
rc, _, err = run("--month", "2026-13")
check(rc == 2 and "--month" in err, "bad --month: exit 2")


# ---------------------------------- power cap records (issue #45)
# slurm-energy-powercapd writes a capped job's AdminComment word
# powercap=capped:Ns,min:WW, N the wall-clock seconds any of the job's
# nodes was capped, once per job (src/powercap/pcap_jobrec.c: the interval
# is charged once per job however many of its nodes were capped): the
# report sums job-seconds, and its share is over the jobs' ElapsedRaw
# (job-seconds), not node-seconds.
CAPS = [
    # JobID, User, Account, NNodes, ElapsedRaw, AdminComment
    ("21", "ann", "phys", 4, 3600, "powercap=capped:900s,min:280W"),
    ("22", "bob", "phys", 2, 1800,
     "site=foo powercap=capped:600s,min:150W ticket#12"),
    ("23", "cy", "phys", 1, 7200, "energy_key=cy/app"),
    ("24", "dee", "chem", 1, 1000, "powercap=capped:0s,min:300W"),
    ("25", "dee", "chem", 8, 500, ""),
    # not the daemon's word: after a tab, after a colon, inside a word
    ("26", "eve", "geo", 2, 2000, "\tpowercap=capped:9s,min:1W "
     "note:powercap=x xpowercap=capped:9s,min:1W"),
]
# By hand.  phys: jobs 21, 22 capped, 900 + 600 = 1500 job-s (per node
#   it would be 900 x 4 + 600 x 2 = 4800); run time 3600 + 1800 + 7200 =
#   12600 job-s (node-s: 14400 + 3600 + 7200 = 25200): 1500 / 12600 =
#   11.904762 %; lowest cap 150 W.
# chem: job 24 capped 0 s (one capped round) at 300 W, job 25 without a
#   record: 1 job, 0 s, 0 / 1500 = 0 %, 300 W.
# geo: no record (job 26's words are the site's): 0 jobs, 0 %, no cap.
# total: 3 jobs, 1500 s over 16100 job-s = 9.316770 %, lowest 150 W.
# by user: ann 900 / 3600 = 25 %, bob 600 / 1800 = 33.3 %.
T = 1791000000


def cap_line(jobid, user, acct, nn, el, comment):
    return "%s|%s|%s|cpu|normal|n[01-%02d]|%d|%d|%d|%d|%d|node=%d|" \
        "COMPLETED|%s" % (jobid, user, acct, nn, nn, T, T + el, el,
                          1000 * el, nn, comment)


cap_jobs = write("caps.txt", "".join(cap_line(*c) + "\n" for c in CAPS))
doc = report("--sacct-file", cap_jobs, "--by", "account,user")
if doc:
    got = {r["group"]: (r["capped_jobs"], r["capped_job_s"],
                        r["min_cap_w"]) for r in doc["by"]["account"]}
    check(got == {"phys": (2, 1500, 150), "chem": (1, 0, 300),
                  "geo": (0, 0, None)},
          "capped jobs, job-seconds, lowest cap per account: %s" % got)
    close(group(doc, "account", "phys")["capped_pct"], 100.0 * 1500 / 12600,
          "phys capped share of its job-seconds")
    close(group(doc, "account", "phys")["capped_job_hours"], 1500 / 3600.0,
          "phys capped job-hours")
    check(group(doc, "account", "chem")["capped_pct"] == 0.0,
          "chem: capped 0 s, 0 %")
    t = doc["total"]
    check((t["capped_jobs"], t["capped_job_s"], t["min_cap_w"]) ==
          (3, 1500, 150), "total: 3 capped jobs, 1500 s, 150 W")
    close(t["capped_pct"], 100.0 * 1500 / 16100, "total capped share")
    close(group(doc, "user", "ann")["capped_pct"], 25.0, "ann: 900 / 3600")
    close(group(doc, "user", "bob")["capped_pct"], 100.0 / 3,
          "bob: 600 / 1800")
    check(doc["lines_bad"] == 0 and doc["total"]["energy_j"] ==
          1000 * (3600 + 1800 + 7200 + 1000 + 500 + 2000),
          "the site's words and the not-daemon words: no bad line")
# the same lines with a header, AdminComment first
hdr_caps = write("caps-hdr.txt", "AdminComment|" + "|".join(
    ["JobID", "User", "Account", "Partition", "QOS", "NodeList", "NNodes",
     "Start", "End", "ElapsedRaw", "ConsumedEnergyRaw", "AllocTRES",
     "State"]) + "\n" + "".join(
    c[5] + "|" + cap_line(*c).rsplit("|", 1)[0] + "\n" for c in CAPS))
doc = report("--sacct-file", hdr_caps)
if doc:
    t = doc["total"]
    check((t["capped_jobs"], t["capped_job_s"], t["min_cap_w"]) ==
          (3, 1500, 150), "header, AdminComment first: 3 jobs, 1500 s, "
          "150 W")
# files saved before AdminComment was read: no job capped, read as before
for name, path in (("13 fields", jobs), ("header without AdminComment",
                                         hdr)):
    doc = report("--sacct-file", path, "--month", "2026-10")
    if doc:
        t = doc["total"]
        check(t["jobs"] == 5 and t["energy_j"] == 64800000 and
              doc["lines_bad"] == 0 and t["capped_jobs"] == 0 and
              t["capped_job_s"] == 0 and t["min_cap_w"] is None and
              t["capped_pct"] == 0.0,
              "old file (%s): read as before, none capped" % name)
# a blank first line: the first line that is not blank tells the format
doc = report("--sacct-file", write("old-blank.txt", "\n" + JOBS),
             "--month", "2026-10")
if doc:
    check(doc["total"]["jobs"] == 5 and doc["lines_bad"] == 0 and
          doc["lines_ignored"] == 1, "old file after a blank line: 5 jobs")
# in a file of 14 fields, a line of 13 is bad (not a job without record)
rc, out, err = run("--sacct-file", write("caps-13.txt", cap_line(
    *CAPS[0]) + "\n" + cap_line(*CAPS[1]).rsplit("|", 1)[0] + "\n"))
check(rc == 3 and "caps-13.txt:2: 13 fields, expected 14" in err,
      "14-field file: a 13-field line is bad (got %d: %s)" % (rc, err))
# a '|' in an AdminComment: sacct -P cannot quote it, the line is bad
rc, out, err = run("--sacct-file", write("caps-pipe.txt", cap_line(
    *CAPS[0]) + "\n" + cap_line(*CAPS[1][:5], "a|b") + "\n"))
check(rc == 3 and "caps-pipe.txt:2: 15 fields, expected 14" in err,
      "a '|' in AdminComment: bad line (got %d: %s)" % (rc, err))


def cap_bad(name, comment, needle):
    """A good capped line, then one whose AdminComment is comment: exit 3
    naming line 2; accepted, only the first is summed."""
    path = write(name, cap_line(*CAPS[0]) + "\n" +
                 cap_line(*CAPS[1][:5], comment) + "\n")
    rc, out, err = run("--sacct-file", path)
    check(rc == 3 and out == "" and "%s:2: AdminComment " % path in err and
          needle in err.split("\n")[1] and "Traceback" not in err,
          "%s: exit 3 naming line 2: '%s' (got %d: %s)"
          % (name, needle, rc, err.strip()[-300:]))
    doc = report("--sacct-file", path, "--accept-bad-lines")
    if doc:
        t = doc["total"]
        check(t["jobs"] == 1 and t["capped_job_s"] == 900 and
              t["min_cap_w"] == 280 and doc["lines_bad"] == 1,
              "%s accepted: only line 1's 900 s at 280 W" % name)


for i, (comment, needle) in enumerate([
        ("powercap=capped:12m,min:280W",
         "AdminComment 'powercap=capped:12m,min:280W' is not "
         "powercap=capped:Ns,min:WW"),
        ("powercap=capped:-5s,min:280W", "'powercap=capped:-5s,min:280W'"),
        ("powercap=capped:5s,min:280w", "'powercap=capped:5s,min:280w'"),
        ("powercap=capped:5s,min:280W,x", "'powercap=capped:5s,min:280W,x'"),
        ("powercap=min:280W,capped:5s", "'powercap=min:280W,capped:5s'"),
        ("powercap=capped:5s", "'powercap=capped:5s' is not"),
        ("powercap=capped:5s min:280W", "'powercap=capped:5s' is not"),
        ("powercap=", "'powercap=' is not"),
        ("powercap=capped:\u0665s,min:280W", "is not powercap="),
        ("powercap=capped:4294967296s,min:1W",
         "'powercap=capped:4294967296s,min:1W': a number 2^32 or more"),
        ("powercap=capped:12345678901s,min:1W", "is not powercap="),
        ("a powercap=capped:5s,min:280W b powercap=capped:6s,min:200W",
         "has two powercap= words")]):
    cap_bad("cap-bad-%d.txt" % i, comment, needle)


# ------------------------------------------------------------ the outputs
cb = os.path.join(TMP, "cb")
rc, out, err = run(*base, "--csv", "--chargeback", cb)
check(rc == 0, "--csv --chargeback: exit 0 (%s)" % err.strip())
rows = list(csv.DictReader(out.split("\n\n")[0].splitlines()))
phys = [r for r in rows if r["group"] == "physics"]
check(phys and phys[0]["energy_j"] == "63000000" and
      phys[0]["cost"] == "3.350000", "CSV row of physics")
files = sorted(os.path.basename(f) for f in glob.glob(cb + "/*.csv"))
check(files == ["2026-10_chem.csv", "2026-10_physics.csv"],
      "one chargeback file per account: %s" % files)
if files:
    r = list(csv.DictReader(open(os.path.join(cb, "2026-10_physics.csv"))))
    check(len(r) == 1 and r[0]["account"] == "physics" and
          r[0]["period"] == "2026-10" and r[0]["jobs"] == "2" and
          r[0]["energy_kwh"] == "17.500000" and r[0]["cost"] == "3.350000"
          and r[0]["co2_kg"] == "4.625000" and r[0]["currency"] == "EUR",
          "chargeback CSV of physics: %s" % r)

rc, out, err = run("--sacct-file", cap_jobs, "--csv", "--by", "account")
rows = list(csv.DictReader(out.splitlines())) if rc == 0 else []
phys = [r for r in rows if r["group"] == "phys"]
geo = [r for r in rows if r["group"] == "geo"]
check(phys and (phys[0]["capped_jobs"], phys[0]["capped_job_s"],
                phys[0]["capped_pct"], phys[0]["min_cap_w"]) ==
      ("2", "1500", "%.6f" % (100.0 * 1500 / 12600), "150") and
      geo and geo[0]["min_cap_w"] == "",
      "CSV capped columns of phys and geo: %s %s" % (phys, geo))
rc, out, err = run("--sacct-file", cap_jobs, "--by", "account")
lines = out.splitlines()
head = [x for x in lines if x.startswith("account ")]
prow = [x for x in lines if x.startswith("phys ")]
grow = [x for x in lines if x.startswith("geo ")]
check(rc == 0 and head and " ".join(head[0].split()).endswith(
    "CO2 kg capped jobs capped job-h capped % min cap W") and prow and
      prow[0].split()[-4:] == ["2", "0.42", "11.9", "150"] and grow and
      grow[0].split()[-4:] == ["0", "0.00", "0.0", "-"],
      "text table: capped jobs, job-h, %%, min cap W (got %s %s)"
      % (prow, grow))

rc, out, err = run(*base, "--top", "2", "--top-min-elapsed", "0")
check(rc == 0 and "attribution: not stated" in out,
      "terminal table: the attribution is in the header")
top = out.split("top 2 jobs by energy\n")[-1].splitlines()
check(len(top) > 2 and top[1].split()[0] == "1" and
      top[2].split()[0] == "2", "--top: jobs 1 then 2 by energy")
doc = report(*base, "--top", "3", "--top-min-elapsed", "0")
if doc:
    check([j["jobid"] for j in doc["top_kwh_per_node_hour"]] ==
          ["2", "1", "4"], "worst energy per node-hour: 3.0, 2.5, 0.25")

amap = write("attr.map", "n[01-03] node\nn[04-07],g01 share\n")
doc = report(*base, "--attribution-map", amap)
if doc:
    p = group(doc, "account", "physics")
    check(p["jobs_on_node_mode_nodes"] == 1 and
          group(doc, "account", "chem")["jobs_on_node_mode_nodes"] == 2,
          "attribution map: jobs on node-mode nodes counted")

page = os.path.join(TMP, "r.html")
plots = os.path.join(TMP, "plots")
rc, out, err = run(*base, "--html", page, "--plot", plots, "--top", "3")
have_mpl = subprocess.run(["/usr/bin/python3", "-c", "import matplotlib"],
                          capture_output=True).returncode == 0
if have_mpl:
    text = open(page).read() if rc == 0 else ""
    check(rc == 0 and text.count("data:image/png;base64,") == 2 and
          "http:" not in text and "https:" not in text and
          "<td>physics</td>" in text,
          "--html: one page, 2 PNG as data: URIs, tables, no links")
    check(sorted(os.listdir(plots)) == ["energy-per-account-month.png",
                                        "energy-vs-node-hours.png"],
          "--plot: the two PNG files")
else:
    check(rc == 1 and "python3-matplotlib" in err,
          "--html without matplotlib: exit 1 naming python3-matplotlib")

# --profile: sh5util's extract (a fake sh5util writing one, as Slurm 22.05's
# does: the first sample twice, once with ElapsedTime -1) of job 1, alice's.
FAKE_SH5 = write("sh5util", """#!/bin/sh
echo "$*" >> "%s/sh5util.calls"
for a in "$@"; do [ "$prev" = -o ] && out=$a; prev=$a; done
case " $* " in
*" -E "*) printf 'Step,Node,ElapsedTime,EpochTime,Power\\n\
0,n01,18446744073709551615,1791180000,100\\n0,n01,0,1791180000,100\\n\
0,n01,1,1791180001,250\\n0,n02,0,1791180000,50\\n\
0,n02,2,1791180002,70\\n' > "$out" ;;
*) : > "$out" ;;
esac
""" % TMP)
os.chmod(FAKE_SH5, 0o755)
doc = report("--sacct-file", jobs, "--month", "2026-10", "--profile", "1",
             "--sh5util", FAKE_SH5)
if doc:
    pr = doc["profiles"][0]
    # n01: 100 W for 1 s, n02: 50 W for 2 s; the last samples end them
    check(pr["job"] == 1 and pr["samples"] == 4 and
          pr["nodes"] == ["n01", "n02"] and pr["joules"] == 200.0 and
          pr["max_w"] == 250.0 and pr["mean_w"] == 117.5,
          "--profile: 4 samples on 2 nodes, 200 J, highest 250 W")
calls = open(os.path.join(TMP, "sh5util.calls")).read().splitlines()
check(len(calls) == 2 and " -S " in calls[0] + " " and
      "--user=alice" in calls[0] and " -s Energy -l Node:TimeSeries " in
      calls[1], "--profile: merged keeping the node-step files (-S), as "
      "the job's user (alice, from the sacct file), Energy series extracted")
if have_mpl:
    rc, out, err = run(*base, "--html", page, "--profile", "1", "--sh5util",
                       FAKE_SH5)
    text = open(page).read() if rc == 0 else ""
    check(rc == 0 and text.count("data:image/png;base64,") == 3 and
          "Power profile of job 1" in text and
          "power profile of job 1: 4 samples on n01,n02" in text,
          "--html --profile: a third figure and the profile's line")
rc, out, err = run("--sacct-file", jobs, "--month", "2026-10", "--profile",
                   "1", "--sh5util", os.path.join(TMP, "none"))
check(rc == 1 and "cannot run" in err and "none" in err,
      "--profile without sh5util: exit 1 naming it")

shutil.rmtree(TMP, ignore_errors=True)
print("%d failed" % len(FAILS))
sys.exit(1 if FAILS else 0)
