/*
 * modbus_meter.h - a Modbus power/energy meter behind the meter_ops_t
 * interface (src/common/meter.h), over libmodbus.  Slurm-free.
 *
 * Transports: Modbus TCP (one persistent connection per host:port) and
 * Modbus RTU (one serial line).  Meters on the same device string share one
 * bus: one libmodbus context, one transaction at a time, each meter with its
 * own unit id; on RTU the transaction also holds an flock() on the tty, so
 * that several processes (e.g. several slurmd of a test cluster, or
 * slurmd and a controller) can share one RS-485 line.
 *
 * Every call is bounded by its deadline: libmodbus' response and byte
 * timeouts are set from the time left, and waiting for the bus counts too.
 * A Modbus exception (and, on RTU, a garbled frame) returns -EAGAIN: the
 * connection stays.  Timeouts and transport errors return -errno and close
 * a TCP connection so the next open reconnects.
 */
#ifndef SE_MODBUS_METER_H
#define SE_MODBUS_METER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "energy_acc.h"
#include "meter.h"
#include "modbus_codec.h"

#define MODBUS_METER_DEFAULT_PORT	"502"

/*
 * A power reading below 0 W down to this many watts (before the node's
 * share) is a meter's noise at idle and reads 0 W; further below, the
 * reading fails (a fault, gap-filled), rather than counting 0 W.
 */
#define MODBUS_NEGATIVE_NOISE_W		50.0

typedef enum {
	MODBUS_DEV_TCP = 0,
	MODBUS_DEV_RTU,
} modbus_dev_kind_t;

/* A parsed device string. */
typedef struct {
	modbus_dev_kind_t kind;
	char host[256];		/* TCP: name or address (IPv6: no []) */
	char port[16];		/* TCP: service, "502" by default */
	char path[256];		/* RTU: the tty */
} modbus_device_t;

/*
 * Parse "tcp://HOST[:PORT]", "tcp://[IPV6]:PORT" or "rtu:/dev/ttyX" into out.
 * Returns 0, or -EINVAL with the reason (without file or key) in err.
 */
int modbus_device_parse(const char *spec, modbus_device_t *out,
			char *err, size_t err_len);

/* Serial line settings (RTU only). */
typedef struct {
	unsigned baud;		/* 9600 */
	char parity;		/* 'N', 'E' or 'O' */
	unsigned data_bits;	/* 5..8 */
	unsigned stop_bits;	/* 1 or 2 */
} modbus_serial_t;

/* One meter channel, with the node's share of it. */
typedef struct {
	const char *device;	/* "tcp://..." or "rtu:..." (%n expanded) */
	modbus_serial_t serial;
	unsigned unit;		/* unit (slave) id, 0..255 (RTU 1..247) */
	mb_kind_t kind;		/* input or holding registers */
	mb_point_t power;	/* value x scale = W, if present */
	mb_point_t energy;	/* value x scale = J, if present */
	unsigned max_regs_per_read; /* 1..125 */
	double share;		/* the node's part of the channel, (0, 1] */
} modbus_meter_config_t;

typedef struct modbus_meter modbus_meter_t;

/* The backend: dev is a modbus_meter_t *. */
extern const meter_ops_t modbus_meter_ops;

/*
 * Create a meter (no I/O: the sampler thread connects).  Returns 0 or
 * -EINVAL (message in err) / -ENOMEM.
 */
int modbus_meter_create(const modbus_meter_config_t *cfg,
			modbus_meter_t **out, char *err, size_t err_len);

/* Free a meter that is closed (or never opened).  NULL is fine. */
void modbus_meter_destroy(modbus_meter_t *m);

/*
 * How readings' counter_raw are to be read: every energy register is a
 * counter of its own steps (mb_decode_energy(); modbus_energy_counter_spec()
 * below).  Returns false when the meter has no energy register.
 */
bool modbus_meter_counter_spec(const modbus_meter_t *m, counter_spec_t *spec);

/*
 * The counter spec of an energy register of this type and scale (J per
 * register unit) read for a node billed share of it: width, step and mJ per
 * count (see mb_energy_counter()).  For the plugin, the configuration
 * check and the benchmarks alike.
 */
void modbus_energy_counter_spec(mb_type_t type, double scale_j, double share,
				counter_spec_t *spec);

/* "tcp://10.0.0.5:502 unit 1" (for logs). */
const char *modbus_meter_label(const modbus_meter_t *m);

/* A one-line description of registers, types, scales and share. */
void modbus_meter_describe(const modbus_meter_t *m, char *buf, size_t len);

#endif
