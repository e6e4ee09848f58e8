#!/usr/bin/python3
"""Write the seed corpora of tests/fuzz/corpus/ (run from anywhere).

Seeds are well-formed inputs of each target, built here so that what they
mean is readable: valid Modbus TCP and RTU answers (CRC included), DCMI
responses, RRD rows, key files in the man pages' syntax.  Crash inputs
found later are kept beside them as crash-*, never regenerated."""
import os
import struct
import sys

top = os.path.join(os.path.dirname(os.path.abspath(__file__)), "corpus")


def put(target, name, data):
    d = os.path.join(top, target)
    os.makedirs(d, exist_ok=True)
    if isinstance(data, str):
        data = data.encode()
    with open(os.path.join(d, "seed-" + name), "wb") as f:
        f.write(data)


def crc16(b):
    crc = 0xFFFF
    for x in b:
        crc ^= x
        for _ in range(8):
            crc = (crc >> 1) ^ 0xA001 if crc & 1 else crc >> 1
    return crc


# ---------------------------------------------------------------- Modbus
TYPES = ["int16", "uint16", "int32", "uint32", "float32", "uint64", "int64"]
WORDS = [1, 1, 2, 2, 2, 4, 4]


def regs_abcd(value, t):
    fmt = {0: ">h", 1: ">H", 2: ">i", 3: ">I", 4: ">f", 5: ">Q", 6: ">q"}[t]
    return struct.pack(fmt, value)


def frame_seeds():
    # c0 power type, c1 energy type, c2 flags (0x20 echo), c3 distance
    cases = [
        ("float32-uint32", 4, 3, 0x20, 2, 1234.5, 987654),
        ("int16-uint16", 0, 1, 0x20, 1, 230, 60000),
        ("uint32-uint64", 3, 5, 0x30, 4, 4500, 2 ** 40),
        ("int32-int64-far", 2, 6, 0x20, 200, 3000, 2 ** 50),
        ("int64-float32", 6, 4, 0x20 | 0x40, 8, 77, 12345.25),
        ("power-only", 4, 0x80, 0x20, 0, 1000.0, 0),
        ("energy-only", 0x80, 3, 0x20, 0, 0, 42),
    ]
    for name, pt, et, flags, dist, pv, ev in cases:
        cfg = bytes([pt, et, flags, dist])
        pw = regs_abcd(pv, pt % 7) if not pt & 0x80 else b""
        en = regs_abcd(ev, et % 7) if not et & 0x80 else b""
        pwords = WORDS[pt % 7] if pw else 0
        ewords = WORDS[et % 7] if en else 0
        if pw and en and max(dist + ewords, pwords) <= 125:
            span = max(dist + ewords, pwords)
            data = bytearray(2 * span)
            data[0:len(pw)] = pw
            data[2 * dist:2 * dist + len(en)] = en
            pdus = [bytes(data)]
        else:
            pdus = [p for p in (pw, en) if p]
        for transport in ("tcp", "rtu"):
            chunks = b""
            fc = 3 if flags & 0x10 else 4
            for i, d in enumerate(pdus):
                pdu = bytes([fc, len(d)]) + d
                if transport == "tcp":
                    adu = struct.pack(">HHHB", 1 + i, 0, len(pdu) + 1, 1) + pdu
                else:
                    body = bytes([1]) + pdu
                    adu = body + struct.pack("<H", crc16(body))
                chunks += bytes([len(adu)]) + adu
            put("fuzz_modbus_" + transport, name, cfg + chunks)
        # the same without echo: the header as the first request expects
    exc = {"tcp": struct.pack(">HHHB", 1, 0, 3, 1) + bytes([0x84, 0x02]),
           "rtu": bytes([1, 0x84, 0x02])}
    exc["rtu"] += struct.pack("<H", crc16(exc["rtu"]))
    for transport, adu in exc.items():
        put("fuzz_modbus_" + transport, "exception",
            bytes([4, 3, 0x00, 2, len(adu)]) + adu)
        put("fuzz_modbus_" + transport, "short", bytes([4, 3, 0x20, 2, 3])
            + adu[:3])


def codec_seeds():
    for t in range(7):
        for order in range(4):
            regs = bytes(range(1 + t, 9 + t))
            put("fuzz_modbus_codec", "%s-%d" % (TYPES[t], order),
                bytes([t, order]) + regs + struct.pack("<d", 1234.56 * (t + 1)))
    put("fuzz_modbus_codec", "nan", bytes([4, 0]) + b"\x7f\xc0\0\0" * 2
        + struct.pack("<d", float("nan")))
    put("fuzz_modbus_codec", "huge", bytes([5, 3]) + b"\xff" * 8
        + struct.pack("<d", 1e300))


def map_seeds():
    put("fuzz_modbus_map", "shares",
        "# rack 1\nNodes=n1,n2 Device=tcp://pdu1:502 Unit=3 Offset=0 Share=equal\n"
        "Nodes=n3 Device=tcp://pdu1:502 Unit=3 Offset=0 Share=0.25\n"
        "Nodes=n4 Device=none\n")
    put("fuzz_modbus_map", "models",
        'Nodes=n1 Model=em24 MaxPower=3000\nNodes=n2,n3 Device="rtu:/dev/ttyS1" '
        "Unit=7 Model=pm5300\nNodes=gpu01 Share=0.6 Offset=200\n")
    put("fuzz_modbus_map", "default", "Nodes=n5\n")


# ------------------------------------------------------------------ DCMI
def dcmi_seeds():
    pr = bytes([0x02, 0x00, 0xDC]) + struct.pack("<HHHHII", 250, 100, 400, 240,
                                                 1700000000, 1000) + b"\x40"
    put("fuzz_bmc_dcmi", "power-reading", bytes([10]) + pr)
    put("fuzz_bmc_dcmi", "inactive", bytes([10]) + pr[:-1] + b"\x00")
    caps = bytes([0x01, 0x00, 0xDC, 1, 5, 2, 3, 0x05, 0x41, 0x81])
    put("fuzz_bmc_dcmi", "periods", bytes([20]) + caps)
    put("fuzz_bmc_dcmi", "no-dcmi", bytes([10, 0x02, 0xC1]))
    put("fuzz_bmc_dcmi", "privilege", bytes([10, 0x02, 0xD4, 0xDC]))


# ------------------------------------------------------------------- RRD
def rrd_seeds():
    def series(name, start, step, minw, maxw, t0_ms, len_ms, rows):
        hdr = struct.pack(">IHBBII", start, step - 1, minw, maxw, t0_ms, len_ms)
        put("fuzz_rrd_series", name, hdr + b"".join(struct.pack("<d", r)
                                                   for r in rows))
    nan = float("nan")
    series("flat", 700000000, 10, 0, 50, 5000, 60000, [300.0] * 12)
    series("ramp-gaps", 700000000, 10, 10, 50,
           15000, 45000, [100, 120, nan, 160, 5000, 200, -3, 240, 260, nan])
    series("sine", 700000100, 10, 0, 50, 25000, 30000,
           [300 + 150 * ((-1) ** i) for i in range(20)])
    series("all-nan", 700000000, 60, 0, 50, 0, 600000, [nan] * 8)


# ---------------------------------------------------------------- config
def conf_seeds():
    put("fuzz_conf_keys", "modbus", b"\x00" +
        b"EnergyModbusDevice=tcp://meter-%n:502\nEnergyModbusModel=sdm630\n"
        b"EnergyModbusUnit=3\nEnergyModbusFrequency=0.5\n"
        b"EnergyModbusTimeout=800\nEnergyModbusMaxPower=3000\n")
    put("fuzz_conf_keys", "modbus-custom", b"\x00" +
        b"EnergyModbusDevice=rtu:/dev/ttyS0\nEnergyModbusBaud=19200\n"
        b"EnergyModbusParity=E\nEnergyModbusPowerRegister=12\n"
        b"EnergyModbusPowerType=float32\nEnergyModbusWordOrder=cdab\n"
        b"EnergyModbusPowerScale=1\nEnergyModbusEnergyRegister=342\n"
        b"EnergyModbusEnergyType=uint32\nEnergyModbusEnergyScale=3600000\n")
    put("fuzz_conf_keys", "bmc", b"\x01" +
        b"EnergyBMCMethod=dcmi\nEnergyBMCHost=%n-bmc\nEnergyBMCUser=admin\n"
        b"EnergyBMCPrivilege=operator\nEnergyBMCFrequency=2\n"
        b"EnergyBMCTimeout=3\nEnergyBMCMaxWatts=5000\n"
        b"EnergyBMCWorkaroundFlags=authcap,intel20\nEnergyBMCCipherSuite=3\n")
    put("fuzz_conf_keys", "rrd", b"\x02" +
        b"EnergyRRDFile=/var/lib/collectd/%n/power.rrd\n"
        b"EnergyRRDDataSource=value\nEnergyRRDConsolidation=AVERAGE\n"
        b"EnergyRRDFrequency=10\nEnergyRRDMaxAge=60\nEnergyRRDMinWatt=5\n"
        b"EnergyRRDMaxWatt=2000\nEnergyRRDDaemon=none\n")
    put("fuzz_conf_keys", "ext-sensors", b"\x03" +
        b"JobData=energy\nNodeData=energy,temp\nSwitchData=energy\n"
        b"EnergyRRA=power\nEnergyPathRRD=/rrd/%n/power.rrd\n"
        b"TempPathRRD=/rrd/%n/temp.rrd\nMinWatt=10\nMaxWatt=500\n"
        b"ReadThreads=4\nMaxAge=60\nEnergyHistory=3600\n")


def policy_seeds():
    put("fuzz_freq_policy", "rules",
        "# energy_policy.conf\nDefaultPolicy=min_energy MaxSlowdown=10%\n"
        "EnergyTolerance=2% MinHistoryFrequencies=2\n"
        "Frequencies=1200000,1800000,2400000\nPowerBudget=50000\n"
        "Rule=batch Partition=batch QOS=normal,low DefaultFreq=2.0GHz "
        "AllowedMin=1.2GHz AllowedMax=2.4GHz AllowedGovernors=userspace,"
        "performance OutOfRange=clamp\n"
        "Rule=gpu Partition=gpu User=alice,bob Policy=min_time EnergyCap=5e6 "
        "PowerCap=400 DefaultGovernor=performance\nRule=rest\n")
    put("fuzz_freq_policy", "empty", "")


def history_seeds():
    put("fuzz_freq_history", "runs",
        b"\x05\x14\x00\x00\x00\x00\x01# se-cpufreq-history 1\n"
        b"# key  khz  elapsed_s  energy_j  [jobid]\n"
        b"alice/lulesh 2400000 100.0 30000 1234\n"
        b"alice/lulesh 1800000 118.5 26000 1240\n"
        b"alice/lulesh 1200000 160 27500\n"
        b"bob/app 2400000 50 9000 7\nbroken line\n")


def trace_seeds():
    ex = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..",
                      "contribs", "trace", "examples")
    for f in sorted(os.listdir(ex)):
        with open(os.path.join(ex, f), "rb") as fh:
            put("fuzz_power_trace", f, fh.read())
    put("fuzz_power_trace", "steps",
        "@repeat 60\ntime n1 n2\n0 100 0\n10 100 50\n10 300 50\n59.5 0 1e4\n")


if __name__ == "__main__":
    frame_seeds()
    codec_seeds()
    map_seeds()
    dcmi_seeds()
    rrd_seeds()
    conf_seeds()
    policy_seeds()
    history_seeds()
    trace_seeds()
    sys.exit(0)
