#!/usr/bin/env python3
"""A Redfish service that plays a power trace: a server's BMC or a rack PDU.

It serves a DMTF mockup tree (../shared/redfish/mockups/public-rackmount1 or
public-pdu) with live power and energy readings computed from a power trace
(contribs/trace/FORMAT.md) through `se-trace` (the C implementation of the
trace semantics; the tests' truth is contribs/python/selab/trace.py, written
separately), sessions with an idle timeout, HTTPS, and faults switched on at
run time through a control file.  See README.md beside this file.

    redfish_sim.py --mockup DIR/public-rackmount1 --trace T --column n1 \\
        --epoch E --addr 127.0.0.1 --port 0 --port-file F --pidfile P \\
        --cert C --key K --user admin --password-file PW --control CTL

Only the Python standard library is used (http.server, ssl, json).
"""
import argparse
import base64
import copy
import datetime
import hmac
import json
import math
import os
import re
import secrets
import shutil
import signal
import socket
import ssl
import subprocess
import sys
import threading
import time
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

PROFILES = ("all", "joules", "kwh", "wh", "power", "legacy", "none")
KWH = 3.6e6
# The reset time a counter in service reports until the first reset here.
IN_SERVICE_SINCE = "2024-01-01T00:00:00+00:00"
BMC_CHASSIS = "/redfish/v1/Chassis/1U"
PDU = "/redfish/v1/PowerEquipment/RackPDUs/1"


def log(msg):
    sys.stderr.write("%s redfish-sim: %s\n"
                     % (time.strftime("%H:%M:%S"), msg))
    sys.stderr.flush()


def iso(wall):
    """A wall-clock instant as a Redfish DateTimeOffset, to the ms."""
    return datetime.datetime.fromtimestamp(
        wall, datetime.timezone.utc).isoformat(timespec="milliseconds")


def duration(seconds):
    """Seconds as an ISO 8601 duration (Edm.Duration): PT2S, PT0.5S."""
    return "PT%sS" % ("%g" % seconds)


# ------------------------------------------------------------ the trace
class TracePlayer:
    """Power and exact energy of trace columns through se-trace."""

    def __init__(self, se_trace, trace, epoch):
        self.se_trace, self.trace, self.epoch = se_trace, trace, epoch
        self.caps = {}      # column -> CapHistory (--follow-limit)

    def _query(self, *args):
        out = subprocess.run([self.se_trace, *args], capture_output=True,
                             text=True, timeout=30)
        if out.returncode != 0:
            raise RuntimeError("se-trace %s: %s"
                               % (" ".join(args), out.stderr.strip()))
        return float(out.stdout)

    def watts(self, column, wall):
        w = self._query("watts", self.trace, column,
                        "%.6f" % (wall - self.epoch))
        caps = self.caps.get(column)
        return min(w, caps.at(wall - self.epoch)) if caps else w

    def joules(self, column, wall):
        """Exact joules from the epoch (trace time 0) to *wall*; negative
        before the epoch.  A capped column draws min(trace, cap)."""
        caps = self.caps.get(column)
        if caps:
            return caps.joules(wall - self.epoch)
        return self.between(column, 0.0, wall - self.epoch, math.inf)

    def between(self, column, t0, t1, cap):
        """Exact joules of min(trace, cap) from trace time t0 to t1
        (negative when t1 < t0: se-trace wants T0 <= T1)."""
        if t1 < t0:
            return -self.between(column, t1, t0, cap)
        span = (self.trace, column, "%.6f" % t0, "%.6f" % t1)
        if math.isinf(cap):
            return self._query("joules", *span)
        return self._query("capped", *span, "%.6f" % cap)

    def check_column(self, column):
        self.watts(column, self.epoch)


class CapHistory:
    """A column's power limit over trace time (--follow-limit): the node
    draws min(trace, cap) from each change on, as a BMC holding a Control's
    SetPoint would once converged (a real one takes its correction time;
    this one is instant, so a test knows the truth).  Every change is
    appended to the cap log as "COLUMN TRACE_TIME CAP_W" ("inf": no limit),
    the format selab.capped reads; the first line is the cap at start,
    which also holds before it."""

    def __init__(self, player, column, cap, t, cap_log):
        self.player, self.column, self.cap_log = player, column, cap_log
        self.lock = threading.Lock()
        # [(trace time, cap, joules from trace time 0 to it)]
        self.segments = [(0.0, cap, 0.0)]
        self.set(cap, t)

    def _segment(self, t):
        seg = self.segments[0]
        for s in self.segments:
            if s[0] > t:
                break
            seg = s
        return seg

    def at(self, t):
        with self.lock:
            return self._segment(t)[1]

    def joules(self, t):
        with self.lock:
            start, cap, j = self._segment(t)
        return j + self.player.between(self.column, start, t, cap)

    def set(self, cap, t):
        """The limit in force from trace time t on (math.inf: none)."""
        with self.lock:
            start, old, j = self.segments[-1]
            if t > start:
                j += self.player.between(self.column, start, t, old)
                self.segments.append((t, cap, j))
            else:       # the start's own line, or a clock that stepped back
                self.segments[-1] = (start, cap, j)
                t = start if t < start else t
            if self.cap_log:
                with open(self.cap_log, "a") as f:
                    f.write("%s %.9f %s\n" % (self.column, t, repr(cap)))



class Counter:
    """One metered channel: a share of a trace column, with an energy
    counter that counts from a start reading (hardware in service) and can
    be reset (then it counts from 0 at the reset instant)."""

    def __init__(self, name, column, share, start_j):
        self.name, self.column, self.share = name, column, share
        self.offset_j = start_j     # counter = offset + share x E(0, t)
        self.lifetime_offset_j = start_j
        self.reset_time = None      # None: IN_SERVICE_SINCE

    def reset(self, wall, base_j):
        """Counter back to 0 at *wall*, where the column's integral from
        the epoch is *base_j*."""
        self.offset_j = -self.share * base_j
        self.reset_time = wall


class Readings:
    """The readings of every counter, refreshed once a sensing interval,
    at ticks epoch + k x interval, as a BMC samples its sensors."""

    def __init__(self, player, counters, interval):
        self.player, self.counters, self.interval = player, counters, interval
        self.lock = threading.Lock()
        self.tick = None
        self.cache = {}     # column -> (watts, joules from the epoch)

    def tick_of(self, wall):
        k = math.floor((wall - self.player.epoch) / self.interval)
        return self.player.epoch + k * self.interval

    def _refresh(self, wall):
        tick = self.tick_of(wall)
        if tick != self.tick:
            self.cache = {}
            for c in self.counters.values():
                if c.column not in self.cache:
                    self.cache[c.column] = (
                        self.player.watts(c.column, tick),
                        self.player.joules(c.column, tick))
            self.tick = tick
        return tick

    def get(self, name):
        """{watts, joules, lifetime_j, reset_time, time} of counter *name*
        at the last tick."""
        with self.lock:
            tick = self._refresh(time.time())
            c = self.counters[name]
            w, base = self.cache[c.column]
            return dict(watts=c.share * w,
                        joules=max(0.0, c.offset_j + c.share * base),
                        lifetime_j=c.lifetime_offset_j + c.share * base,
                        reset_time=c.reset_time, time=tick)

    def jump_all(self, joules):
        """Every counter's reading jumps by its share of *joules* (negative:
        back), with no reset said: a faulty counter."""
        with self.lock:
            for c in self.counters.values():
                c.offset_j += c.share * joules

    def reset_all(self, wall=None):
        """Every counter back to 0 at the last tick (the reset is seen by
        the sensors when they sample: the reading at that tick is 0)."""
        with self.lock:
            tick = self._refresh(time.time() if wall is None else wall)
            for c in self.counters.values():
                c.reset(tick, self.cache[c.column][1])
            return tick


# ------------------------------------------------------------ the tree
def load_tree(mockup):
    """{URI: resource} of a mockup folder (DIR/index.json is /redfish/v1),
    and the $metadata document."""
    tree, metadata = {}, None
    for root, _dirs, files in os.walk(mockup):
        rel = os.path.relpath(root, mockup)
        uri = "/redfish/v1" + ("" if rel == "." else "/" + rel)
        if "index.json" in files:
            with open(os.path.join(root, "index.json"), encoding="utf-8") as f:
                try:
                    res = json.load(f)
                except ValueError as e:
                    raise SystemExit("%s/index.json: %s" % (root, e))
            # "only intended for use in mockups" (the DMTF's validator
            # fails a service that sends it)
            res.pop("@Redfish.Copyright", None)
            fix_action_targets(res, uri)
            tree[uri] = res
        if "index.xml" in files and rel == "$metadata":
            with open(os.path.join(root, "index.xml"), "rb") as f:
                metadata = f.read()
    if "/redfish/v1" not in tree:
        raise SystemExit("%s: no index.json (the service root): not a "
                         "mockup folder" % mockup)
    return tree, metadata


def fix_action_targets(res, uri):
    """Action targets as the spec wants them, URI/Actions/Type.Action (some
    mockup resources have URI/Type.Action, which the validator fails)."""
    for name, action in (res.get("Actions") or {}).items():
        if name.startswith("#") and isinstance(action, dict) and \
                "target" in action:
            action["target"] = uri + "/Actions/" + name[1:]


def members(tree, uri):
    return [m["@odata.id"] for m in tree[uri].get("Members", [])]


def drop(tree, uri):
    """Remove a resource, everything under it, and its collection entry."""
    for u in [u for u in tree if u == uri or u.startswith(uri + "/")]:
        del tree[u]
    parent = uri.rsplit("/", 1)[0]
    if parent in tree and "Members" in tree[parent]:
        tree[parent]["Members"] = [m for m in tree[parent]["Members"]
                                   if m.get("@odata.id") != uri]
        tree[parent]["Members@odata.count"] = len(tree[parent]["Members"])


def add_member(tree, coll, uri, resource):
    tree[uri] = resource
    ms = tree[coll]["Members"]
    if {"@odata.id": uri} not in ms:
        ms.append({"@odata.id": uri})
        tree[coll]["Members@odata.count"] = len(ms)


class Live:
    """A field of a resource filled from a counter at each GET:
    kind is watts, kwh, joules; path the JSON path ("EnergykWh" for an
    excerpt, "" for a Sensor resource itself, "PowerControl/0")."""

    def __init__(self, path, kind, counter, sensor=False):
        self.path, self.kind, self.counter = path, kind, counter
        self.sensor = sensor        # a Sensor resource: ReadingTime etc.


def _energy_fields(kind, r, lifetime=True):
    """Floored, as a counter steps once a whole unit is in: kWh to 1 Wh,
    Wh and joules to whole units."""
    unit_j, scale = {"kwh": (3600.0, 1000), "wh": (3600.0, 1),
                     "joules": (1.0, 1)}[kind]

    def units(joules):
        n = math.floor(joules / unit_j)
        return n if scale == 1 else n / scale

    fields = {"Reading": units(r["joules"])}
    if lifetime:
        fields["LifetimeReading"] = units(r["lifetime_j"])
    fields["SensorResetTime"] = (iso(r["reset_time"]) if r["reset_time"]
                                 else IN_SERVICE_SINCE)
    return fields


def live_fields(live, r, interval):
    """The JSON fields *live* puts in its object from reading *r*."""
    if live.kind == "watts":
        fields = {"Reading": round(r["watts"], 1)}
    elif live.kind == "legacy":
        return {"PowerConsumedWatts": round(r["watts"], 1)}
    else:
        # LifetimeReading and SensorResetTime are in the EnergykWh excerpt
        # only; an EnergyJoules excerpt has Reading (Sensor_v1.xml)
        fields = _energy_fields(live.kind, r,
                                lifetime=live.kind == "kwh" or live.sensor)
        if not live.sensor and live.kind == "joules":
            del fields["SensorResetTime"]
    if live.sensor:
        fields["ReadingTime"] = iso(r["time"])
        fields["SensingInterval"] = duration(interval)
    return fields


def sensor_like(template, uri, ident, name, reading_type, units):
    s = copy.deepcopy(template)
    s.update({"@odata.id": uri, "Id": ident, "Name": name,
              "ReadingType": reading_type, "ReadingUnits": units})
    if "Actions" in s:
        s["Actions"] = {"#Sensor.ResetMetrics": {
            "target": uri + "/Actions/Sensor.ResetMetrics"}}
    return s


def build_bmc(tree, profile, shares):
    """Shape public-rackmount1 into the profile's BMC; returns {URI:
    [Live]} and the counter names with their share of the node."""
    ch = BMC_CHASSIS
    sens = ch + "/Sensors"
    psus = ch + "/PowerSubsystem/PowerSupplies"
    lives = {}
    counters = {"node": 1.0}

    def bind(uri, *ls):
        lives.setdefault(uri, []).extend(ls)

    # a fresh BMC: no sessions yet
    for u in members(tree, "/redfish/v1/SessionService/Sessions"):
        drop(tree, u)
    # two supplies splitting the node's power: Bay2 is made present, like Bay1
    bay1 = tree[psus + "/Bay1"]
    bay2 = copy.deepcopy(bay1)
    bay2.update({"@odata.id": psus + "/Bay2", "Id": "Bay2",
                 "Name": "Power Supply Bay 2",
                 "Status": {"State": "Enabled", "Health": "OK"},
                 "Metrics": {"@odata.id": psus + "/Bay2/Metrics"},
                 "Assembly": {"@odata.id": psus + "/Bay2/Assembly"},
                 "Actions": {"#PowerSupply.Reset": {
                     "target": psus + "/Bay2/Actions/PowerSupply.Reset"}}})
    bay2["Location"]["PartLocation"].update(ServiceLabel="PSU 2",
                                            LocationOrdinalValue=1)
    bay2["Links"] = {"Outlet": {"@odata.id": bay1["Links"]["Outlet"][
        "@odata.id"].replace("Outlets/A4", "Outlets/B4")}}
    tree[psus + "/Bay2"] = bay2
    asm = copy.deepcopy(tree[psus + "/Bay1/Assembly"])
    asm = json.loads(json.dumps(asm).replace("/Bay1/", "/Bay2/"))
    tree[psus + "/Bay2/Assembly"] = asm
    bay1["Status"] = {"State": "Enabled", "Health": "OK"}
    m1 = tree[psus + "/Bay1/Metrics"]
    m1["Status"] = {"State": "Enabled", "Health": "OK"}
    m2 = json.loads(json.dumps(m1).replace("PS1", "PS2").replace(
        "/Bay1/", "/Bay2/").replace("Supply 1", "Supply 2"))
    tree[psus + "/Bay2/Metrics"] = m2
    for i, share in enumerate(shares, 1):
        counters["psu%d" % i] = share
        bind(psus + "/Bay%d/Metrics" % i,
             Live("InputPowerWatts", "watts", "psu%d" % i),
             Live("OutputPowerWatts", "watts", "psu%d" % i))
        bind(sens + "/PS%dInputPower" % i,
             Live("", "watts", "psu%d" % i, sensor=True))
    # the chassis' own sensors and excerpts
    env = tree[ch + "/EnvironmentMetrics"]
    total_e = tree[sens + "/TotalEnergy"]
    bind(ch + "/EnvironmentMetrics", Live("PowerWatts", "watts", "node"))
    bind(sens + "/TotalPower", Live("", "watts", "node", sensor=True))
    bind(ch + "/Power", Live("PowerControl/0", "legacy", "node"))
    kwh = profile in ("all", "kwh")
    joules = profile in ("all", "joules")
    if kwh:
        env["EnergykWh"] = {"DataSourceUri": sens + "/TotalEnergy"}
        bind(ch + "/EnvironmentMetrics", Live("EnergykWh", "kwh", "node"))
        bind(sens + "/TotalEnergy", Live("", "kwh", "node", sensor=True))
        for i in range(1, len(shares) + 1):
            bind(psus + "/Bay%d/Metrics" % i,
                 Live("EnergykWh", "kwh", "psu%d" % i))
            bind(sens + "/PS%dEnergy" % i,
                 Live("", "kwh", "psu%d" % i, sensor=True))
    else:
        for u in ("TotalEnergy", "PS1Energy", "PS2Energy"):
            drop(tree, sens + "/" + u)
        for i in (1, 2):
            tree[psus + "/Bay%d/Metrics" % i].pop("EnergykWh", None)
    if joules:
        uri = sens + "/TotalEnergyJoules"
        add_member(tree, sens, uri, sensor_like(
            total_e, uri, "TotalEnergyJoules", "Total Energy (J)",
            "EnergyJoules", "J"))
        env["EnergyJoules"] = {"DataSourceUri": uri}
        bind(ch + "/EnvironmentMetrics", Live("EnergyJoules", "joules", "node"))
        bind(uri, Live("", "joules", "node", sensor=True))
    if profile in ("all", "wh"):        # a Sensor only: no excerpt has Wh
        uri = sens + "/TotalEnergyWh"
        add_member(tree, sens, uri, sensor_like(
            total_e, uri, "TotalEnergyWh", "Total Energy (Wh)",
            "EnergyWh", "W.h"))
        bind(uri, Live("", "wh", "node", sensor=True))
    if profile in ("legacy", "none"):
        chassis = tree[ch]
        gone = ("EnvironmentMetrics", "PowerSubsystem", "Sensors") + (
            ("Power",) if profile == "none" else ())
        for key in gone:
            chassis.pop(key, None)
            chassis.pop(key + "@Redfish.Deprecated", None)
            drop(tree, ch + "/" + key)
    return lives, counters


def build_pdu(tree, outlets):
    """Shape public-pdu: the mapped outlets play their trace column's share
    (PowerWatts, EnergykWh and the sensors they name); the others read 0 W
    and keep the mockup's EnergykWh.  outlets: [(id, column, share)]."""
    lives, counters = {}, {}
    for u in members(tree, "/redfish/v1/SessionService/Sessions"):
        drop(tree, u)
    known = {u.rsplit("/", 1)[1] for u in members(tree, PDU + "/Outlets")}
    mapped = {o[0] for o in outlets}
    for oid in sorted(known):
        uri = PDU + "/Outlets/" + oid
        res = tree[uri]
        if oid not in mapped:
            if "PowerWatts" in res:     # A4 and A5 have no readings
                res["PowerWatts"]["Reading"] = 0.0
                src = res["PowerWatts"].get("DataSourceUri")
                if src in tree:
                    tree[src]["Reading"] = 0.0
            continue
        res.setdefault("PowerWatts", {})   # metered here even if not there
        res.setdefault("EnergykWh", {})
        lives.setdefault(uri, []).extend([
            Live("PowerWatts", "watts", oid), Live("EnergykWh", "kwh", oid)])
        for key, kind in (("PowerWatts", "watts"), ("EnergykWh", "kwh")):
            src = res.get(key, {}).get("DataSourceUri")
            if src in tree:
                lives.setdefault(src, []).append(
                    Live("", kind, oid, sensor=True))
    bad = mapped - known
    if bad:
        raise SystemExit("--outlet: no outlet %s in %s/Outlets (there are: %s)"
                         % (", ".join(sorted(bad)), PDU,
                            " ".join(sorted(known))))
    for oid, _column, share in outlets:
        counters[oid] = share
    return lives, counters


def set_path(obj, path, fields):
    for part in [p for p in path.split("/") if p]:
        obj = obj[int(part)] if isinstance(obj, list) else \
            obj.setdefault(part, {})
    obj.update(fields)


# ------------------------------------------------------------ faults
class Faults:
    """The control file: one fault a line, `#` comments.  Lasting lines
    (latency, freeze, http, truncate, notjson, watts, down) hold while they
    stay in the file; actions (reset, reboot) act once each time the file
    is loaded.  A line may end with path=PREFIX: it then concerns only the
    URIs that start with PREFIX."""

    LASTING = {"latency": 1, "freeze": 0, "http": 1, "truncate": (0, 1),
               "notjson": 0, "watts": 1, "drop": 0}
    ACTIONS = {"reset": 0, "reboot": (0, 2), "jump": 1}

    def __init__(self, path, on_action):
        self.path, self.on_action = path, on_action
        self.stamp = None
        self.lines = []     # [(keyword, args, path prefix)]
        self.lock = threading.Lock()
        self.check_lock = threading.Lock()

    def check(self):
        """Reload the file if it changed.  One thread at a time: the watcher
        and every request call this, and a reset or reboot must act once."""
        if not self.path:
            return
        with self.check_lock:
            self._check()

    def _check(self):
        try:
            st = os.stat(self.path)
            stamp = (st.st_ino, st.st_size, st.st_mtime_ns)
        except FileNotFoundError:
            stamp = None
        if stamp == self.stamp:
            return
        self.stamp = stamp
        text = ""
        if stamp is not None:
            with open(self.path, encoding="utf-8") as f:
                text = f.read()
        self.load(text)

    def load(self, text):
        lines, actions = [], []
        for n, raw in enumerate(text.splitlines(), 1):
            words = raw.split("#", 1)[0].split()
            if not words:
                continue
            prefix = None
            if words[-1].startswith("path="):
                prefix = words.pop()[5:]
            key, args = words[0], words[1:]
            want = self.LASTING.get(key, self.ACTIONS.get(key))
            lo, hi = want if isinstance(want, tuple) else (want, want)
            if want is None or not lo <= len(args) <= hi:
                log("%s:%d: ignored: %r (see README.md, faults)"
                    % (self.path, n, raw.strip()))
                continue
            (actions if key in self.ACTIONS else lines).append(
                (key, args, prefix))
        with self.lock:
            self.lines = lines
        log("faults: %s" % (" ; ".join(
            " ".join([k, *a] + (["path=" + p] if p else []))
            for k, a, p in lines + actions) or "none"))
        for key, args, _prefix in actions:
            self.on_action(key, args)

    def get(self, key, uri=None):
        """The arguments of the lasting line *key* that concerns *uri*, or
        None."""
        with self.lock:
            for k, args, prefix in self.lines:
                if k == key and (prefix is None or uri is None or
                                 uri.startswith(prefix)):
                    return args
        return None


# ------------------------------------------------------------ the service
class Service:
    def __init__(self, args):
        self.args = args
        tree, self.metadata = load_tree(args.mockup)
        self.player = TracePlayer(args.se_trace, args.trace, args.epoch)
        start_j = args.energy_start_kwh * KWH
        if args.kind == "bmc":
            shares = [float(s) for s in args.psu_shares.split(",")]
            if len(shares) != 2 or abs(sum(shares) - 1.0) > 1e-9:
                raise SystemExit("--psu-shares: two shares adding up to 1, "
                                 "not %r" % args.psu_shares)
            lives, names = build_bmc(tree, args.profile, shares)
            column = args.column
            counters = {n: Counter(n, column, s, start_j * s)
                        for n, s in names.items()}
        else:
            outlets = [parse_outlet(o) for o in args.outlet]
            lives, names = build_pdu(tree, outlets)
            counters = {oid: Counter(oid, col, share, start_j)
                        for oid, col, share in outlets}
        for c in {c.column for c in counters.values()}:
            self.player.check_column(c)
        sess = tree["/redfish/v1/SessionService"]
        sess["SessionTimeout"] = int(math.ceil(args.session_timeout))
        self.tree, self.lives = tree, lives
        self.limit_uri = None
        if args.follow_limit:
            self._follow_limit(column)
        self.readings = Readings(self.player, counters, args.sensing_interval)
        self.sessions = {}          # token -> {id, user, last}
        self.sessions_lock = threading.Lock()
        # GETs answered, for tests that count what a client asks (not a
        # Redfish resource: /_sim/counts, outside the tree, never linked)
        self.gets = 0
        self.down_until = 0.0       # rebooting: connections dropped
        self.boots = 1
        self.faults = Faults(args.control, self.action)
        self.password = read_password(args)

    # -- the power limit the node obeys (--follow-limit)
    def _follow_limit(self, column):
        uri = BMC_CHASSIS + "/Controls/PowerLimit"
        res = self.tree.get(uri)
        if res is None or res.get("ControlType") != "Power":
            raise SystemExit("--follow-limit: the mockup has no power "
                             "Control %s" % uri)
        self.limit_uri = uri
        self.lives.setdefault(uri, []).append(Live("Sensor", "watts", "node"))
        self.player.caps[column] = CapHistory(
            self.player, column, limit_watts(res),
            time.time() - self.args.epoch, self.args.cap_log)

    def control_patched(self, uri, res):
        """A PATCH of Control *uri* took: the node obeys it from now."""
        if uri == self.limit_uri:
            self.player.caps[self.args.column].set(
                limit_watts(res), time.time() - self.args.epoch)

    # -- actions from the control file or ResetMetrics
    def action(self, key, args):
        if key == "reset":
            tick = self.readings.reset_all()
            log("counters reset at %s" % iso(tick))
        elif key == "jump":
            self.readings.jump_all(float(args[0]))
            log("counters jump by %s J (times each one's share)" % args[0])
        elif key == "reboot":
            down = float(args[0]) if args else 0.0
            keep = (args[1] if len(args) > 1 else "keep") != "zero"
            with self.sessions_lock:
                n = len(self.sessions)
                self.sessions.clear()
            self.boots += 1
            self.down_until = time.monotonic() + down
            if not keep:
                self.readings.reset_all()
            log("reboot: %d sessions forgotten, down %.1f s, counters %s"
                % (n, down, "kept" if keep else "back to 0"))

    # -- sessions
    def login(self, user, password):
        if user != self.args.user or not hmac.compare_digest(
                (password or "").encode(), self.password.encode()):
            return None
        token = secrets.token_hex(16)
        sid = secrets.token_hex(8)
        with self.sessions_lock:
            self.sessions[token] = dict(id=sid, user=user, last=time.monotonic(),
                                        created=time.time())
        return token, sid

    def session_of(self, token):
        with self.sessions_lock:
            s = self.sessions.get(token)
            if s is None:
                return None
            now = time.monotonic()
            if now - s["last"] > self.args.session_timeout:
                del self.sessions[token]
                log("session %s expired (idle %.1f s)"
                    % (s["id"], now - s["last"]))
                return None
            s["last"] = now
            return s

    def delete_session(self, sid):
        with self.sessions_lock:
            for token, s in list(self.sessions.items()):
                if s["id"] == sid:
                    del self.sessions[token]
                    return True
        return False

    def session_resource(self, s):
        uri = "/redfish/v1/SessionService/Sessions/" + s["id"]
        return {"@odata.type": "#Session.v1_8_0.Session", "@odata.id": uri,
                "Id": s["id"], "Name": "User Session",
                "UserName": s["user"], "CreatedTime": iso(s["created"])}

    def sessions_collection(self):
        limit = time.monotonic() - self.args.session_timeout
        with self.sessions_lock:
            for token in [t for t, s in self.sessions.items()
                          if s["last"] < limit]:
                del self.sessions[token]
            ids = sorted(s["id"] for s in self.sessions.values())
        base = "/redfish/v1/SessionService/Sessions"
        return {"@odata.type": "#SessionCollection.SessionCollection",
                "@odata.id": base, "Name": "Session Collection",
                "Members@odata.count": len(ids),
                "Members": [{"@odata.id": base + "/" + i} for i in ids]}

    # -- resources
    def resource(self, uri):
        """A resource with its live fields filled, or None."""
        if uri == "/redfish/v1/SessionService/Sessions":
            return self.sessions_collection()
        if uri.startswith("/redfish/v1/SessionService/Sessions/"):
            sid = uri.rsplit("/", 1)[1]
            with self.sessions_lock:
                for s in self.sessions.values():
                    if s["id"] == sid:
                        return self.session_resource(s)
            return None
        res = self.tree.get(uri)
        if res is None:
            return None
        lives = self.lives.get(uri)
        if not lives:
            return res
        res = copy.deepcopy(res)
        watts = self.faults.get("watts", uri)
        for live in lives:
            r = self.readings.get(live.counter)
            if watts is not None:       # a BMC that reads 0 W, or nonsense
                r["watts"] = float(watts[0])
            set_path(res, live.path,
                     live_fields(live, r, self.args.sensing_interval))
        return res

    def expand(self, obj, levels, which, under_links=False):
        """$expand: navigation links ({"@odata.id"} alone) replaced by the
        resources, *levels* deep; which is '.' (subordinate), '~' (Links)
        or '*' (both)."""
        if levels <= 0:
            return obj
        if isinstance(obj, list):
            return [self.expand(x, levels, which, under_links) for x in obj]
        if not isinstance(obj, dict):
            return obj
        if set(obj) == {"@odata.id"}:
            want = which == "*" or (which == "~") == under_links
            target = self.resource(obj["@odata.id"]) if want else None
            if target is None:
                return obj
            return self.expand(target, levels - 1, which)
        return {k: (v if k.startswith("@") else
                    self.expand(v, levels, which, under_links or k == "Links"))
                for k, v in obj.items()}


def parse_outlet(text):
    parts = text.split(":")
    try:
        if len(parts) not in (2, 3) or not parts[0] or not parts[1]:
            raise ValueError
        share = float(parts[2]) if len(parts) == 3 else 1.0
        if not 0 <= share <= 1e3:
            raise ValueError
    except ValueError:
        raise SystemExit("--outlet %r: expected OUTLET:COLUMN[:SHARE], e.g. "
                         "A1:n1:0.5" % text)
    return parts[0], parts[1], share


def read_password(args):
    if args.password is not None:
        return args.password
    try:
        with open(args.password_file, encoding="utf-8") as f:
            return f.read().strip()
    except OSError as e:
        raise SystemExit("--password-file %s: %s" % (args.password_file, e))


EXPAND = re.compile(r"^([.*~])(?:\(\$levels=(\d+)\))?$")
OPEN = ("/redfish", "/redfish/v1", "/redfish/v1/odata", "/redfish/v1/$metadata")


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"     # keep-alive, as BMCs answer
    server_version = "redfish-sim"
    sys_version = ""

    def version_string(self):
        return self.server_version
    timeout = 120                     # an idle keep-alive connection ends

    def setup(self):
        super().setup()
        # headers and body go out in two writes: without this, Nagle holds
        # the body until the client's delayed ACK (40 ms per request)
        self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

    def log_message(self, fmt, *args):
        if self.server.service.args.verbose:
            log("%s %s" % (self.client_address[0], fmt % args))

    # -- plumbing
    def _uri(self):
        parsed = urllib.parse.urlsplit(self.path)
        path = urllib.parse.unquote(parsed.path)
        if len(path) > 1:
            path = path.rstrip("/")
        return path, urllib.parse.parse_qs(parsed.query,
                                           keep_blank_values=True)

    def _body(self):
        n = int(self.headers.get("Content-Length") or 0)
        return self.rfile.read(n) if n else b""

    def _send(self, code, body=None, headers=(), ctype="application/json"):
        svc = self.server.service
        uri = self._uri()[0]
        data = b""
        if body is not None:
            data = body if isinstance(body, bytes) else \
                json.dumps(body, indent=1).encode()
        if svc.faults.get("notjson", uri) is not None and data:
            data = b"<html><body><h1>502 Bad Gateway</h1></body></html>\n"
        cut = svc.faults.get("truncate", uri)
        length = len(data)
        if cut is not None and data:
            data = data[:len(data) // 2]
            if not cut:              # a short but well-framed answer
                length = len(data)
        self.send_response(code)
        self.send_header("Content-Type", ctype + "; charset=utf-8")
        self.send_header("OData-Version", "4.0")
        self.send_header("Content-Length", str(length))
        for k, v in headers:
            self.send_header(k, v)
        if cut is not None and cut and data:
            self.send_header("Connection", "close")
            self.close_connection = True
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(data)

    def _error(self, code, message, headers=()):
        self._send(code, {"error": {
            "code": "Base.1.19.GeneralError", "message": message,
            "@Message.ExtendedInfo": [{
                "@odata.type": "#Message.v1_2_0.Message",
                "MessageId": "Base.1.19.GeneralError", "Message": message,
                "Severity": "Critical", "MessageSeverity": "Critical",
                "Resolution": "None."}]}}, headers)

    def _faults_before(self, uri):
        """Faults that act before an answer; False: no answer at all."""
        svc = self.server.service
        svc.faults.check()
        if time.monotonic() < svc.down_until or \
                svc.faults.get("drop", uri) is not None:
            self.close_connection = True      # rebooting: no answer
            return False
        while svc.faults.get("freeze", uri) is not None:
            time.sleep(0.05)                 # accepted, never answered
            svc.faults.check()
        lat = svc.faults.get("latency", uri)
        if lat:
            time.sleep(float(lat[0]))
        code = svc.faults.get("http", uri)
        if code:
            hdr = [("Retry-After", "2")] if code[0] == "503" else []
            self._error(int(code[0]), "fault: HTTP %s" % code[0], hdr)
            return False
        return True

    def _auth(self, uri):
        """The session or user of the request, or None after a 401."""
        svc = self.server.service
        token = self.headers.get("X-Auth-Token")
        if token:
            s = svc.session_of(token)
            if s:
                return s
        elif svc.args.basic and (self.headers.get("Authorization") or ""
                                 ).startswith("Basic "):
            try:
                user, _, pw = base64.b64decode(self.headers["Authorization"][
                    6:]).decode().partition(":")
            except (ValueError, UnicodeDecodeError):
                user, pw = None, None
            if user == svc.args.user and hmac.compare_digest(
                    pw.encode(), svc.password.encode()):
                return {"id": None, "user": user}
        hdr = [("WWW-Authenticate", 'Basic realm="redfish-sim"')] \
            if svc.args.basic else []
        self._error(401, "authentication required for %s" % uri, hdr)
        return None

    # -- methods
    def do_GET(self):
        svc = self.server.service
        uri, query = self._uri()
        if uri == "/_sim/counts":
            with svc.sessions_lock:
                return self._send(200, {"GET": svc.gets})
        with svc.sessions_lock:
            svc.gets += 1
        if not self._faults_before(uri):
            return
        if uri == "/redfish":
            return self._send(200, {"v1": "/redfish/v1/"})
        if uri == "/redfish/v1/$metadata" and svc.metadata:
            return self._send(200, svc.metadata, ctype="application/xml")
        if uri not in OPEN and self._auth(uri) is None:
            return
        res = svc.resource(uri)
        if res is None:
            return self._error(404, "no resource %s" % uri)
        spec = (query.get("$expand") or [None])[0]
        if spec is not None:
            m = EXPAND.match(spec)
            if not m or int(m.group(2) or 1) > 6 or int(m.group(2) or 1) < 1:
                return self._error(400, "$expand=%s: this service takes "
                                   ". * or ~ with $levels 1 to 6" % spec)
            res = svc.expand(res, int(m.group(2) or 1), m.group(1))
        if "only" in query and "Members" in res and len(res["Members"]) == 1:
            res = svc.resource(res["Members"][0]["@odata.id"])
        self._send(200, res)

    def do_HEAD(self):
        self.do_GET()

    def do_POST(self):
        svc = self.server.service
        uri, _ = self._uri()
        body = self._body()
        if not self._faults_before(uri):
            return
        if uri == "/redfish/v1/SessionService/Sessions":
            try:
                req = json.loads(body or b"{}")
                user, pw = req.get("UserName"), req.get("Password")
            except (ValueError, AttributeError):
                return self._error(400, "the body is not a JSON object")
            got = svc.login(user, pw)
            if got is None:
                log("login refused for user %r" % user)
                return self._error(401, "wrong user name or password")
            token, sid = got
            loc = "/redfish/v1/SessionService/Sessions/" + sid
            return self._send(201, svc.resource(loc),
                              [("X-Auth-Token", token), ("Location", loc)])
        if self._auth(uri) is None:
            return
        if uri.endswith("ResetMetrics"):
            tick = svc.readings.reset_all()
            log("ResetMetrics %s: counters reset at %s" % (uri, iso(tick)))
            return self._send(204)
        self._error(405, "POST %s is not supported here" % uri)

    def do_DELETE(self):
        svc = self.server.service
        uri, _ = self._uri()
        if not self._faults_before(uri):
            return
        if self._auth(uri) is None:
            return
        prefix = "/redfish/v1/SessionService/Sessions/"
        if uri.startswith(prefix) and svc.delete_session(uri[len(prefix):]):
            return self._send(204)
        self._error(404 if uri.startswith(prefix) else 405,
                    "DELETE %s: no such session" % uri)

    def do_PATCH(self):
        svc = self.server.service
        uri, _ = self._uri()
        body = self._body()
        if not self._faults_before(uri) or self._auth(uri) is None:
            return
        res = svc.tree.get(uri)
        if self.command != "PATCH" or res is None or not str(
                res.get("@odata.type", "")).startswith("#Control."):
            return self._error(405, "%s %s is not supported by this "
                               "simulator (PATCH of a Control only)"
                               % (self.command, uri))
        try:
            req = json.loads(body or b"{}")
            if not isinstance(req, dict):
                raise ValueError
        except ValueError:
            return self._error(400, "the body is not a JSON object")
        problem = patch_control(res, req)
        if problem:
            return self._error(400, problem)
        svc.control_patched(uri, res)
        log("PATCH %s: ControlMode %s, SetPoint %s" % (
            uri, res.get("ControlMode"), res.get("SetPoint")))
        self._send(200, svc.resource(uri))

    do_PUT = do_PATCH


# A Control's writable properties (Control.v1_7_0; the power cap's redfish
# knob, issue #45, writes SetPoint and ControlMode of Controls/PowerLimit).
CONTROL_MODES = ("Automatic", "Override", "Manual", "Disabled")


def patch_control(res, req):
    """Apply a PATCH to Control res; None, or what is wrong (as a BMC's
    PropertyValueOutOfRange / PropertyUnknown / PropertyNotWritable)."""
    for key in req:
        if key not in ("SetPoint", "ControlMode"):
            return "%s: not writable here (SetPoint, ControlMode)" % key
    sp = req.get("SetPoint", res.get("SetPoint"))
    if not isinstance(sp, (int, float)) or isinstance(sp, bool):
        return "SetPoint %r is not a number" % (sp,)
    lo, hi = res.get("AllowableMin"), res.get("AllowableMax")
    if (lo is not None and sp < lo) or (hi is not None and sp > hi):
        return "SetPoint %g is out of range (AllowableMin %s, " \
            "AllowableMax %s)" % (sp, lo, hi)
    mode = req.get("ControlMode", res.get("ControlMode"))
    if mode not in CONTROL_MODES:
        return "ControlMode %r is not one of %s" % (
            mode, ", ".join(CONTROL_MODES))
    res["SetPoint"], res["ControlMode"] = sp, mode
    return None


def limit_watts(res):
    """The watts a power Control holds the node to: its SetPoint unless
    Disabled (Automatic, Override and Manual all enforce one)."""
    if res.get("ControlMode") == "Disabled":
        return math.inf
    return float(res["SetPoint"])


class Server(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True
    request_queue_size = 64

    def handle_error(self, request, client_address):
        """One line, not a traceback: clients that fail TLS verification or
        hang up are part of the tests."""
        log("%s: %s" % (client_address[0], sys.exc_info()[1]))


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--mockup", required=True,
                   help="mockup folder (public-rackmount1, public-pdu)")
    p.add_argument("--kind", choices=("bmc", "pdu"),
                   help="bmc (Chassis/1U) or pdu (RackPDUs/1); default: "
                        "pdu if the mockup has PowerEquipment")
    p.add_argument("--trace", required=True)
    p.add_argument("--column", help="bmc: the trace column of the node "
                   "(default: the first)")
    p.add_argument("--outlet", action="append", default=[],
                   help="pdu: OUTLET:COLUMN[:SHARE], e.g. A1:n1:0.5 "
                        "(repeat; unmapped outlets read 0 W)")
    p.add_argument("--epoch", type=float, default=None,
                   help="wall-clock Unix time of trace time 0 (default now)")
    p.add_argument("--profile", choices=PROFILES, default="all")
    p.add_argument("--psu-shares", default="0.55,0.45")
    p.add_argument("--energy-start-kwh", type=float, default=8765.4321,
                   help="counters' reading at the epoch (in service)")
    p.add_argument("--sensing-interval", type=float, default=1.0)
    p.add_argument("--addr", default="127.0.0.1")
    p.add_argument("--port", type=int, default=0)
    p.add_argument("--cert"), p.add_argument("--key")
    p.add_argument("--http", action="store_true", help="plain HTTP")
    p.add_argument("--user", default="admin")
    p.add_argument("--password"), p.add_argument("--password-file")
    p.add_argument("--no-basic", dest="basic", action="store_false",
                   help="refuse HTTP basic authentication")
    p.add_argument("--session-timeout", type=float, default=30.0,
                   help="idle seconds after which a session token expires")
    p.add_argument("--control", help="fault control file")
    p.add_argument("--follow-limit", action="store_true",
                   help="bmc: the node draws min(trace, the SetPoint of "
                        "Controls/PowerLimit) while it is not Disabled")
    p.add_argument("--cap-log", help="with --follow-limit: append each "
                   "limit as 'COLUMN TRACE_TIME CAP_W' (inf: none)")
    p.add_argument("--se-trace", default=None)
    p.add_argument("--pidfile"), p.add_argument("--port-file")
    p.add_argument("--log")
    p.add_argument("--verbose", action="store_true")
    args = p.parse_args()

    if args.log:
        sys.stderr = open(args.log, "a", buffering=1)
    if args.http == bool(args.cert):
        p.error("give --cert and --key (HTTPS) or --http, not both")
    if args.cert and not args.key:
        p.error("--cert needs --key")
    if (args.password is None) == (args.password_file is None):
        p.error("give one of --password and --password-file")
    if not args.sensing_interval > 0:
        p.error("--sensing-interval must be > 0")
    if args.epoch is None:
        args.epoch = time.time()
    args.se_trace = args.se_trace or shutil.which("se-trace") or \
        os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..",
                     "_build", "stage", "bin", "se-trace")
    if args.kind is None:
        args.kind = "pdu" if os.path.isdir(
            os.path.join(args.mockup, "PowerEquipment")) else "bmc"
    if args.follow_limit and args.kind != "bmc":
        p.error("--follow-limit is for --kind bmc")
    if args.cap_log and not args.follow_limit:
        p.error("--cap-log needs --follow-limit")
    if args.kind == "bmc" and args.outlet:
        p.error("--outlet is for --kind pdu")
    if args.kind == "pdu" and not args.outlet:
        p.error("--kind pdu needs at least one --outlet OUTLET:COLUMN")
    if args.kind == "bmc" and args.column is None:
        out = subprocess.run([args.se_trace, "columns", args.trace],
                             capture_output=True, text=True)
        if out.returncode != 0:
            p.error("se-trace columns %s: %s" % (args.trace,
                                                 out.stderr.strip()))
        args.column = out.stdout.split()[0]

    service = Service(args)
    server = Server((args.addr, args.port), Handler)
    server.service = service
    if args.cert:
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        ctx.load_cert_chain(args.cert, args.key)
        # the handshake in the connection's thread, not in accept(): a
        # client that connects and says nothing must not stop the others
        server.socket = ctx.wrap_socket(server.socket, server_side=True,
                                        do_handshake_on_connect=False)
    port = server.server_address[1]
    if args.port_file:
        write_atomic(args.port_file, "%d\n" % port)

    def stop(_sig, _frame):
        threading.Thread(target=server.shutdown, daemon=True).start()

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    signal.signal(signal.SIGUSR1, lambda *_: service.faults.check())
    watcher = threading.Thread(target=watch, args=(service,), daemon=True)
    watcher.start()
    log("%s %s on %s://%s:%d, profile %s, sensing every %g s, epoch %.3f"
        % (args.kind, args.mockup, "http" if args.http else "https",
           args.addr, port, args.profile if args.kind == "bmc" else "-",
           args.sensing_interval, args.epoch))
    if args.pidfile:
        write_atomic(args.pidfile, "%d\n" % os.getpid())
    try:
        server.serve_forever(poll_interval=0.2)
    finally:
        server.server_close()
        for f in (args.pidfile, args.port_file):
            if f:
                try:
                    os.unlink(f)
                except OSError:
                    pass
        log("stopped")


def watch(service):
    """Load the control file within 0.1 s of a change, requests or not
    (a reset or a reboot acts when the file is loaded)."""
    while True:
        try:
            service.faults.check()
        except Exception as e:      # a half-written file: next round
            log("control file: %s" % e)
        time.sleep(0.1)


def write_atomic(path, text):
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        f.write(text)
    os.replace(tmp, path)


if __name__ == "__main__":
    main()
