/*
 * bmc_sim_dcmi.c - teach OpenIPMI's ipmi_sim the DCMI power commands.
 *
 * A loadlib module: lan.conf says
 *   loadlib "/path/bmc_sim_dcmi.so" "trace=FILE column=NAME epoch=SECONDS
 *                                    [stats=SECONDS] [hold=FILE] ..."
 * (every option below is "key=value", no spaces inside a value)
 * and ipmi_sim calls ipmi_sim_module_init() with the quoted string.  The
 * module registers a handler for netfn 0x2C group extension 0xDC and
 * answers, from the shared power trace itself (exact watts, no 8-bit
 * sensor quantisation, no feeder lag):
 *   Get DCMI Capabilities Info (DCMI 1.5 §6.1.1), parameters 1 and 5;
 *   Get Power Reading (DCMI 1.5 §6.6.1), modes 1 (system power statistics
 *   over the last `stats` seconds, default 60) and 2 (enhanced: rolling
 *   averages of 1 s, 5 s, 15 s, 30 s and 1 min).
 * Trace time is wall-clock seconds minus `epoch` (see power_trace.h).
 *
 * While the file named by hold= exists, every Get Power Reading repeats
 * the previous answer byte for byte: a BMC whose power reading is stuck
 * (same value, same time stamp), for tests.
 *
 * The file named by fault= (read at every Get Power Reading; missing or
 * empty: no fault) holds lines that change the answer while they stay:
 *   cc CODE        completion code CODE (e.g. 0xc0 node busy, 0xd5 not
 *                  supported in present state, 0xff unspecified), no data
 *   short          a truncated response (completion code and 5 data bytes)
 *   watts W        every power field reads W (0..65535: 65535 is absurd)
 *   inactive       the "power measurement active" state bit is clear
 *   stamp S        S seconds added to the BMC's time stamp, modulo 2^32
 *                  (a BMC whose clock was reset at its reboot, or wraps)
 * A line with an unknown keyword is ignored.
 *
 * Power limits (the cluster power cap's dcmi knob, issue #45), DCMI 1.5:
 *   Get Power Limit (§6.6.2, cmd 0x03): completion code 0x80 while no
 *   limit is active, else the limit set (exception actions, watts,
 *   correction time ms, statistics sampling period s);
 *   Set Power Limit (§6.6.3, cmd 0x04): watts outside limit_min..limit_max
 *   (options, default 1..65534) give 0x84, a correction time of 0 gives
 *   0x85;
 *   Activate/Deactivate Power Limit (§6.6.4, cmd 0x05): 0 or 1, else 0xcc.
 * With reads=FILE every full answer to Get Power Reading is appended
 * there as "TRACE_TIME WINDOW_S AVG_W" (the trace time the answer was
 * made at, its averaging window, the average watts as sent): what a
 * test compares a plugin's figure with, whatever delays the host put
 * on its polls (tests/integration/test_step_boundaries.py).
 *
 * With limit=FILE the state is written there after every change, as
 * "active 0|1" and "watts W" lines (for tests).
 *
 * With follow_limit=yes the node obeys its limit (issue #45: a
 * load-following meter whose power obeys the caps): while a limit is
 * active (set and activated) it draws min(trace, limit), else the trace.
 * Every power field follows: the current watts, the averages (exact, the
 * trace's integral split where it crosses the cap) and the min and max
 * (sampled), and so does the reads= log.  A change counts from the trace
 * time its Set or Activate/Deactivate request was handled: a real BMC
 * converges within its correction time, the sim at once, so that a test
 * knows the truth.  The default (follow_limit=no) plays the trace alone,
 * whatever the limit.
 *
 * With cap_log=FILE the cap in force is appended there at module init and
 * at every change, as "UNIT TRACE_TIME CAP_W" (UNIT the trace column's
 * name, CAP_W "inf" while no limit is active), the format of
 * contribs/python/selab/capped.py's read_cap_log, which recomputes the
 * truth apart from this code.  The log says what the limit is, with or
 * without follow_limit.
 */
#ifdef HAVE_CONFIG_H
#include "se_config.h"
#endif

#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/time.h>

#include <OpenIPMI/mcserv.h>
#ifdef HAVE_OPENIPMI_SERV_H
#include <OpenIPMI/serv.h>	/* check_msg_length() from OpenIPMI 2.0.37 */
#endif
#include <OpenIPMI/msg.h>

#include "bmc_dcmi_codec.h"
#include "power_trace.h"

/* ipmi_sim looks these up with dlsym(). */
int ipmi_sim_module_init(sys_data_t *sys, const char *initstr);
int ipmi_sim_module_print_version(sys_data_t *sys, char *initstr);

#define SIM_STATS_DEFAULT_S	60.0
#define SIM_MINMAX_STEPS	64	/* samples for min/max over a window */
#define SIM_POWER_RS_LEN	19	/* rdata bytes of Get Power Reading */

/* DCMI 1.5 §6.6.2-6.6.4: the power limit commands and their own
 * completion codes. */
#define DCMI_CMD_GET_POWER_LIMIT	0x03
#define DCMI_CMD_SET_POWER_LIMIT	0x04
#define DCMI_CMD_ACTIVATE_POWER_LIMIT	0x05
#define DCMI_CC_NO_ACTIVE_LIMIT		0x80
#define DCMI_CC_LIMIT_OUT_OF_RANGE	0x84
#define DCMI_CC_CORRECTION_OUT_OF_RANGE	0x85

/* Rolling-average periods offered (parameter 5): 1 s, 5 s, 15 s, 30 s,
 * 1 min, as period bytes (bits 7:6 unit, 5:0 count). */
static const uint8_t _periods[] = { 0x01, 0x05, 0x0f, 0x1e, 0x41 };

/* The cap in force from start_s on (until the next segment's start): the
 * history a reading's window is computed from. */
typedef struct {
	double start_s;		/* trace time */
	double cap_w;		/* INFINITY: no limit active */
} sim_cap_t;

static struct {
	sys_data_t *sys;
	power_trace_t *trace;
	int column;
	double epoch_s;		/* wall-clock seconds of trace time 0 */
	double stats_s;		/* mode 1 statistics window */
	char *hold_path;	/* NULL: never hold */
	char *fault_path;	/* NULL: no fault file */
	char *limit_path;	/* NULL: the limit state kept in memory only */
	FILE *reads;		/* NULL: answers not logged */
	FILE *cap_log;		/* NULL: cap changes not logged */
	bool follow;		/* the power obeys the limit */
	double cap_w;		/* the cap in force, INFINITY: none */
	double cap_since_s;	/* trace time of its change (or of init) */
	sim_cap_t *caps;	/* follow: the history, caps[0] from -inf */
	size_t ncaps, caps_alloc;
	unsigned limit_min_w, limit_max_w;
	struct {
		bool set, active;
		uint8_t exception;
		uint16_t watts;
		uint32_t correction_ms;
		uint16_t period_s;
	} limit;
	unsigned char last_rs[SIM_POWER_RS_LEN];
	unsigned int last_len;
} _sim;

static double _trace_now(void)
{
	struct timeval tv;

	gettimeofday(&tv, NULL);
	return tv.tv_sec + tv.tv_usec / 1e6 - _sim.epoch_s;
}

static uint16_t _watts16(double w)
{
	if (!(w > 0))
		return 0;
	if (w >= 65535.0)
		return 65535;
	return (uint16_t) lround(w);
}

static void _put16(unsigned char *p, uint16_t v)
{
	p[0] = v & 0xff;
	p[1] = v >> 8;
}

static void _put32(unsigned char *p, uint32_t v)
{
	_put16(p, v & 0xffff);
	_put16(p + 2, v >> 16);
}

/* The cap in force at trace time t (a change counts from its time). */
static double _cap_at(double t)
{
	size_t i = _sim.ncaps;

	while (i > 1 && _sim.caps[i - 1].start_s > t)
		i--;
	return i ? _sim.caps[i - 1].cap_w : INFINITY;
}

/* The node's power at trace time t: its demand (the trace) under its cap. */
static double _node_watts(double t)
{
	return fmin(power_trace_watts(_sim.trace, _sim.column, t), _cap_at(t));
}

static double _capped_joules(double t0, double t1, double cap_w)
{
	if (isinf(cap_w))
		return power_trace_joules(_sim.trace, _sim.column, t0, t1);
	return power_trace_joules_capped(_sim.trace, _sim.column, t0, t1,
					 cap_w);
}

/* The node's energy over [t0, t1], t0 <= t1: each cap segment's share,
 * walked back from the newest (windows end now: the old segments are
 * rarely reached). */
static double _node_joules(double t0, double t1)
{
	double joules = 0.0, end = t1;
	size_t i;

	if (!_sim.ncaps)
		return _capped_joules(t0, t1, INFINITY);
	for (i = _sim.ncaps; i-- > 0 && end > t0;) {
		double from = i ? fmax(t0, _sim.caps[i].start_s) : t0;

		if (from < end) {
			joules += _capped_joules(from, end, _sim.caps[i].cap_w);
			end = from;
		}
	}
	return joules;
}

/* Min, max (sampled) and exact average of the node's power over
 * [t0, t1]. */
static void _window(double t0, double t1, double *min_w, double *max_w,
		    double *avg_w)
{
	int i;

	*min_w = INFINITY;
	*max_w = -INFINITY;
	for (i = 0; i <= SIM_MINMAX_STEPS; i++) {
		double w = _node_watts(t0 + (t1 - t0) * i / SIM_MINMAX_STEPS);

		*min_w = fmin(*min_w, w);
		*max_w = fmax(*max_w, w);
	}
	if (t1 > t0)
		*avg_w = _node_joules(t0, t1) / (t1 - t0);
	else
		*avg_w = _node_watts(t1);
}

static int _period_offered(uint8_t period)
{
	size_t i;

	for (i = 0; i < sizeof(_periods); i++)
		if (_periods[i] == period)
			return 1;
	return 0;
}

static int _hold(void)
{
	struct stat st;

	return _sim.hold_path && _sim.last_len &&
	       stat(_sim.hold_path, &st) == 0;
}

/* The faults of the fault file now (see the top). */
typedef struct {
	int cc;			/* 0: none */
	bool truncated;
	long watts;		/* < 0: none */
	bool inactive;
	long long stamp_s;	/* added to the time stamp */
} sim_fault_t;

static void _read_faults(sim_fault_t *f)
{
	char line[128], kw[32], arg[64];
	FILE *fp;

	memset(f, 0, sizeof(*f));
	f->watts = -1;
	if (!_sim.fault_path || !(fp = fopen(_sim.fault_path, "r")))
		return;
	while (fgets(line, sizeof(line), fp)) {
		int n = sscanf(line, "%31s %63s", kw, arg);

		if (n < 1)
			continue;
		if (!strcmp(kw, "cc") && n == 2)
			f->cc = (int) strtol(arg, NULL, 0);
		else if (!strcmp(kw, "short"))
			f->truncated = true;
		else if (!strcmp(kw, "watts") && n == 2)
			f->watts = strtol(arg, NULL, 0);
		else if (!strcmp(kw, "inactive"))
			f->inactive = true;
		else if (!strcmp(kw, "stamp") && n == 2)
			f->stamp_s = strtoll(arg, NULL, 0);
	}
	fclose(fp);
}

static uint16_t _get16(const unsigned char *p)
{
	return (uint16_t) (p[0] | p[1] << 8);
}

static uint32_t _get32(const unsigned char *p)
{
	return _get16(p) | (uint32_t) _get16(p + 2) << 16;
}

/* Get Power Reading, DCMI 1.5 §6.6.1: rdata[0] is the completion code. */
static void _power_reading(msg_t *msg, unsigned char *rdata,
			   unsigned int *rdata_len)
{
	double now = _trace_now(), window_s, min_w, max_w, avg_w;
	uint8_t mode = msg->data[1], attr = msg->data[2];
	struct timeval tv;
	sim_fault_t f;

	_read_faults(&f);
	if (f.cc) {
		rdata[0] = (unsigned char) f.cc;
		*rdata_len = 1;
		return;
	}
	if (_hold()) {
		memcpy(rdata, _sim.last_rs, _sim.last_len);
		*rdata_len = _sim.last_len;
		return;
	}
	if (mode == DCMI_MODE_SYSTEM_POWER_STATS) {
		window_s = _sim.stats_s;
	} else if (mode == DCMI_MODE_ENHANCED_POWER_STATS &&
		   _period_offered(attr)) {
		window_s = dcmi_period_ms(attr) / 1000.0;
	} else {
		rdata[0] = IPMI_CC_INVALID_DATA_FIELD;
		*rdata_len = 1;
		return;
	}

	_window(now - window_s, now, &min_w, &max_w, &avg_w);
	gettimeofday(&tv, NULL);

	rdata[0] = IPMI_CC_OK;
	rdata[1] = DCMI_GROUP_EXT;
	_put16(rdata + 2, _watts16(_node_watts(now)));
	_put16(rdata + 4, _watts16(min_w));
	_put16(rdata + 6, _watts16(max_w));
	_put16(rdata + 8, _watts16(avg_w));
	_put32(rdata + 10, (uint32_t) (tv.tv_sec + f.stamp_s));
	_put32(rdata + 14, (uint32_t) lround(window_s * 1000.0));
	rdata[18] = f.inactive ? 0x00 : 0x40;	/* power measurement active */
	*rdata_len = SIM_POWER_RS_LEN;
	if (f.watts >= 0) {
		uint16_t w = f.watts > 65535 ? 65535 : (uint16_t) f.watts;
		int i;

		for (i = 2; i <= 8; i += 2)
			_put16(rdata + i, w);
	}
	if (f.truncated) {
		*rdata_len = 6;
		return;		/* not remembered: hold repeats good answers */
	}

	memcpy(_sim.last_rs, rdata, SIM_POWER_RS_LEN);
	_sim.last_len = SIM_POWER_RS_LEN;
	if (_sim.reads) {
		fprintf(_sim.reads, "%.6f %.3f %u\n", now, window_s,
			(unsigned) _get16(rdata + 8));
		fflush(_sim.reads);
	}
}

static void _limit_save(void)
{
	char tmp[4096];
	FILE *f;

	if (!_sim.limit_path)
		return;
	snprintf(tmp, sizeof(tmp), "%s.tmp", _sim.limit_path);
	if (!(f = fopen(tmp, "w")))
		return;
	fprintf(f, "active %d\nwatts %u\n", _sim.limit.active,
		_sim.limit.watts);
	fclose(f);
	rename(tmp, _sim.limit_path);
}

static void _cap_log(double t)
{
	if (!_sim.cap_log)
		return;
	if (isinf(_sim.cap_w))
		fprintf(_sim.cap_log, "%s %.6f inf\n",
			power_trace_column_name(_sim.trace, _sim.column), t);
	else
		fprintf(_sim.cap_log, "%s %.6f %.0f\n",
			power_trace_column_name(_sim.trace, _sim.column), t,
			_sim.cap_w);
	fflush(_sim.cap_log);
}

/* A new segment of the cap history from trace time t. */
static void _cap_push(double t, double cap_w)
{
	if (_sim.ncaps == _sim.caps_alloc) {
		size_t n = _sim.caps_alloc ? 2 * _sim.caps_alloc : 16;
		sim_cap_t *caps = realloc(_sim.caps, n * sizeof(*caps));

		if (!caps) {
			_sim.sys->log(_sim.sys, OS_ERROR, NULL,
				      "bmc_sim_dcmi: out of memory: a cap "
				      "change at %.3f lost", t);
			return;
		}
		_sim.caps = caps;
		_sim.caps_alloc = n;
	}
	_sim.caps[_sim.ncaps].start_s = t;
	_sim.caps[_sim.ncaps].cap_w = cap_w;
	_sim.ncaps++;
}

/* After a limit command: if the cap in force changed (a Set while no
 * limit is active, or of the same watts, changes nothing), the node
 * follows it from now, and the cap log says so. */
static void _cap_changed(void)
{
	double cap_w = _sim.limit.active ? _sim.limit.watts : INFINITY;
	double now;

	if (cap_w == _sim.cap_w)
		return;
	/* never before the last change (a wall clock stepped back): the
	 * history stays in time order */
	now = fmax(_trace_now(), _sim.cap_since_s);
	_sim.cap_w = cap_w;
	_sim.cap_since_s = now;
	if (_sim.follow)
		_cap_push(now, cap_w);
	_cap_log(now);
}

/* Get Power Limit, DCMI 1.5 §6.6.2 (request: group ext, 2 reserved). */
static void _get_limit(unsigned char *rdata, unsigned int *rdata_len)
{
	if (!_sim.limit.active) {
		rdata[0] = DCMI_CC_NO_ACTIVE_LIMIT;
		*rdata_len = 1;
		return;
	}
	memset(rdata, 0, 15);
	rdata[0] = IPMI_CC_OK;
	rdata[1] = DCMI_GROUP_EXT;
	rdata[4] = _sim.limit.exception;
	_put16(rdata + 5, _sim.limit.watts);
	_put32(rdata + 7, _sim.limit.correction_ms);
	_put16(rdata + 13, _sim.limit.period_s);
	*rdata_len = 15;
}

/* Set Power Limit, DCMI 1.5 §6.6.3 (request: group ext, 3 reserved,
 * exception actions, watts, correction time ms, 2 reserved, sampling
 * period s: 15 bytes). */
static void _set_limit(const msg_t *msg, unsigned char *rdata,
		       unsigned int *rdata_len)
{
	const unsigned char *d = msg->data;
	uint16_t watts = _get16(d + 5);
	uint32_t correction = _get32(d + 7);

	*rdata_len = 1;
	if (watts < _sim.limit_min_w || watts > _sim.limit_max_w) {
		rdata[0] = DCMI_CC_LIMIT_OUT_OF_RANGE;
		return;
	}
	if (!correction) {
		rdata[0] = DCMI_CC_CORRECTION_OUT_OF_RANGE;
		return;
	}
	rdata[1] = DCMI_GROUP_EXT;
	*rdata_len = 2;
	_sim.limit.set = true;
	_sim.limit.exception = d[4];
	_sim.limit.watts = watts;
	_sim.limit.correction_ms = correction;
	_sim.limit.period_s = _get16(d + 13);
	rdata[0] = IPMI_CC_OK;
	_limit_save();
	_cap_changed();
}

/* Activate/Deactivate Power Limit, DCMI 1.5 §6.6.4 (request: group ext,
 * activation, 2 reserved). */
static void _activate_limit(const msg_t *msg, unsigned char *rdata,
			    unsigned int *rdata_len)
{
	uint8_t on = msg->data[1];

	*rdata_len = 1;
	if (on > 1) {
		rdata[0] = IPMI_CC_INVALID_DATA_FIELD;
		return;
	}
	if (on && !_sim.limit.set) {
		rdata[0] = DCMI_CC_NO_ACTIVE_LIMIT;
		return;
	}
	rdata[1] = DCMI_GROUP_EXT;
	*rdata_len = 2;
	_sim.limit.active = on;
	rdata[0] = IPMI_CC_OK;
	_limit_save();
	_cap_changed();
}

/* Get DCMI Capabilities Info, DCMI 1.5 §6.1.1, parameters 1 and 5. */
static void _capabilities(msg_t *msg, unsigned char *rdata,
			  unsigned int *rdata_len)
{
	unsigned int n = 0;

	rdata[n++] = IPMI_CC_OK;
	rdata[n++] = DCMI_GROUP_EXT;
	rdata[n++] = 1;		/* conformance: DCMI 1.5 */
	rdata[n++] = 5;
	rdata[n++] = 2;		/* parameter revision */
	switch (msg->data[1]) {
	case DCMI_CAP_PARAM_SUPPORTED:
		rdata[n++] = 0x00;	/* mandatory platform capabilities */
		rdata[n++] = 0x01;	/* power management / monitoring */
		rdata[n++] = 0x08;	/* out-of-band primary LAN channel */
		break;
	case DCMI_CAP_PARAM_ENHANCED_STATS:
		rdata[n++] = sizeof(_periods);
		memcpy(rdata + n, _periods, sizeof(_periods));
		n += sizeof(_periods);
		break;
	default:
		rdata[0] = IPMI_CC_INVALID_DATA_FIELD;
		n = 1;
	}
	*rdata_len = n;
}

static void _handle_dcmi(lmc_data_t *mc, msg_t *msg, unsigned char *rdata,
			 unsigned int *rdata_len, void *cb_data)
{
	unsigned int need;

	switch (msg->cmd) {
	case DCMI_CMD_GET_POWER_READING:
		need = 4;
		break;
	case DCMI_CMD_GET_CAPABILITIES:
		need = 2;
		break;
	case DCMI_CMD_GET_POWER_LIMIT:
		need = 3;
		break;
	case DCMI_CMD_SET_POWER_LIMIT:
		need = 15;
		break;
	case DCMI_CMD_ACTIVATE_POWER_LIMIT:
		need = 4;
		break;
	default:
		handle_invalid_cmd(mc, rdata, rdata_len);
		return;
	}
	if (check_msg_length(msg, need, rdata, rdata_len))
		return;
	if (msg->cmd == DCMI_CMD_GET_POWER_READING)
		_power_reading(msg, rdata, rdata_len);
	else if (msg->cmd == DCMI_CMD_GET_CAPABILITIES)
		_capabilities(msg, rdata, rdata_len);
	else if (msg->cmd == DCMI_CMD_GET_POWER_LIMIT)
		_get_limit(rdata, rdata_len);
	else if (msg->cmd == DCMI_CMD_SET_POWER_LIMIT)
		_set_limit(msg, rdata, rdata_len);
	else
		_activate_limit(msg, rdata, rdata_len);
}

static int _option(const char *tok, const char **trace_path,
		   const char **col_name)
{
	char *end;

	if (!strncmp(tok, "trace=", 6)) {
		*trace_path = tok + 6;
	} else if (!strncmp(tok, "column=", 7)) {
		*col_name = tok + 7;
	} else if (!strncmp(tok, "epoch=", 6)) {
		_sim.epoch_s = strtod(tok + 6, &end);
		return *end ? EINVAL : 0;
	} else if (!strncmp(tok, "stats=", 6)) {
		_sim.stats_s = strtod(tok + 6, &end);
		return *end || !(_sim.stats_s > 0) ? EINVAL : 0;
	} else if (!strncmp(tok, "hold=", 5)) {
		_sim.hold_path = strdup(tok + 5);
		return _sim.hold_path ? 0 : ENOMEM;
	} else if (!strncmp(tok, "fault=", 6)) {
		_sim.fault_path = strdup(tok + 6);
		return _sim.fault_path ? 0 : ENOMEM;
	} else if (!strncmp(tok, "reads=", 6)) {
		_sim.reads = fopen(tok + 6, "a");
		return _sim.reads ? 0 : errno;
	} else if (!strncmp(tok, "cap_log=", 8)) {
		_sim.cap_log = fopen(tok + 8, "a");
		return _sim.cap_log ? 0 : errno;
	} else if (!strncmp(tok, "follow_limit=", 13)) {
		if (!strcmp(tok + 13, "yes"))
			_sim.follow = true;
		else if (!strcmp(tok + 13, "no"))
			_sim.follow = false;
		else
			return EINVAL;
	} else if (!strncmp(tok, "limit=", 6)) {
		_sim.limit_path = strdup(tok + 6);
		return _sim.limit_path ? 0 : ENOMEM;
	} else if (!strncmp(tok, "limit_min=", 10)) {
		_sim.limit_min_w = (unsigned) strtoul(tok + 10, &end, 10);
		return *end ? EINVAL : 0;
	} else if (!strncmp(tok, "limit_max=", 10)) {
		_sim.limit_max_w = (unsigned) strtoul(tok + 10, &end, 10);
		return *end ? EINVAL : 0;
	} else {
		return EINVAL;
	}
	return 0;
}

/* Parse "key=value ..." (no spaces inside values); load the trace. */
static int _parse_init(sys_data_t *sys, char *opts)
{
	const char *trace_path = NULL, *col_name = NULL;
	char err[256], *save = NULL, *tok;
	int rc;

	_sim.stats_s = SIM_STATS_DEFAULT_S;
	_sim.cap_w = INFINITY;
	_sim.limit_min_w = 1;
	_sim.limit_max_w = 65534;
	for (tok = strtok_r(opts, " \t", &save); tok;
	     tok = strtok_r(NULL, " \t", &save)) {
		if ((rc = _option(tok, &trace_path, &col_name))) {
			sys->log(sys, SETUP_ERROR, NULL,
				 "bmc_sim_dcmi: bad option '%s'", tok);
			return rc;
		}
	}
	if (!trace_path || !col_name) {
		sys->log(sys, SETUP_ERROR, NULL,
			 "bmc_sim_dcmi: trace= and column= are required");
		return EINVAL;
	}
	if ((rc = power_trace_load(trace_path, &_sim.trace, err, sizeof(err)))) {
		sys->log(sys, SETUP_ERROR, NULL, "bmc_sim_dcmi: %s", err);
		return -rc;
	}
	_sim.column = power_trace_column(_sim.trace, col_name);
	if (_sim.column < 0) {
		sys->log(sys, SETUP_ERROR, NULL,
			 "bmc_sim_dcmi: %s: no column '%s'", trace_path,
			 col_name);
		return EINVAL;
	}
	return 0;
}

/* The initial state, no limit: the first segment (it holds back to -inf,
 * as read_cap_log's first line does) and the cap log's first line. */
static void _cap_init(void)
{
	_sim.cap_since_s = _trace_now();
	if (_sim.follow)
		_cap_push(_sim.cap_since_s, INFINITY);
	_cap_log(_sim.cap_since_s);
}

int ipmi_sim_module_print_version(sys_data_t *sys, char *initstr)
{
	printf("bmc_sim_dcmi: DCMI 1.5 Get Power Reading from a power trace\n");
	return 0;
}

int ipmi_sim_module_init(sys_data_t *sys, const char *initstr)
{
	char *opts = strdup(initstr ? initstr : "");
	int rc;

	if (!opts)
		return ENOMEM;
	_sim.sys = sys;
	rc = _parse_init(sys, opts);
	free(opts);
	if (rc)
		return rc;
	_cap_init();

	ipmi_emu_register_group_extension_handler(DCMI_GROUP_EXT, _handle_dcmi,
						  NULL);
	return 0;
}
