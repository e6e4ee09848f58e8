/*
 * meter.h - the small interface every hardware source sits behind.
 *
 * A backend (Modbus, BMC, RRD, a test fake) implements these three calls
 * (open and close may be NULL when there is nothing to connect).
 * Only the sampler thread calls them, so a backend needs no locking of its
 * own.  Every call gets an absolute monotonic deadline and must return by
 * then (set the library's own timeouts from it); the sampler still never
 * lets a reader wait on a backend that overruns.
 */
#ifndef SE_METER_H
#define SE_METER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "energy_acc.h"	/* counter_spec_t */

typedef struct {
	uint64_t t_ns;		/* monotonic instant of the reading; 0: the
				 * sampler stamps it with the read's midpoint */
	bool has_power;
	uint64_t power_mw;	/* instantaneous or short-average power */
	bool has_counter;
	uint64_t counter_raw;	/* raw energy register, in counter units */
	counter_spec_t counter_spec; /* the counter's units when the meter
				 * learns them only once open (a Redfish
				 * BMC: discovery picks the source, the
				 * decimals its step); width_bits 0: the
				 * sampler's cfg.counter.  A change of spec
				 * rebases the counter (energy_acc.h) */
} meter_reading_t;

typedef struct {
	const char *name;	/* for logs: "modbus", "bmc-dcmi", ... */

	/* Connect / open the device.  0 or -errno. */
	int (*open)(void *dev, uint64_t deadline_ns);

	/*
	 * Take one reading.  0 on success; -EALREADY when the source has
	 * nothing newer than the last reading (a polled file whose next row
	 * is not written yet: not a failure, the sampler just waits for the
	 * next tick); -EAGAIN for a transient error
	 * that leaves the connection usable (e.g. a Modbus exception);
	 * any other -errno makes the sampler close and later reopen.
	 * On failure, msg (if not NULL) may be filled with a reason.
	 */
	int (*read)(void *dev, meter_reading_t *out, uint64_t deadline_ns,
		    char *msg, size_t msg_len);

	/* Disconnect; must not block past a short bound. */
	void (*close)(void *dev);
} meter_ops_t;

#endif
