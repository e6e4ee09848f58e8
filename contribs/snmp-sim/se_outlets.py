"""snmpsim variation module: PDU outlets that play a power trace.

snmpsim (PyPI, a real SNMP agent we did not write) serves recordings of
real devices (snmpsim-data's UPS/apc-8641.snmprec: an APC rack PDU with
rPDU2 outlet rows).  This module makes chosen outlet rows live: their power
and energy follow a column of a power trace (contribs/trace/FORMAT.md)
played through `se-trace` (the C implementation of the trace semantics;
the tests' truth is contribs/python/selab/trace.py, so the two are held to
each other).  A row of the recording names it:

    1.3.6.1.4.1.318.1.1.26.9.4.3.1.7.1|2:se_outlets|column=n1,what=power
    1.3.6.1.4.1.318.1.1.26.9.4.3.1.11.1|2:se_outlets|column=n1,what=energy,unit_j=360000,base_j=1.1e9

    power:  round(share x watts(now) / scale_w)
    energy: floor((base_j + share x joules(epoch, now)) / unit_j): an
            integer register counts only whole units, as a PDU's does
Keys: column, what (power|energy), share (1), scale_w (1), unit_j (3600),
base_j (0); what=fixed,value=N: the INTEGER N (a bench's many rows that go
through this module so that counts= counts their GETs).

Options (snmpsim-command-responder
--variation-module-options=se_outlets:trace=T,epoch=E,se_trace=BIN,control=C):
the trace, the wall-clock time of its time 0, the se-trace binary, and a
control file (JSON, optional, re-read when it changes) for faults:
    {"delay_s": 2.0}                       every answer that late
    {"reset": {"<OID>": WALL}}             that energy register restarts
                                           from 0 at WALL
    {"absent": ["<OID>", ...]}             noSuchInstance (an outlet
                                           renumbered away)
and optionally counts=FILE: the GET requests answered so far, per
recording ({"pdu-a": 12, ...}, JSON, rewritten at each request), counted
at a request's first variable (one live row of ours: our maps GET only
those), for the tests that count the GETs a PDU sees (the PDU poller,
issue #44).
"""
import json
import math
import os
import subprocess
import time

STATE = {}


def _options(text):
    out = {}
    for item in (text or "").split(","):
        if "=" in item:
            k, v = item.split("=", 1)
            out[k.strip()] = v.strip()
    return out


def init(**context):
    if context.get("mode") != "variating":
        return
    opts = _options(context.get("options"))
    for key in ("trace", "epoch", "se_trace"):
        if key not in opts:
            raise ValueError("se_outlets: option %s= is required" % key)
    STATE.update(trace=opts["trace"], epoch=float(opts["epoch"]),
                 se_trace=opts["se_trace"], control=opts.get("control"),
                 control_mtime=None, faults={}, cache={},
                 counts=opts.get("counts"), gets={})


def _se_trace(*args):
    key = args
    hit = STATE["cache"].get(key)
    if hit is not None:
        return hit
    out = subprocess.run([STATE["se_trace"], *args], capture_output=True,
                         text=True, timeout=10)
    if out.returncode:
        raise RuntimeError("se-trace %s: %s" % (args, out.stderr.strip()))
    val = float(out.stdout.split()[0])
    if len(STATE["cache"]) > 4096:
        STATE["cache"].clear()
    STATE["cache"][key] = val
    return val


def _faults():
    path = STATE.get("control")
    if not path:
        return {}
    try:
        mtime = os.stat(path).st_mtime_ns
    except FileNotFoundError:
        STATE["faults"], STATE["control_mtime"] = {}, None
        return {}
    if mtime != STATE["control_mtime"]:
        with open(path, encoding="utf-8") as f:
            text = f.read()
        STATE["faults"] = json.loads(text) if text.strip() else {}
        STATE["control_mtime"] = mtime
    return STATE["faults"]


def _joules(column, t0, t1):
    """Exact joules of the column between trace times t0 <= t1."""
    if t1 <= t0:
        return 0.0
    return _se_trace("joules", STATE["trace"], column, "%.6f" % t0,
                     "%.6f" % t1)


def _value(settings, oid_text, faults, now):
    if settings.get("what") == "fixed":    # a bench's rows, counted
        return int(settings["value"])
    share = float(settings.get("share", 1))
    column = settings["column"]
    t = now - STATE["epoch"]
    if settings.get("what") == "power":
        watts = _se_trace("watts", STATE["trace"], column, "%.6f" % t)
        return int(round(share * watts / float(settings.get("scale_w", 1))))
    reset_at = faults.get("reset", {}).get(oid_text)
    if reset_at is not None and now >= reset_at:
        base, start = 0.0, reset_at - STATE["epoch"]
    else:
        base, start = float(settings.get("base_j", 0)), 0.0
    joules = base + share * (_joules(column, start, t) if t >= start else
                             -_joules(column, t, start))
    return int(math.floor(joules / float(settings.get("unit_j", 3600))))


def _count_get(data_file):
    """One more GET answered from data_file's recording (counts=FILE)."""
    name = os.path.splitext(os.path.basename(str(data_file)))[0]
    STATE["gets"][name] = STATE["gets"].get(name, 0) + 1
    tmp = STATE["counts"] + ".tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        json.dump(STATE["gets"], f)
    os.replace(tmp, STATE["counts"])


def variate(oid, tag, value, **context):
    if not context["nextFlag"] and not context["exactMatch"]:
        return context["origOid"], tag, context["errorStatus"]
    if context["setFlag"]:
        return context["origOid"], tag, context["errorStatus"]
    faults = _faults()
    delay = float(faults.get("delay_s", 0))
    first = context["varsRemaining"] == context["varsTotal"] - 1
    if first and STATE.get("counts"):
        _count_get(context.get("dataFile", "?"))
    if delay > 0 and first:
        time.sleep(delay)      # once per request: its first variable
    oid_text = str(oid)
    if oid_text in faults.get("absent", []):
        # snmpsim's own answer for a name it has no value for
        return context["origOid"], tag, context["errorStatus"]
    settings = dict(item.split("=", 1) for item in str(value).split(","))
    return oid, tag, _value(settings, oid_text, faults, time.time())


def shutdown(**context):
    STATE.clear()
