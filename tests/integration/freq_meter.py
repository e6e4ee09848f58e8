"""A Modbus TCP power meter whose power follows a node's CPU frequency.

For the cpufreq tests: the trace-playing simulators cannot know which
frequency Slurm set, so this meter reads the node's fake cpufreq tree (the
host side of contribs/cluster's bind mounts) at every request and serves

    P = idle_w + sum over its N CPUs of dyn_w / N * (f_cpu / f_max) ** 3

(60 W + 240 W * (f/2.4 GHz)^3 when every CPU runs at f), with the
effective frequency of a CPU being scaling_setspeed under the
userspace governor, scaling_max_freq otherwise.  Registers follow the
Eastron SDM630 map the plugin knows (input registers, float32 big-endian):
power at 52 (W), import energy at 72 (kWh), integrated exactly from the
power served (left Riemann sum between requests, which is what a meter
sampling its own power does).  Function codes 3 and 4 read the same map;
anything outside registers 0..79 gets exception 2.  Plain sockets, no
pymodbus: one thread per connection.
"""

import glob
import os
import socket
import socketserver
import struct
import threading
import time

N_REGS = 80


def effective_khz(cpu_dir):
    def rd(name):
        with open(os.path.join(cpu_dir, "cpufreq", name)) as f:
            return f.read().strip()
    try:
        if rd("scaling_governor") == "userspace":
            return int(rd("scaling_setspeed"))
        return int(rd("scaling_max_freq"))
    except (OSError, ValueError):
        return 0


class FreqMeter:
    def __init__(self, node_dir, host, port, idle_w=60.0, dyn_w=240.0,
                 f_max_khz=2400000):
        self.node_dir = node_dir
        self.idle_w, self.dyn_w, self.f_max = idle_w, dyn_w, f_max_khz
        self.lock = threading.Lock()
        self.energy_j = 0.0
        self.last_t = time.monotonic()
        self.last_w = self.power()
        meter = self

        class Handler(socketserver.BaseRequestHandler):
            def handle(self):
                meter._serve(self.request)

        socketserver.ThreadingTCPServer.allow_reuse_address = True
        self.server = socketserver.ThreadingTCPServer((host, port), Handler)
        self.server.daemon_threads = True
        self.thread = threading.Thread(target=self.server.serve_forever,
                                       daemon=True)
        self.thread.start()

    def power(self):
        cpus = glob.glob(os.path.join(self.node_dir, "cpu", "cpu[0-9]*"))
        dyn = sum(self.dyn_w / len(cpus) *
                  (effective_khz(c) / self.f_max) ** 3 for c in cpus)
        return self.idle_w + dyn

    def sample(self):
        """(watts now, joules so far)."""
        with self.lock:
            now = time.monotonic()
            self.energy_j += self.last_w * (now - self.last_t)
            self.last_t = now
            self.last_w = self.power()
            return self.last_w, self.energy_j

    def registers(self):
        w, j = self.sample()
        regs = [0] * N_REGS
        for addr, v in ((52, w), (72, j / 3.6e6)):
            hi, lo = struct.unpack(">HH", struct.pack(">f", v))
            regs[addr], regs[addr + 1] = hi, lo
        return regs

    def _serve(self, sock):
        buf = b""
        while True:
            try:
                data = sock.recv(260)
            except OSError:
                return
            if not data:
                return
            buf += data
            while len(buf) >= 7:
                tid, proto, length, unit = struct.unpack(">HHHB", buf[:7])
                if len(buf) < 6 + length:
                    break
                pdu, buf = buf[7:6 + length], buf[6 + length:]
                sock.sendall(self._reply(tid, unit, pdu))

    def _reply(self, tid, unit, pdu):
        fc = pdu[0] if pdu else 0
        if fc in (3, 4) and len(pdu) >= 5:
            addr, count = struct.unpack(">HH", pdu[1:5])
            if 1 <= count <= 125 and addr + count <= N_REGS:
                regs = self.registers()[addr:addr + count]
                body = struct.pack(">BB", fc, 2 * count) + \
                    struct.pack(">%dH" % count, *regs)
            else:
                body = struct.pack(">BB", fc | 0x80, 2)
        else:
            body = struct.pack(">BB", (fc | 0x80) & 0xff, 1)
        return struct.pack(">HHHB", tid, 0, len(body) + 1, unit) + body

    def close(self):
        self.server.shutdown()
        self.server.server_close()
