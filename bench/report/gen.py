#!/usr/bin/python3
"""gen.py - a synthetic month of job lines as `sacct -a -X -P --noheader
--format=JobID,User,Account,Partition,QOS,NodeList,NNodes,Start,End,
ElapsedRaw,ConsumedEnergyRaw,AllocTRES,State,AdminComment` prints them, with a weekly
time-of-use tariff and an hourly grid intensity series for the same month,
for bench/report/run.sh.

    gen.py DIR [JOBS] [--iso]

DIR/jobs.txt (JOBS lines, default 1,000,000; Start/End as Unix seconds,
as slurm-energy-report's own sacct runs print them with
SLURM_TIME_FORMAT=%s, or with --iso as sacct's default local %FT%T),
DIR/tariff.csv, DIR/intensity.csv.  Deterministic (seed 32, issue #32).

What it looks like (in-service magnitudes): 5,000 users in 200 accounts
(Zipf-like: a few accounts use most), partitions cpu (80 %), gpu (12 %,
4 GPUs a node), bigmem, debug; node counts mostly 1, up to 512 in powers
of two; run times log-normal (median 20 min, capped at 48 h); 150-650 W a
CPU node, 600-2800 W a GPU node; 4 % of the jobs carry no energy (empty or
0, as batch jobs without PrologFlags=Contain or nodes without a meter),
2 % are cancelled before they start (Start Unknown, left out by the
report).  AdminComment (issue #45): 6 % of the jobs ran under the
cluster's power cap (slurm-energy-powercapd's word
powercap=capped:Ns,min:WW, N up to the job's run time), 3 % carry a word
of the site's (energy_key=); drawn from a second generator (seed 45), so
that every other field is what it was before the field came.  Jobs end in
October 2026 (UTC+1/+2 local time is the caller's
TZ), some started in September.
"""
import os
import random
import sys
import time

SEED = 32


def main():
    out = sys.argv[1]
    n = int(sys.argv[2]) if len(sys.argv) > 2 and sys.argv[2][0] != "-" \
        else 1000000
    iso = "--iso" in sys.argv
    rnd = random.Random(SEED)
    rnd_cap = random.Random(45)
    os.makedirs(out, exist_ok=True)
    t0 = int(time.mktime((2026, 10, 1, 0, 0, 0, 0, 0, -1)))
    t1 = int(time.mktime((2026, 11, 1, 0, 0, 0, 0, 0, -1)))
    accounts = ["acct%03d" % i for i in range(200)]
    acct_w = [1.0 / (i + 1) ** 0.9 for i in range(200)]
    users = []
    for i in range(5000):
        users.append(("u%05d" % i, rnd.choices(accounts, acct_w)[0]))
    user_w = [1.0 / (i + 1) ** 0.7 for i in range(5000)]
    parts = [("cpu", 0.80), ("gpu", 0.12), ("bigmem", 0.03),
             ("debug", 0.05)]
    qos = [("normal", 0.8), ("high", 0.08), ("low", 0.1), ("long", 0.02)]

    def pick(tab):
        r, acc = rnd.random(), 0.0
        for name, w in tab:
            acc += w
            if r < acc:
                return name
        return tab[-1][0]

    def admin_comment(el):
        r = rnd_cap.random()
        words = ["energy_key=app%d" % rnd_cap.randrange(50)] \
            if r < 0.03 else []
        if r > 0.94:
            words.append("powercap=capped:%ds,min:%dW" % (
                rnd_cap.randrange(el + 1), rnd_cap.randrange(100, 600)))
        return " ".join(words)

    def fmt(t):
        if iso:
            return time.strftime("%Y-%m-%dT%H:%M:%S", time.localtime(t))
        return str(t)

    user_pick = rnd.choices(range(5000), user_w, k=n)
    with open(os.path.join(out, "jobs.txt"), "w") as h:
        w = h.write
        for j in range(n):
            user, acct = users[user_pick[j]]
            part = pick(parts)
            q = pick(qos)
            jobid = 4000000 + j
            end = rnd.randrange(t0, t1)
            r = rnd.random()
            if r < 0.02:  # cancelled while pending
                w("%d|%s|%s|%s|%s|None assigned|0|Unknown|%s|0|0||"
                  "CANCELLED by %d|\n" % (jobid, user, acct, part, q,
                                          fmt(end), 1000 + user_pick[j]))
                continue
            el = int(min(172800, max(5, rnd.lognormvariate(7.1, 1.6))))
            if part == "debug":
                el = min(el, 1800)
            start = end - el
            if part == "gpu":
                nn = rnd.choice((1, 1, 1, 1, 2, 4, 8))
                gpus = 4 * nn
                p_node = rnd.uniform(600, 2800)
            else:
                nn = 1 << min(9, int(rnd.expovariate(0.8)))
                gpus = 0
                p_node = rnd.uniform(150, 650)
            base = rnd.randrange(0, 4096 - nn)
            nodes = ("c%04d" % base) if nn == 1 else \
                "c[%04d-%04d]" % (base, base + nn - 1)
            if part == "gpu":
                nodes = nodes.replace("c", "g", 1)
            r = rnd.random()
            if r < 0.02:
                energy = ""
            elif r < 0.04:
                energy = "0"
            else:
                energy = "%d" % int(p_node * nn * el)
            tres = "billing=%d,cpu=%d,mem=%dG,node=%d" % (
                64 * nn, 64 * nn, 256 * nn, nn)
            if gpus:
                tres += ",gres/gpu=%d,gres/gpu:a100=%d" % (gpus, gpus)
            state = "COMPLETED" if r > 0.1 else rnd.choice(
                ("FAILED", "TIMEOUT", "CANCELLED by 0", "OUT_OF_MEMORY"))
            w("%d|%s|%s|%s|%s|%s|%d|%s|%s|%d|%s|%s|%s|%s\n" % (
                jobid, user, acct, part, q, nodes, nn, fmt(start), fmt(end),
                el, energy, tres, state, admin_comment(el)))
    with open(os.path.join(out, "tariff.csv"), "w") as h:
        h.write("# weekdays,start,end,price (EUR/kWh)\n"
                "mon-fri,07:00,17:00,0.28\n"
                "mon-fri,17:00,20:00,0.35\n"
                "mon-fri,20:00,22:00,0.28\n"
                "mon-thu,22:00,07:00,0.16\n"
                "fri,22:00,24:00,0.16\n"
                "sat+sun,00:00,24:00,0.14\n"
                "mon,00:00,07:00,0.16\n")
    with open(os.path.join(out, "intensity.csv"), "w") as h:
        h.write("timestamp,g_per_kwh\n")
        t = t0 - 5 * 86400  # jobs that started in September
        while t < t1 + 86400:
            hour = time.gmtime(t).tm_hour
            g = 180 + 120 * (1 if 6 <= hour < 21 else 0) + rnd.uniform(-40,
                                                                        40)
            h.write("%s,%.1f\n" % (time.strftime("%Y-%m-%dT%H:%M:%SZ",
                                                 time.gmtime(t)), g))
            t += 3600


if __name__ == "__main__":
    main()
