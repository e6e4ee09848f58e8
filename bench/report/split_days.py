#!/usr/bin/python3
"""split_days.py - what `sacct -S DAY -E DAY+1` would print for each day of
the period, from gen.py's jobs.txt (Unix-second times): every job that ran
at some time in the day, so a job that ran over several days is in each of
them, as sacct returns it.  Writes DIR/day-YYYY-MM-DD.txt.  For the fake
sacct of bench/report/run.sh (the days are those of the caller's TZ).

    split_days.py JOBS.txt DIR YYYY-MM
"""
import bisect
import os
import sys
import time


def main():
    src, out, month = sys.argv[1], sys.argv[2], sys.argv[3]
    y, m = int(month[:4]), int(month[5:7])
    bounds = []
    d = 1
    while True:
        t = int(time.mktime((y, m, d, 0, 0, 0, 0, 0, -1)))
        if time.localtime(t).tm_mon != m and bounds:
            bounds.append(t)
            break
        bounds.append(t)
        d += 1
    names = [time.strftime("%Y-%m-%d", time.localtime(t))
             for t in bounds[:-1]]
    os.makedirs(out, exist_ok=True)
    files = [open(os.path.join(out, "day-%s.txt" % n), "w") for n in names]
    for line in open(src):
        f = line.split("|", 10)
        end = int(f[8])
        start = int(f[7]) if f[7] != "Unknown" else end
        # the days [bounds[i], bounds[i+1]) the job ran in (sacct's
        # window test: started before the day's end, ended in it or later)
        i0 = max(0, bisect.bisect_right(bounds, start) - 1)
        i1 = min(len(files) - 1, bisect.bisect_right(bounds, end) - 1)
        for i in range(i0, i1 + 1):
            files[i].write(line)
    for h in files:
        h.close()


if __name__ == "__main__":
    main()
