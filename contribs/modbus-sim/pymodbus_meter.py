#!/usr/bin/env python3
"""An independent Modbus power meter, served by pymodbus, playing a power trace.

Our own simulator (contribs/modbus-sim) shares the register codec with the
plugin, so a bug in that codec would pass every test against it.  This meter
is written separately: pymodbus frames the protocol and Python's struct
encodes the registers, so the plugin is proven against a peer that is not
ourselves.  The trace's power and true energy come from `se-trace` (the
single implementation of the trace semantics).

    pymodbus_meter.py --trace T --epoch E --unit 1:node1 [--unit 2:node2]
        --port 15020 [--host 127.0.0.1] --power-reg 52 --power-type float32
        --energy-reg 72 --energy-type float32 --energy-scale 3600000
        [--order abcd] [--power-scale 1] [--pidfile F]

Registers are shared by input and holding function codes.
"""
import argparse
import asyncio
import os
import struct
import subprocess
import time

from pymodbus.simulator import DataType, SimData, SimDevice
from pymodbus.server import ModbusTcpServer

FORMATS = {  # struct format (big-endian) and register count
    "int16": (">h", 1), "uint16": (">H", 1),
    "int32": (">i", 2), "uint32": (">I", 2), "float32": (">f", 2),
    "int64": (">q", 4), "uint64": (">Q", 4),
}


def encode(value, vtype, order):
    """Registers for value as vtype with word order abcd/cdab/badc/dcba."""
    fmt, words = FORMATS[vtype]
    if vtype != "float32":
        value = int(round(value))
        bits = 16 * words
        if vtype.startswith("uint"):
            value %= 1 << bits           # counters wrap like real registers
    raw = struct.pack(fmt, value)       # A B C D ... (big-endian)
    pairs = [raw[i:i + 2] for i in range(0, len(raw), 2)]
    if order in ("cdab", "dcba"):
        pairs.reverse()                 # low word first
    if order in ("badc", "dcba"):
        pairs = [p[::-1] for p in pairs]  # bytes swapped in each word
    return [int.from_bytes(p, "big") for p in pairs]


class TracePlayer:
    """Trace values at the current wall-clock time, via se-trace."""

    def __init__(self, se_trace, trace, epoch):
        self.se_trace, self.trace, self.epoch = se_trace, trace, epoch

    def _query(self, *args):
        out = subprocess.run([self.se_trace, *args], capture_output=True,
                             text=True, check=True).stdout
        return float(out)

    def watts(self, column):
        now = time.time() - self.epoch
        return self._query("watts", self.trace, column, "%.6f" % now)

    def joules(self, column):
        now = time.time() - self.epoch
        return self._query("joules", self.trace, column, "0", "%.6f" % now)


def make_device(unit, column, args, player):
    top = max(args.power_reg + 4, args.energy_reg + 4 if args.energy_reg >= 0 else 0)

    async def on_access(function_code, start_address, address, count,
                        current_registers, set_values):
        # Compute the registers of this request from the trace, now.
        values = {}
        values.update(zip(range(args.power_reg, args.power_reg + 4),
                          encode(player.watts(column) / args.power_scale,
                                 args.power_type, args.order)))
        if args.energy_reg >= 0:
            values.update(zip(range(args.energy_reg, args.energy_reg + 4),
                              encode(player.joules(column) / args.energy_scale,
                                     args.energy_type, args.order)))
        for reg, word in values.items():
            idx = reg - start_address
            if 0 <= idx < len(current_registers):
                current_registers[idx] = word
        return None

    return SimDevice(id=unit,
                     simdata=[SimData(0, count=top, values=0,
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
    parser.add_argument("--power-reg", type=int, required=True)
    parser.add_argument("--power-type", default="float32", choices=FORMATS)
    parser.add_argument("--power-scale", type=float, default=1.0)
    parser.add_argument("--energy-reg", type=int, default=-1)
    parser.add_argument("--energy-type", default="float32", choices=FORMATS)
    parser.add_argument("--energy-scale", type=float, default=1.0)
    parser.add_argument("--order", default="abcd",
                        choices=["abcd", "cdab", "badc", "dcba"])
    parser.add_argument("--se-trace", default="se-trace")
    parser.add_argument("--pidfile")
    args = parser.parse_args()

    player = TracePlayer(args.se_trace, args.trace, args.epoch)
    devices = []
    for spec in args.unit:
        unit, column = spec.split(":", 1)
        devices.append(make_device(int(unit), column, args, player))
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
