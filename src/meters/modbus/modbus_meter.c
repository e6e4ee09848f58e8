/*
 * modbus_meter.c - Modbus TCP/RTU meter backend (see modbus_meter.h).
 *
 * Shape: meters -> buses (one per device string, shared, refcounted) ->
 * one libmodbus context per bus.  Only sampler threads call the ops; a bus
 * shared by several meters serialises their transactions with its mutex
 * (and, on RTU, an flock on the tty for other processes).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE	/* pthread_mutex_clocklock */
#endif

#ifdef HAVE_CONFIG_H
#include "se_config.h"
#endif

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/file.h>
#include <sys/socket.h>
#include <time.h>

#include <modbus.h>

#include "modbus_meter.h"
#include "se_log.h"
#include "se_resolve.h"
#include "se_time.h"

/* Longest wait between two bytes of one frame, whatever the deadline. */
#define TCP_BYTE_TIMEOUT_NS	(100 * SE_NS_PER_MS)
/* RTU: at least this, else 40 character times (11 bits each) at the baud */
#define RTU_BYTE_TIMEOUT_MIN_NS	(20 * SE_NS_PER_MS)
/* Bound of close(): it waits for a transaction of another meter at most */
#define CLOSE_WAIT_NS		SE_NS_PER_SEC
/* Poll step while another process holds the RTU line */
#define FLOCK_POLL_NS		(1 * SE_NS_PER_MS)

/* ------------------------------------------------------- private types */

typedef struct modbus_bus modbus_bus_t;

struct modbus_bus {
	modbus_bus_t *next;
	char *spec;		/* the device string: the registry's key */
	modbus_device_t dev;
	modbus_serial_t serial;
	pthread_mutex_t lock;	/* one transaction at a time; guards ctx */
	modbus_t *ctx;		/* NULL while not connected */
	unsigned refs;		/* meters attached (registry_lock) */
	unsigned users;		/* meters open (lock), less released */
	/* Closes that could not take the lock in time: the next holder
	 * takes them off users (_bus_lock), so users - released is always
	 * the number of meters open. */
	atomic_uint released;
};

/* One request: a run of registers read at once. */
typedef struct {
	uint16_t addr;
	uint16_t count;
} mb_request_t;

struct modbus_meter {
	modbus_bus_t *bus;
	modbus_meter_config_t cfg;	/* cfg.device points into bus */
	bool open;
	unsigned n_req;
	mb_request_t req[2];
	char label[300];
};

/* -------------------------------------------------- private prototypes */

static modbus_bus_t *_bus_get(const char *spec, const modbus_device_t *dev,
			      const modbus_serial_t *serial, char *err,
			      size_t err_len);
static void _bus_put(modbus_bus_t *b);
static int _bus_lock(modbus_bus_t *b, uint64_t deadline_ns);
static void _bus_unlock(modbus_bus_t *b);
static void _bus_release(modbus_bus_t *b);
static int _bus_connect(modbus_bus_t *b, uint64_t deadline_ns);
static int _tcp_new(modbus_bus_t *b, uint64_t deadline_ns, modbus_t **ctx);
static void _bus_disconnect(modbus_bus_t *b);
static int _set_timeouts(modbus_bus_t *b, uint64_t deadline_ns);
static int _line_lock(modbus_bus_t *b, uint64_t deadline_ns);
static void _line_unlock(modbus_bus_t *b);
static void _plan(modbus_meter_t *m);
static int _fetch(modbus_meter_t *m, uint16_t *regs, uint64_t deadline_ns,
		  char *msg, size_t msg_len);
static int _decode(const modbus_meter_t *m, const uint16_t *regs,
		   meter_reading_t *out, char *msg, size_t msg_len);

static int _mm_open(void *dev, uint64_t deadline_ns);
static int _mm_read(void *dev, meter_reading_t *out, uint64_t deadline_ns,
		    char *msg, size_t msg_len);
static void _mm_close(void *dev);

/* --------------------------------------------------- private variables */

static pthread_mutex_t registry_lock = PTHREAD_MUTEX_INITIALIZER;
static modbus_bus_t *registry;

/* ---------------------------------------------------- public functions */

const meter_ops_t modbus_meter_ops = {
	.name = "modbus",
	.open = _mm_open,
	.read = _mm_read,
	.close = _mm_close,
};

int modbus_device_parse(const char *spec, modbus_device_t *out,
			char *err, size_t err_len)
{
	const char *p, *colon;
	size_t hlen;

	memset(out, 0, sizeof(*out));
	if (!spec || !*spec) {
		snprintf(err, err_len, "empty device");
		return -EINVAL;
	}
	if (!strncasecmp(spec, "rtu:", 4)) {
		out->kind = MODBUS_DEV_RTU;
		p = spec + 4;
		if (*p != '/' || strlen(p) >= sizeof(out->path)) {
			snprintf(err, err_len,
				 "an RTU device is rtu:/dev/ttyX (an absolute path)");
			return -EINVAL;
		}
		strcpy(out->path, p);
		return 0;
	}
	if (strncasecmp(spec, "tcp://", 6)) {
		snprintf(err, err_len,
			 "a device is tcp://HOST[:PORT] or rtu:/dev/ttyX");
		return -EINVAL;
	}
	out->kind = MODBUS_DEV_TCP;
	p = spec + 6;
	if (*p == '[') {		/* [IPv6]:port */
		const char *close = strchr(p, ']');

		if (!close || (close[1] && close[1] != ':')) {
			snprintf(err, err_len, "bad [IPv6 address]");
			return -EINVAL;
		}
		hlen = close - p - 1;
		p++;
		colon = close[1] ? close + 1 : NULL;
	} else {
		colon = strchr(p, ':');
		hlen = colon ? (size_t) (colon - p) : strlen(p);
	}
	if (!hlen || hlen >= sizeof(out->host) || memchr(p, '/', hlen) ||
	    strcspn(p, " \t\r\n") < hlen) {
		snprintf(err, err_len, "bad host in tcp://HOST[:PORT]");
		return -EINVAL;
	}
	memcpy(out->host, p, hlen);
	if (!colon) {
		strcpy(out->port, MODBUS_METER_DEFAULT_PORT);
		return 0;
	}
	colon++;
	if (!*colon || strlen(colon) >= sizeof(out->port) ||
	    strspn(colon, "0123456789") != strlen(colon) ||
	    atol(colon) < 1 || atol(colon) > 65535) {
		snprintf(err, err_len, "bad port (1-65535)");
		return -EINVAL;
	}
	strcpy(out->port, colon);
	return 0;
}

int modbus_meter_create(const modbus_meter_config_t *cfg,
			modbus_meter_t **out, char *err, size_t err_len)
{
	modbus_device_t dev;
	modbus_meter_t *m;
	char why[128];

	*out = NULL;
	if (modbus_device_parse(cfg->device, &dev, why, sizeof(why))) {
		snprintf(err, err_len, "%s: %s", cfg->device, why);
		return -EINVAL;
	}
	if (!cfg->power.present && !cfg->energy.present) {
		snprintf(err, err_len, "neither a power nor an energy register");
		return -EINVAL;
	}
	if (!(cfg->share > 0.0 && cfg->share <= 1.0) ||
	    cfg->max_regs_per_read < 1 ||
	    cfg->max_regs_per_read > MODBUS_MAX_READ_REGISTERS ||
	    (dev.kind == MODBUS_DEV_RTU &&
	     (cfg->unit < 1 || cfg->unit > 247))) {
		snprintf(err, err_len,
			 "%s unit %u: bad share, unit (RTU: 1-247) or read size",
			 cfg->device, cfg->unit);
		return -EINVAL;
	}
	if (!(m = calloc(1, sizeof(*m))))
		return -ENOMEM;
	if (!(m->bus = _bus_get(cfg->device, &dev, &cfg->serial, err,
				err_len))) {
		free(m);
		return -EINVAL;
	}
	m->cfg = *cfg;
	m->cfg.device = m->bus->spec;
	_plan(m);
	snprintf(m->label, sizeof(m->label), "%s unit %u", cfg->device,
		 cfg->unit);
	*out = m;
	return 0;
}

void modbus_meter_destroy(modbus_meter_t *m)
{
	if (!m)
		return;
	if (m->open)
		_mm_close(m);
	_bus_put(m->bus);
	free(m);
}

bool modbus_meter_counter_spec(const modbus_meter_t *m, counter_spec_t *spec)
{
	const mb_point_t *en = &m->cfg.energy;

	if (!en->present)
		return false;
	modbus_energy_counter_spec(en->type, en->scale, m->cfg.share, spec);
	return true;
}

void modbus_energy_counter_spec(mb_type_t type, double scale_j, double share,
				counter_spec_t *spec)
{
	/*
	 * The register counts in its own units: a step of an integer
	 * register is one of them, of a float its ulp at the reading.  The
	 * plausibility bound then knows the real step, which a conversion to
	 * a fine unit (a count of mJ) would hide: every step larger than
	 * MaxPower x dt would be refused as a torn read.
	 */
	mb_energy_counter(type, &spec->width_bits, &spec->significand_bits);
	spec->mj_per_unit = scale_j * share * 1000.0;
	spec->registers = 0;	/* one register */
	if (spec->significand_bits)
		spec->mj_per_unit = ldexp(spec->mj_per_unit,
					  -MB_FLOAT_COUNTER_FRAC_BITS);
}

const char *modbus_meter_label(const modbus_meter_t *m)
{
	return m->label;
}

void modbus_meter_describe(const modbus_meter_t *m, char *buf, size_t len)
{
	const mb_point_t *pw = &m->cfg.power, *en = &m->cfg.energy;
	int n;

	n = snprintf(buf, len, "%s, %s registers", m->label,
		     mb_kind_names[m->cfg.kind]);
	if (pw->present && n >= 0 && (size_t) n < len)
		n += snprintf(buf + n, len - n,
			      ", power @%u %s/%s x%g W",
			      pw->address, mb_type_names[pw->type],
			      mb_order_names[pw->order], pw->scale);
	if (en->present && n >= 0 && (size_t) n < len)
		n += snprintf(buf + n, len - n,
			      ", energy @%u %s/%s x%g J (counter path)",
			      en->address, mb_type_names[en->type],
			      mb_order_names[en->order], en->scale);
	if (n >= 0 && (size_t) n < len)
		snprintf(buf + n, len - n, ", share %g, %u request%s/read",
			 m->cfg.share, m->n_req, m->n_req > 1 ? "s" : "");
}

/* ------------------------------------------------------------- meter ops */

static int _mm_open(void *dev, uint64_t deadline_ns)
{
	modbus_meter_t *m = dev;
	modbus_bus_t *b = m->bus;
	int rc;

	if (m->open)
		return 0;
	if ((rc = _bus_lock(b, deadline_ns)))
		return rc;
	rc = _bus_connect(b, deadline_ns);
	if (!rc) {
		m->open = true;
		b->users++;
	}
	_bus_unlock(b);
	return rc;
}

static int _mm_read(void *dev, meter_reading_t *out, uint64_t deadline_ns,
		    char *msg, size_t msg_len)
{
	modbus_meter_t *m = dev;
	uint16_t regs[2 * MODBUS_MAX_READ_REGISTERS];
	int rc;

	memset(out, 0, sizeof(*out));
	if (!m->open && (rc = _mm_open(m, deadline_ns)))
		return rc;
	if ((rc = _fetch(m, regs, deadline_ns, msg, msg_len)))
		return rc;
	return _decode(m, regs, out, msg, msg_len);
}

static void _mm_close(void *dev)
{
	modbus_meter_t *m = dev;
	modbus_bus_t *b = m->bus;

	if (!m->open)
		return;
	m->open = false;
	if (_bus_lock(b, se_mono_ns() + CLOSE_WAIT_NS)) {
		/* Another meter's transaction overran: close() does not
		 * wait for it; whoever holds the bus next (or, if it has
		 * just let go, this trylock) takes this meter off users. */
		atomic_fetch_add(&b->released, 1);
		se_log(SE_LOG_DEBUG,
		       "modbus %s: bus busy, released by its next holder",
		       m->label);
		if (!pthread_mutex_trylock(&b->lock)) {
			_bus_release(b);
			_bus_unlock(b);
		}
		return;
	}
	if (b->users && !--b->users)
		_bus_disconnect(b);
	_bus_unlock(b);
}

/* ------------------------------------------------------ private functions */

/* Find or create the bus for spec; serial settings must agree. */
static modbus_bus_t *_bus_get(const char *spec, const modbus_device_t *dev,
			      const modbus_serial_t *serial, char *err,
			      size_t err_len)
{
	modbus_bus_t *b;

	pthread_mutex_lock(&registry_lock);
	for (b = registry; b; b = b->next) {
		if (strcmp(b->spec, spec))
			continue;
		if (dev->kind == MODBUS_DEV_RTU &&
		    memcmp(&b->serial, serial, sizeof(*serial))) {
			snprintf(err, err_len,
				 "%s: meters on one line need the same serial settings",
				 spec);
			b = NULL;
		} else {
			b->refs++;
		}
		pthread_mutex_unlock(&registry_lock);
		return b;
	}
	if (!(b = calloc(1, sizeof(*b))) || !(b->spec = strdup(spec))) {
		free(b);
		pthread_mutex_unlock(&registry_lock);
		snprintf(err, err_len, "out of memory");
		return NULL;
	}
	b->dev = *dev;
	b->serial = *serial;
	pthread_mutex_init(&b->lock, NULL);
	atomic_init(&b->released, 0);
	b->refs = 1;
	b->next = registry;
	registry = b;
	pthread_mutex_unlock(&registry_lock);
	return b;
}

static void _bus_put(modbus_bus_t *b)
{
	modbus_bus_t **pp;

	pthread_mutex_lock(&registry_lock);
	if (--b->refs) {
		pthread_mutex_unlock(&registry_lock);
		return;
	}
	for (pp = &registry; *pp; pp = &(*pp)->next) {
		if (*pp == b) {
			*pp = b->next;
			break;
		}
	}
	pthread_mutex_unlock(&registry_lock);
	_bus_disconnect(b);
	pthread_mutex_destroy(&b->lock);
	free(b->spec);
	free(b);
}

/* Take the bus by the deadline (0 or -ETIMEDOUT), then apply the closes
 * that gave up waiting for it. */
static int _bus_lock(modbus_bus_t *b, uint64_t deadline_ns)
{
	struct timespec ts = {
		.tv_sec = deadline_ns / SE_NS_PER_SEC,
		.tv_nsec = deadline_ns % SE_NS_PER_SEC,
	};
	int rc = pthread_mutex_clocklock(&b->lock, CLOCK_MONOTONIC, &ts);

	if (rc)
		return -rc;
	_bus_release(b);
	return 0;
}

/*
 * Let go of the bus.  A close that gave up waiting while we held it
 * counted itself in released after our _bus_lock() looked: look again
 * now, or its release could wait for the bus's next transaction.
 */
static void _bus_unlock(modbus_bus_t *b)
{
	pthread_mutex_unlock(&b->lock);
	while (atomic_load(&b->released) &&
	       !pthread_mutex_trylock(&b->lock)) {
		_bus_release(b);
		pthread_mutex_unlock(&b->lock);
	}
}

/* Apply the closes that could not take the bus (bus locked): the last
 * meter open closes the connection. */
static void _bus_release(modbus_bus_t *b)
{
	unsigned n = atomic_exchange(&b->released, 0);

	if (!n)
		return;
	b->users = n < b->users ? b->users - n : 0;
	if (!b->users)
		_bus_disconnect(b);
}

/* Connect the bus if it is not (bus locked). */
static int _bus_connect(modbus_bus_t *b, uint64_t deadline_ns)
{
	modbus_t *ctx;
	int rc, fd;

	if (b->ctx)
		return 0;
	if (b->dev.kind == MODBUS_DEV_TCP) {
		if ((rc = _tcp_new(b, deadline_ns, &ctx)))
			return rc;
	} else {
		ctx = modbus_new_rtu(b->dev.path, b->serial.baud,
				     b->serial.parity, b->serial.data_bits,
				     b->serial.stop_bits);
		if (!ctx)
			return errno ? -errno : -ENOMEM;
	}
	b->ctx = ctx;
	/* For TCP the response timeout also bounds connect(). */
	if ((rc = _set_timeouts(b, deadline_ns)))
		goto fail;
	if (modbus_connect(ctx) < 0) {
		rc = errno ? -errno : -EIO;
		goto fail;
	}
	/* slurmd forks steps: the meter's socket or tty is not theirs. */
	fd = modbus_get_socket(ctx);
	if (fd >= 0)
		(void) fcntl(fd, F_SETFD, FD_CLOEXEC);
	return 0;
fail:
	modbus_free(ctx);
	b->ctx = NULL;
	return rc;
}

/*
 * A TCP context for the bus's host, its name resolved by the deadline:
 * libmodbus would look it up inside modbus_connect() with no timeout.
 * The context gets the address; logs keep the name (the device string).
 */
static int _tcp_new(modbus_bus_t *b, uint64_t deadline_ns, modbus_t **ctx)
{
	char addr[SE_RESOLVE_ADDR_LEN], ebuf[128];
	int rc;

	rc = se_resolve(b->dev.host, SOCK_STREAM, deadline_ns, addr,
			sizeof(addr));
	if (rc) {
		se_log(SE_LOG_DEBUG, "modbus %s: looking up %s: %s", b->spec,
		       b->dev.host, strerror_r(-rc, ebuf, sizeof(ebuf)));
		return rc;
	}
	if (!(*ctx = modbus_new_tcp_pi(addr, b->dev.port)))
		return errno ? -errno : -ENOMEM;
	return 0;
}

static void _bus_disconnect(modbus_bus_t *b)
{
	if (!b->ctx)
		return;
	modbus_close(b->ctx);
	modbus_free(b->ctx);
	b->ctx = NULL;
}

/*
 * libmodbus waits response_timeout for the first byte of an answer and
 * byte_timeout between the next ones: both come from the time left, the
 * byte timeout also bounded by what the line needs, so that a trickling
 * peer cannot hold us much past the deadline.
 */
static int _set_timeouts(modbus_bus_t *b, uint64_t deadline_ns)
{
	uint64_t now_ns = se_mono_ns(), left_ns, byte_ns;

	if (now_ns >= deadline_ns)
		return -ETIMEDOUT;
	left_ns = deadline_ns - now_ns;
	if (b->dev.kind == MODBUS_DEV_TCP) {
		byte_ns = TCP_BYTE_TIMEOUT_NS;
	} else {
		byte_ns = 40 * 11 * SE_NS_PER_SEC / b->serial.baud;
		if (byte_ns < RTU_BYTE_TIMEOUT_MIN_NS)
			byte_ns = RTU_BYTE_TIMEOUT_MIN_NS;
	}
	if (byte_ns > left_ns)
		byte_ns = left_ns;
	if (modbus_set_response_timeout(b->ctx, left_ns / SE_NS_PER_SEC,
					(left_ns % SE_NS_PER_SEC) / 1000) ||
	    modbus_set_byte_timeout(b->ctx, byte_ns / SE_NS_PER_SEC,
				    (byte_ns % SE_NS_PER_SEC) / 1000))
		return -EINVAL;
	return 0;
}

/* RTU: hold the line against other processes (bus locked). */
static int _line_lock(modbus_bus_t *b, uint64_t deadline_ns)
{
	struct timespec step = { 0, FLOCK_POLL_NS };
	int fd;

	if (b->dev.kind != MODBUS_DEV_RTU ||
	    (fd = modbus_get_socket(b->ctx)) < 0)
		return 0;
	while (flock(fd, LOCK_EX | LOCK_NB)) {
		if (errno != EWOULDBLOCK && errno != EINTR)
			return 0;	/* no locking here: go on unlocked */
		if (se_mono_ns() + FLOCK_POLL_NS >= deadline_ns)
			return -ETIMEDOUT;
		nanosleep(&step, NULL);
	}
	/* Whatever another process left on the line is not ours. */
	modbus_flush(b->ctx);
	return 0;
}

static void _line_unlock(modbus_bus_t *b)
{
	int fd;

	if (b->dev.kind == MODBUS_DEV_RTU && b->ctx &&
	    (fd = modbus_get_socket(b->ctx)) >= 0)
		(void) flock(fd, LOCK_UN);
}

/* Registers [addr, addr + words) of a point, as a request. */
static mb_request_t _point_req(const mb_point_t *p)
{
	mb_request_t r = { p->address, (uint16_t) mb_type_words(p->type) };

	return r;
}

/*
 * One request when power and energy fit in max_regs_per_read together
 * (one round trip: at 9600 baud each saves ~10 ms of line time), else one
 * request each.  regs[] then holds the requests back to back.
 */
static void _plan(modbus_meter_t *m)
{
	const mb_point_t *pw = &m->cfg.power, *en = &m->cfg.energy;
	mb_request_t a, b;
	unsigned lo, hi;

	if (!pw->present || !en->present) {
		m->req[0] = _point_req(pw->present ? pw : en);
		m->n_req = 1;
		return;
	}
	a = _point_req(pw);
	b = _point_req(en);
	lo = a.addr < b.addr ? a.addr : b.addr;
	hi = a.addr + a.count > b.addr + b.count ? a.addr + a.count :
						   b.addr + b.count;
	if (hi - lo <= m->cfg.max_regs_per_read) {
		m->req[0].addr = lo;
		m->req[0].count = hi - lo;
		m->n_req = 1;
	} else {
		m->req[0] = a;
		m->req[1] = b;
		m->n_req = 2;
	}
}

/* Registers of a point within the fetched buffer. */
static const uint16_t *_point_regs(const modbus_meter_t *m,
				   const uint16_t *regs, const mb_point_t *p)
{
	unsigned i, off = 0;

	for (i = 0; i < m->n_req; i++) {
		const mb_request_t *r = &m->req[i];

		if (p->address >= r->addr &&
		    p->address + mb_type_words(p->type) <=
		    (unsigned) r->addr + r->count)
			return regs + off + (p->address - r->addr);
		off += r->count;
	}
	return NULL;	/* not reached: _plan covers both points */
}

/* Map libmodbus' errno to ours; says whether the connection is suspect. */
static int _classify(const modbus_bus_t *b, int err, bool *drop)
{
	bool rtu = b->dev.kind == MODBUS_DEV_RTU;

	*drop = false;
	if (err >= EMBXILFUN && err <= EMBXGTAR)
		return -EAGAIN;	/* the meter answered: exception */
	if (err >= EMBBADCRC && err <= EMBBADSLAVE) {
		/* A garbled frame: noise on a line; on TCP, a lost frame
		 * boundary that only a new connection repairs. */
		if (rtu)
			return -EAGAIN;
		*drop = true;
		return -EPROTO;
	}
	*drop = !rtu;
	return err ? -err : -EIO;
}

static int _fetch(modbus_meter_t *m, uint16_t *regs, uint64_t deadline_ns,
		  char *msg, size_t msg_len)
{
	modbus_bus_t *b = m->bus;
	unsigned i, off = 0;
	bool drop = false;
	int rc, n;

	if ((rc = _bus_lock(b, deadline_ns)))
		return rc;
	if ((rc = _bus_connect(b, deadline_ns)) ||
	    (rc = _line_lock(b, deadline_ns)))
		goto out;
	modbus_set_slave(b->ctx, (int) m->cfg.unit);
	for (i = 0; i < m->n_req; i++) {
		const mb_request_t *r = &m->req[i];

		if ((rc = _set_timeouts(b, deadline_ns)))
			break;
		if (m->cfg.kind == MB_KIND_INPUT)
			n = modbus_read_input_registers(b->ctx, r->addr,
							r->count, regs + off);
		else
			n = modbus_read_registers(b->ctx, r->addr, r->count,
						  regs + off);
		if (n != r->count) {
			int err = (n < 0) ? errno : EMBMDATA;

			rc = _classify(b, err, &drop);
			if (msg)
				snprintf(msg, msg_len,
					 "read of %u registers at %u: %s",
					 r->count, r->addr,
					 modbus_strerror(err));
			if (b->dev.kind == MODBUS_DEV_RTU)
				modbus_flush(b->ctx);
			break;
		}
		off += r->count;
	}
	_line_unlock(b);
	if (drop)
		_bus_disconnect(b);
out:
	_bus_unlock(b);
	return rc;
}

static int _decode(const modbus_meter_t *m, const uint16_t *regs,
		   meter_reading_t *out, char *msg, size_t msg_len)
{
	const mb_point_t *pw = &m->cfg.power, *en = &m->cfg.energy;
	double v = NAN;

	if (pw->present) {
		if (mb_decode(_point_regs(m, regs, pw), pw->type, pw->order,
			      &v) || !isfinite(v * pw->scale)) {
			if (msg)
				snprintf(msg, msg_len,
					 "power register %u: not a number",
					 pw->address);
			return -EAGAIN;
		}
		v *= pw->scale;
		/*
		 * A meter reads slightly negative at idle (its current
		 * transformer's noise): 0 W, a node does not give energy
		 * back.  Far below that is a fault (a torn or garbled
		 * register, a reversed CT), not zero power: counting it as
		 * 0 W would lose the energy of the interval, so the reading
		 * fails and the sampler fills the gap.
		 */
		if (v < -MODBUS_NEGATIVE_NOISE_W) {
			if (msg)
				snprintf(msg, msg_len,
					 "power register %u: %.1f W (a node draws power; more than %.0f W negative is not meter noise)",
					 pw->address, v,
					 MODBUS_NEGATIVE_NOISE_W);
			return -EAGAIN;
		}
		v *= m->cfg.share * 1000.0;
		out->power_mw = v <= 0.0 ? 0 : v >= 9.2e18 ?
			(uint64_t) INT64_MAX : (uint64_t) llround(v);
		out->has_power = true;
	}
	if (!en->present)
		return 0;
	if (mb_decode_energy(_point_regs(m, regs, en), en->type, en->order,
			     &out->counter_raw)) {
		if (msg)
			snprintf(msg, msg_len,
				 "energy register %u: not a count (negative, NaN or out of range)",
				 en->address);
		return -EAGAIN;
	}
	out->has_counter = true;
	return 0;
}
