#!/usr/bin/env python3
"""An independent Modbus power meter, served by pymodbus, playing a power trace.

Our own simulator (contribs/modbus-sim) shares the register codec with the
plugin, so a bug in that codec would pass every test against it.  This meter
is written separately: pymodbus frames the protocol and Python's struct
encodes the registers, so the plugin is proven against a peer that is not
ourselves.  The trace's power and true energy come from `se-trace` (the
single implementation of the trace semantics).

    pymodbus_meter.py --trace T --epoch E --unit 1:node1 [--unit 2:node2]
        --port 15020 [--host 127.0.0.1] [--pidfile F]
        (--model sdm630|sdm72d|em24|pm5300
         | --power-reg 52 --power-type float32 [--power-scale 1]
           [--energy-reg 72 --energy-type float32 --energy-scale 3600000]
           [--order abcd] [--kind input|holding|both] [--max-regs N])
        [--energy-start-kwh 23456.7]

The energy register reads as a meter's does: an integer register holds the
whole units accumulated (floor: a meter advances only once a whole unit has
accumulated); signed types count their non-negative half and then start
again at 0, unsigned ones wrap at 2^16/32/64; a float32 register holds the
exact reading rounded to the nearest float32 (ties to even).  With
--energy-start-kwh the register reads that many kWh at the epoch (a meter
in service), and the trace's energy is added from there.

A model serves only its own register kind (the other function code gets
exception 0x02, as the meter answers) and refuses reads longer than its
documented limit (exception 0x03).  A custom map serves both kinds unless
--kind says otherwise.
"""
import argparse
import asyncio
import math
import os
import struct
import subprocess
import time
from fractions import Fraction

from pymodbus.constants import ExcCodes
from pymodbus.simulator import DataType, SimData, SimDevice
from pymodbus.server import ModbusTcpServer

FORMATS = {  # struct format (big-endian) and register count
    "int16": (">h", 1), "uint16": (">H", 1),
    "int32": (">i", 2), "uint32": (">I", 2), "float32": (">f", 2),
    "int64": (">q", 4), "uint64": (">Q", 4),
}

# The built-in meters, transcribed here from the manufacturers' documents
# (not from our C table, so that a slip in one shows against the other).
# Addresses are the 0-based wire (PDU) addresses.
KWH = 3600000
MODELS = {
    # Eastron SDM630-Modbus V2 protocol: input registers (function 04),
    # 30053 "Total system power" W and 30073 "Total import kWh", IEEE 754
    # floats, high word first; at most 40 parameters (80 registers) a read.
    "sdm630": dict(kind="input", max_regs=80, order="abcd",
                   power=(52, "float32", 1.0),
                   energy=(72, "float32", KWH)),
    # Eastron SDM72D-M: the same two input registers; 30 parameters a read.
    "sdm72d": dict(kind="input", max_regs=60, order="abcd",
                   power=(52, "float32", 1.0),
                   energy=(72, "float32", KWH)),
    # Carlo Gavazzi EM24-DIN protocol, table 2.3-1: physical 0028h "W"
    # INT32 in W x 10, 003Eh "kWh(+) TOT" INT32 in kWh x 10; 32-bit values
    # least significant word first; 11 words a request.  The EM24 answers
    # functions 03 and 04 alike; our plugin's model reads 04 (input).
    "em24": dict(kind="input", max_regs=11, order="cdab",
                 power=(0x28, "int32", 0.1),
                 energy=(0x3E, "int32", KWH // 10)),
    # Schneider PM5300 register list: holding registers (function 03),
    # register 3060 "Active Power Total" Float32 kW, 3204 "Active Energy
    # Delivered" INT64 Wh; register numbers are 1-based; most significant
    # register first.
    "pm5300": dict(kind="holding", max_regs=125, order="abcd",
                   power=(3059, "float32", 1000.0),
                   energy=(3203, "int64", 3600)),
}
READ_INPUT, READ_HOLDING = 4, 3


def _words(raw, order):
    """Big-endian bytes A B C D ... as registers in word order `order`."""
    pairs = [raw[i:i + 2] for i in range(0, len(raw), 2)]
    if order in ("cdab", "dcba"):
        pairs.reverse()                 # low word first
    if order in ("badc", "dcba"):
        pairs = [p[::-1] for p in pairs]  # bytes swapped in each word
    return [int.from_bytes(p, "big") for p in pairs]


def encode(value, vtype, order):
    """Registers of an instantaneous value (power): integers round to
    nearest and saturate, floats round to nearest float32."""
    fmt, words = FORMATS[vtype]
    if vtype != "float32":
        bits = 16 * words
        lo, hi = ((-(1 << (bits - 1)), (1 << (bits - 1)) - 1)
                  if vtype.startswith("int") else (0, (1 << bits) - 1))
        value = min(max(int(round(value)), lo), hi)
    return _words(struct.pack(fmt, value), order)


def nearest_float32(exact):
    """The float32 nearest to an exact Fraction (ties to even), checked
    against both neighbours of Python's own double -> float rounding."""
    first = struct.unpack(">f", struct.pack(">f", float(exact)))[0]
    bits = struct.unpack(">I", struct.pack(">f", first))[0]
    candidates = [first]
    for nb in (bits - 1, bits + 1):
        if 0 <= nb < 0x7F800000:        # positive finite floats
            candidates.append(struct.unpack(">f", struct.pack(">I", nb))[0])
    best = min(candidates, key=lambda f: (abs(Fraction(f) - exact),
                                          struct.unpack(">I", struct.pack(
                                              ">f", f))[0] & 1))
    return best


def encode_energy(units, vtype, order):
    """Registers of an energy register holding `units` (an exact Fraction
    of register units) as a meter holds it."""
    fmt, words = FORMATS[vtype]
    if vtype == "float32":
        return _words(struct.pack(fmt, nearest_float32(units)), order)
    count = math.floor(units)           # whole units only
    bits = 16 * words
    if vtype.startswith("uint"):
        count %= 1 << bits              # wraps like the real register
        raw = struct.pack(fmt, count)
    else:
        count %= 1 << (bits - 1)        # counts 0 .. 2^(bits-1)-1, again
        raw = struct.pack(fmt, count)
    return _words(raw, order)


class TracePlayer:
    """Trace values at the current wall-clock time, via se-trace."""

    def __init__(self, se_trace, trace, epoch):
        self.se_trace, self.trace, self.epoch = se_trace, trace, epoch

    def _query(self, *args):
        out = subprocess.run([self.se_trace, *args], capture_output=True,
                             text=True, check=True).stdout
        return out.strip()

    def watts(self, column):
        now = time.time() - self.epoch
        return float(self._query("watts", self.trace, column, "%.6f" % now))

    def joules(self, column):
        """Exact joules since the epoch (se-trace prints them to the mJ);
        0 before the epoch."""
        now = time.time() - self.epoch
        if now <= 0:
            return Fraction(0)
        return Fraction(self._query("joules", self.trace, column, "0",
                                    "%.6f" % now))


class Meter:
    """One unit's register map: which kind, where, in which type."""

    def __init__(self, args):
        if args.model:
            m = MODELS[args.model]
            self.kind, self.max_regs, self.order = (m["kind"], m["max_regs"],
                                                    m["order"])
            self.power = m["power"]
            self.energy = m["energy"]
        else:
            self.kind = args.kind
            self.max_regs = args.max_regs
            self.order = args.order
            self.power = (args.power_reg, args.power_type, args.power_scale)
            self.energy = ((args.energy_reg, args.energy_type,
                            args.energy_scale) if args.energy_reg >= 0
                           else None)
        if args.max_regs_given is not None:
            self.max_regs = args.max_regs_given
        # the reading at the epoch, in register units, exactly
        self.start_units = Fraction(0)
        if args.energy_start_kwh is not None:
            if not self.energy:
                raise SystemExit("--energy-start-kwh needs an energy register")
            self.start_units = (Fraction(args.energy_start_kwh) * KWH /
                                Fraction(self.energy[2]))

    def span(self):
        points = [p for p in (self.power, self.energy) if p]
        lo = min(p[0] for p in points)
        hi = max(p[0] + FORMATS[p[1]][1] for p in points)
        return lo, hi - lo

    def serves(self, function_code):
        if self.kind == "input":
            return function_code == READ_INPUT
        if self.kind == "holding":
            return function_code == READ_HOLDING
        return function_code in (READ_INPUT, READ_HOLDING)


def make_device(unit, column, meter, player):
    """A pymodbus device for one unit playing COLUMN of the trace."""
    return device_of(unit, meter, lambda: (
        player.watts(column), player.joules(column)))


def device_of(unit, meter, reading):
    """A pymodbus device serving METER's registers; READING() gives the
    power (W) and the energy counted so far (J, a Fraction or a number)
    at the instant of each request (also load_meter.py's)."""
    start, count = meter.span()

    async def on_access(function_code, start_address, address, count,
                        current_registers, set_values):
        if set_values is not None or not meter.serves(function_code):
            return ExcCodes.ILLEGAL_ADDRESS     # not this meter's registers
        if count > meter.max_regs:
            return ExcCodes.ILLEGAL_VALUE
        # Compute the registers of this request, now.
        watts, joules = reading()
        values = {}
        reg, vtype, scale = meter.power
        values.update(zip(range(reg, reg + FORMATS[vtype][1]),
                          encode(watts / scale, vtype, meter.order)))
        if meter.energy:
            reg, vtype, scale = meter.energy
            units = meter.start_units + Fraction(joules) / Fraction(scale)
            values.update(zip(range(reg, reg + FORMATS[vtype][1]),
                              encode_energy(units, vtype, meter.order)))
        for reg, word in values.items():
            idx = reg - start_address
            if 0 <= idx < len(current_registers):
                current_registers[idx] = word
        return None

    return SimDevice(id=unit,
                     simdata=[SimData(start, count=count, values=0,
                                      datatype=DataType.REGISTERS)],
                     action=on_access)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trace", required=True)
    parser.add_argument("--epoch", type=float, required=True)
    parser.add_argument("--unit", action="append", required=True,
                        help="ID:COLUMN, repeatable")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--model", choices=sorted(MODELS))
    parser.add_argument("--kind", default="both",
                        choices=["input", "holding", "both"])
    parser.add_argument("--power-reg", type=int)
    parser.add_argument("--power-type", default="float32", choices=FORMATS)
    parser.add_argument("--power-scale", type=float, default=1.0)
    parser.add_argument("--energy-reg", type=int, default=-1)
    parser.add_argument("--energy-type", default="float32", choices=FORMATS)
    parser.add_argument("--energy-scale", type=Fraction, default=Fraction(1))
    parser.add_argument("--order", default="abcd",
                        choices=["abcd", "cdab", "badc", "dcba"])
    parser.add_argument("--max-regs", dest="max_regs_given", type=int)
    parser.add_argument("--energy-start-kwh", type=Fraction,
                        help="the energy register's reading at the epoch")
    parser.add_argument("--se-trace", default="se-trace")
    parser.add_argument("--pidfile")
    args = parser.parse_args()
    if args.model and args.power_reg is not None:
        parser.error("--model and a custom map exclude each other")
    if not args.model and args.power_reg is None:
        parser.error("give --model NAME or --power-reg ...")
    args.max_regs = 125

    meter = Meter(args)
    player = TracePlayer(args.se_trace, args.trace, args.epoch)
    devices = []
    for spec in args.unit:
        unit, column = spec.split(":", 1)
        devices.append(make_device(int(unit), column, meter, player))
    if args.pidfile:
        with open(args.pidfile, "w") as handle:
            handle.write("%d\n" % os.getpid())
    async def serve():
        # pymodbus binds its transport to the running event loop.
        server = ModbusTcpServer(devices, address=(args.host, args.port))
        await server.serve_forever()

    asyncio.run(serve())


if __name__ == "__main__":
    main()
