/*
 * se-modbus-sim.c - a Modbus TCP/RTU power meter that plays a power trace.
 *
 * Serves one or more meters ("units"), each with a named model's register
 * map (modbus_models.c) or a custom one.  At every request the power
 * register holds the trace's watts at that instant and the energy register
 * the exact integral of the trace from the epoch (or the last reset) to that
 * instant, plus an optional offset, encoded in the register's own type so
 * that 16/32-bit counters wrap as real ones do.
 *
 * Requests are answered with libmodbus's server API (mappings from
 * modbus_mapping_new_start_address, modbus_reply, modbus_reply_exception;
 * modbus_receive on TCP).  Replies are rendered into a socketpair first, so
 * that faults can corrupt them and RTU replies can be paced on the line at
 * the configured baud rate (a pty ignores baud).  RTU frames are read here,
 * not by modbus_receive: libmodbus 3.1 filters RTU requests on a single
 * slave id and then skips the next frame as the other slave's answer, which
 * cannot serve a bus with several unit ids.
 *
 * Faults are driven at run time through a control file (see README.md).
 *
 * One program in one file, though over 800 lines: a meter's registers, its
 * serial and TCP framing and its faults all act on the one unit table the
 * request loop serves, and an admin reads it as one tool (README.md).
 */
#ifdef HAVE_CONFIG_H
#include "se_config.h"
#endif

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <math.h>
#include <modbus.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/select.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "modbus_codec.h"
#include "nvml_lib.h"
#include "power_trace.h"

#define SIM_MAX_UNITS		64
#define SIM_MAX_GPUS		8	/* --gpus: a node's */
#define SIM_MAX_CLIENTS		64
#define SIM_MAX_PENDING		256
#define SIM_ADU_MAX		300	/* > MODBUS_TCP_MAX_ADU_LENGTH (260) */
#define SIM_POLL_NS		(200 * 1000000ULL)
#define SIM_UJ_NS		(10 * 1000000ULL)	/* --energy-uj */
#define NS_PER_SEC		1000000000ULL
#define NS_PER_MS		1000000ULL
#define STALL_FOREVER		UINT64_MAX

/*
 * Private types
 */

typedef enum {
	GARBAGE_NONE = 0,
	GARBAGE_CRC,	/* RTU: bad CRC; TCP: wrong transaction id */
	GARBAGE_SHORT,	/* the first half of the reply only */
} garbage_t;

typedef struct {
	uint64_t stall_until;	/* monotonic ns; 0 none; STALL_FOREVER */
	int exception;		/* exception code to answer with, 0 none */
	garbage_t garbage;
	long delay_ms;		/* < 0: --response-delay-ms */
	bool power_set;		/* the power register reads power_w */
	double power_w;		/* watts (NaN, negative, absurd: any) */
	bool energy_set;	/* the energy register reads energy_value */
	double energy_value;	/* in register units (a float NaN too) */
} fault_t;

typedef struct {
	int id;			/* Modbus unit id */
	int col;		/* trace column */
	modbus_mapping_t *map;
	double base_t;		/* trace time the counter integrates from */
	uint64_t raw_offset;	/* whole counts added to an integer counter */
	long double frac;	/* integer counter: the meter's fraction of a
				 * count at base_t, in [0, 1) */
	long double offset_units; /* float register: the reading at base_t */
	fault_t fault;
	/* --cap: power = min(trace, cap), the cap read from a file (issue #45) */
	const char *cap_path;	/* NULL: the trace as it is */
	const char *idle_path;	/* --idle: while it exists, its watts bound
				 * the unit's power too (its node idles) */
	double cap_w;		/* the cap in force since seg_t */
	double seg_t;		/* trace time of the last cap change (>= base_t) */
	long double seg_j;	/* joules from base_t to seg_t */
	/* --energy-uj: the trace's part as a RAPL package's energy_uj */
	const char *energy_uj_path;
	uint64_t energy_uj_ns;	/* its last write, monotonic */
	/* --gpus: the GPUs inside the node, read through NVML (issue #45) */
	int n_gpus;
	nvmlDevice_t gpu[SIM_MAX_GPUS];
	unsigned long long gpu_base_mj[SIM_MAX_GPUS];	/* at base_t */
	unsigned long long gpu_last_mj[SIM_MAX_GPUS];	/* the last read */
} unit_t;

typedef struct {
	int fd;
	unit_t *unit;
	uint64_t due;
	int len;
	uint8_t req[SIM_ADU_MAX];
} pending_t;

typedef struct {
	/* options */
	const char *trace_path;
	const char *model_name;
	const char *tcp;
	const char *rtu;
	const char *control_path;
	const char *pidfile;
	const char *portfile;
	const char *logfile;
	const char *reads_path;	/* --reads: a line per answered read */
	const char *cap_log_path; /* --cap-log: a line per cap change */
	int baud, data_bits, stop_bits;
	char parity;
	long delay_ms;
	double epoch;
	double energy_offset;	/* joules */
	bool energy_offset_set;
	double start_kwh;	/* --energy-start-kwh, NAN when not given */
	bool verbose;
	/* state */
	mb_model_t map;
	power_trace_t *trace;
	unit_t units[SIM_MAX_UNITS];
	int nunits;
	modbus_t *ctx;
	int render[2];		/* socketpair: [1] libmodbus writes, [0] we read */
	int header_len;
	uint64_t char_ns;	/* RTU: one character on the line */
	struct stat control_st;
	bool control_seen;
	FILE *log;
	FILE *reads;
	FILE *cap_log;
	int clients[SIM_MAX_CLIENTS];
	int nclients;
	pending_t pending[SIM_MAX_PENDING];
	int npending;
} sim_t;

/*
 * Private variables
 */

static volatile sig_atomic_t _stop;
static volatile sig_atomic_t _reload;

static const struct option _long_opts[] = {
	{ "trace", required_argument, NULL, 't' },
	{ "column", required_argument, NULL, 'c' },
	{ "unit", required_argument, NULL, 'u' },
	{ "epoch", required_argument, NULL, 'e' },
	{ "model", required_argument, NULL, 'm' },
	{ "kind", required_argument, NULL, 'K' },
	{ "order", required_argument, NULL, 'O' },
	{ "power-reg", required_argument, NULL, 'P' },
	{ "power-type", required_argument, NULL, 'T' },
	{ "power-scale", required_argument, NULL, 'S' },
	{ "energy-reg", required_argument, NULL, 'E' },
	{ "energy-type", required_argument, NULL, 'Y' },
	{ "energy-scale", required_argument, NULL, 'Z' },
	{ "energy-offset", required_argument, NULL, 'o' },
	{ "energy-start-kwh", required_argument, NULL, 'k' },
	{ "max-regs", required_argument, NULL, 'M' },
	{ "tcp", required_argument, NULL, 'n' },
	{ "rtu", required_argument, NULL, 'r' },
	{ "baud", required_argument, NULL, 'b' },
	{ "parity", required_argument, NULL, 'p' },
	{ "data-bits", required_argument, NULL, 'd' },
	{ "stop-bits", required_argument, NULL, 's' },
	{ "response-delay-ms", required_argument, NULL, 'D' },
	{ "control", required_argument, NULL, 'C' },
	{ "pidfile", required_argument, NULL, 'i' },
	{ "port-file", required_argument, NULL, 'F' },
	{ "log", required_argument, NULL, 'l' },
	{ "reads", required_argument, NULL, 'R' },
	{ "cap", required_argument, NULL, 'X' },
	{ "cap-log", required_argument, NULL, 'G' },
	{ "idle", required_argument, NULL, 'I' },
	{ "gpus", required_argument, NULL, 'U' },
	{ "energy-uj", required_argument, NULL, 'J' },
	{ "verbose", no_argument, NULL, 'v' },
	{ "list-models", no_argument, NULL, 'L' },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

/* Unit specs from --unit/--column, resolved once the trace is loaded. */
static const char *_unit_specs[SIM_MAX_UNITS];
static int _nunit_specs;
/* --cap ID:PATH specs, applied once the units exist. */
static const char *_cap_specs[SIM_MAX_UNITS];
static int _ncap_specs;
/* --gpus ID:LIBRARY: the unit whose node holds NVML's GPUs. */
static const char *_gpus_spec;
/* --energy-uj ID:FILE specs. */
static const char *_uj_specs[SIM_MAX_UNITS];
static int _nuj_specs;
/* --idle ID:PATH specs, for units that have a --cap. */
static const char *_idle_specs[SIM_MAX_UNITS];
static int _nidle_specs;

/*
 * Private prototypes
 */

static void _usage(FILE *f);
static void _log(sim_t *sim, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static void _die(const char *fmt, ...)
	__attribute__((format(printf, 1, 2), noreturn));
static uint64_t _mono_ns(void);
static double _trace_now(const sim_t *sim);
static void _sleep_until(uint64_t t_ns);
static void _parse_args(sim_t *sim, int argc, char **argv);
static void _setup_units(sim_t *sim);
static void _update_unit(sim_t *sim, unit_t *u, double t);
static void _set_offset(sim_t *sim, unit_t *u, long double joules);
static void _arm_wrap(sim_t *sim, unit_t *u, double secs);
static void _describe_energy(sim_t *sim, const unit_t *u, double t,
			     char *buf, size_t len);
static void _control_poll(sim_t *sim);
static double _capped_joules(const sim_t *sim, const unit_t *u, double t0,
			     double t1);
static double _watts(const sim_t *sim, const unit_t *u, double t);
static void _caps_poll(sim_t *sim);
static void _setup_caps(sim_t *sim);
static void _setup_gpus(sim_t *sim);
static void _setup_energy_uj(sim_t *sim);
static void _energy_uj_poll(sim_t *sim);
static double _gpu_joules(const sim_t *sim, const unit_t *u, double t);
static double _gpu_watts(const unit_t *u);
static void _gpu_rebase(unit_t *u);
static int _render(sim_t *sim, unit_t *u, const uint8_t *req, int len,
		   uint8_t *rsp);
static int _apply_garbage(sim_t *sim, const unit_t *u, uint8_t *rsp,
			  int len);
static unit_t *_find_unit(sim_t *sim, int id);
static long _delay_ms(const sim_t *sim, const unit_t *u);
static bool _stalled(const unit_t *u);
static int _run_tcp(sim_t *sim);
static int _run_rtu(sim_t *sim);
static void _write_pidfile(sim_t *sim);
static void _on_signal(int sig);

/*
 * Main
 */

int main(int argc, char **argv)
{
	static sim_t sim;
	struct sigaction sa = { .sa_handler = _on_signal };
	int rv;

	_parse_args(&sim, argc, argv);
	_setup_units(&sim);
	_setup_caps(&sim);
	_setup_gpus(&sim);
	_setup_energy_uj(&sim);

	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGUSR1, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
	if (socketpair(AF_UNIX, SOCK_STREAM, 0, sim.render) < 0)
		_die("socketpair: %s", strerror(errno));
	fcntl(sim.render[0], F_SETFL, O_NONBLOCK);

	rv = sim.tcp ? _run_tcp(&sim) : _run_rtu(&sim);

	if (sim.pidfile)
		unlink(sim.pidfile);
	_log(&sim, "exiting");
	return rv;
}

/*
 * Private functions: options and setup
 */

static void _usage(FILE *f)
{
	fprintf(f,
"usage: se-modbus-sim --trace FILE [--column NAME | --unit ID:COLUMN ...]\n"
"         [--epoch UNIX_SECONDS] (--model NAME | custom map options)\n"
"         (--tcp ADDR:PORT | --rtu DEVICE [--baud N] [--parity N|E|O]\n"
"          [--data-bits N] [--stop-bits N])\n"
"         [--response-delay-ms MS] [--control FILE]\n"
"         [--energy-offset J | --energy-start-kwh KWH]\n"
"         [--max-regs N] [--pidfile F] [--port-file F] [--log F] [--verbose]\n"
"         [--reads F] [--cap ID:POWER_LIMIT_UW_FILE ...] [--cap-log F]\n"
"         [--idle ID:IDLE_WATTS_FILE ...] [--gpus ID:NVML_LIBRARY]\n"
"         [--energy-uj ID:FILE ...]\n"
"custom map: --kind input|holding --power-reg ADDR --power-type TYPE\n"
"         --order abcd|cdab|badc|dcba --power-scale W_PER_COUNT\n"
"         [--energy-reg ADDR --energy-type TYPE --energy-scale J_PER_COUNT]\n"
"  (addresses are 0-based wire addresses; types int16 uint16 int32 uint32\n"
"   float32 uint64 int64)\n"
"--list-models prints the built-in models.  See README.md.\n");
}

static void _log(sim_t *sim, const char *fmt, ...)
{
	struct timespec ts;
	struct tm tm;
	char when[32];
	va_list ap;
	FILE *f = sim->log ? sim->log : stderr;

	clock_gettime(CLOCK_REALTIME, &ts);
	localtime_r(&ts.tv_sec, &tm);
	strftime(when, sizeof(when), "%H:%M:%S", &tm);
	fprintf(f, "%s.%03ld se-modbus-sim[%d]: ", when, ts.tv_nsec / 1000000,
		(int)getpid());
	va_start(ap, fmt);
	vfprintf(f, fmt, ap);
	va_end(ap);
	fputc('\n', f);
	fflush(f);
}

static void _die(const char *fmt, ...)
{
	va_list ap;

	fputs("se-modbus-sim: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(2);
}

static uint64_t _mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * NS_PER_SEC + (uint64_t)ts.tv_nsec;
}

/* Trace time now: wall-clock seconds since --epoch. */
static double _trace_now(const sim_t *sim)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (double)ts.tv_sec + ts.tv_nsec * 1e-9 - sim->epoch;
}

static void _sleep_until(uint64_t t_ns)
{
	struct timespec ts = {
		.tv_sec = (time_t)(t_ns / NS_PER_SEC),
		.tv_nsec = (long)(t_ns % NS_PER_SEC),
	};

	while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) ==
	       EINTR && !_stop)
		;
}

static long _num(const char *s, long lo, long hi, const char *what)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 0);
	if (errno || end == s || *end || v < lo || v > hi)
		_die("bad %s '%s' (%ld..%ld)", what, s, lo, hi);
	return v;
}

static double _real(const char *s, const char *what)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(s, &end);
	if (errno || end == s || *end || !isfinite(v))
		_die("bad %s '%s'", what, s);
	return v;
}

static int _name(const char *const names[], const char *s, const char *what)
{
	int i = mb_name_index(names, s);

	if (i < 0)
		_die("unknown %s '%s'", what, s);
	return i;
}

static void _list_models(void)
{
	const mb_model_t *m;

	for (m = mb_models; m->name; m++)
		printf("%-8s %s (%s; power %s@%u %s, energy %s@%u %s)\n",
		       m->name, m->description, mb_kind_names[m->kind],
		       mb_type_names[m->power.type], m->power.address,
		       mb_order_names[m->power.order],
		       mb_type_names[m->energy.type], m->energy.address,
		       mb_order_names[m->energy.order]);
}

static void _add_unit_spec(const char *spec)
{
	if (_nunit_specs >= SIM_MAX_UNITS)
		_die("too many units (max %d)", SIM_MAX_UNITS);
	_unit_specs[_nunit_specs++] = spec;
}

/* One option of the custom map; returns false if opt is not one. */
static bool _custom_opt(mb_model_t *c, int opt, const char *arg)
{
	switch (opt) {
	case 'K':
		c->kind = _name(mb_kind_names, arg, "kind");
		break;
	case 'O':
		c->power.order = _name(mb_order_names, arg, "order");
		c->energy.order = c->power.order;
		break;
	case 'P':
		c->power.address = _num(arg, 0, 65535, "--power-reg");
		c->power.present = true;
		break;
	case 'T':
		c->power.type = _name(mb_type_names, arg, "type");
		break;
	case 'S':
		c->power.scale = _real(arg, "--power-scale");
		break;
	case 'E':
		c->energy.address = _num(arg, 0, 65535, "--energy-reg");
		c->energy.present = true;
		break;
	case 'Y':
		c->energy.type = _name(mb_type_names, arg, "type");
		break;
	case 'Z':
		c->energy.scale = _real(arg, "--energy-scale");
		break;
	default:
		return false;
	}
	return true;
}

static void _comm_opt(sim_t *sim, int opt, const char *arg)
{
	switch (opt) {
	case 'n':
		sim->tcp = arg;
		break;
	case 'r':
		sim->rtu = arg;
		break;
	case 'b':
		sim->baud = _num(arg, 50, 4000000, "--baud");
		break;
	case 'p':
		if (strlen(arg) != 1 || !strchr("NEOneo", arg[0]))
			_die("--parity is N, E or O");
		sim->parity = (char)(arg[0] & ~0x20);
		break;
	case 'd':
		sim->data_bits = _num(arg, 5, 8, "--data-bits");
		break;
	case 's':
		sim->stop_bits = _num(arg, 1, 2, "--stop-bits");
		break;
	default:
		_usage(stderr);
		exit(2);
	}
}

static void _other_opt(sim_t *sim, int opt, const char *arg)
{
	switch (opt) {
	case 't':
		sim->trace_path = arg;
		break;
	case 'c':
	case 'u':
		_add_unit_spec(arg);
		break;
	case 'e':
		sim->epoch = _real(arg, "--epoch");
		break;
	case 'm':
		sim->model_name = arg;
		break;
	case 'o':
		sim->energy_offset = _real(arg, "--energy-offset");
		sim->energy_offset_set = true;
		break;
	case 'k':
		sim->start_kwh = _real(arg, "--energy-start-kwh");
		if (sim->start_kwh < 0)
			_die("--energy-start-kwh must be >= 0");
		break;
	case 'M':
		sim->map.max_regs_per_read = _num(arg, 1, 125, "--max-regs");
		break;
	case 'D':
		sim->delay_ms = _num(arg, 0, 600000, "--response-delay-ms");
		break;
	case 'C':
		sim->control_path = arg;
		break;
	case 'i':
		sim->pidfile = arg;
		break;
	case 'F':
		sim->portfile = arg;
		break;
	case 'l':
		sim->logfile = arg;
		break;
	case 'R':
		sim->reads_path = arg;
		break;
	case 'X':
		if (_ncap_specs >= SIM_MAX_UNITS)
			_die("too many --cap (max %d)", SIM_MAX_UNITS);
		_cap_specs[_ncap_specs++] = arg;
		break;
	case 'G':
		sim->cap_log_path = arg;
		break;
	case 'U':
		_gpus_spec = arg;
		break;
	case 'J':
		if (_nuj_specs >= SIM_MAX_UNITS)
			_die("too many --energy-uj (max %d)", SIM_MAX_UNITS);
		_uj_specs[_nuj_specs++] = arg;
		break;
	case 'I':
		if (_nidle_specs >= SIM_MAX_UNITS)
			_die("too many --idle (max %d)", SIM_MAX_UNITS);
		_idle_specs[_nidle_specs++] = arg;
		break;
	case 'v':
		sim->verbose = true;
		break;
	case 'L':
		_list_models();
		exit(0);
	case 'h':
		_usage(stdout);
		exit(0);
	default:
		_comm_opt(sim, opt, arg);
	}
}

/* Take the model's map, or check the custom one is complete. */
static void _resolve_map(sim_t *sim, const mb_model_t *custom, bool any)
{
	const mb_model_t *m;
	uint16_t max = sim->map.max_regs_per_read;

	if (sim->model_name) {
		if (any)
			_die("--model and custom map options exclude each other");
		m = mb_model_find(sim->model_name);
		if (!m)
			_die("unknown model '%s' (try --list-models)",
			     sim->model_name);
		sim->map = *m;
	} else {
		if (!custom->power.present && !custom->energy.present)
			_die("give --model NAME or a custom map (--power-reg...)");
		sim->map = *custom;
		sim->map.name = "custom";
		sim->map.max_regs_per_read = 125;
	}
	if (max)
		sim->map.max_regs_per_read = max;
	if ((sim->map.power.present && !(sim->map.power.scale > 0)) ||
	    (sim->map.energy.present && !(sim->map.energy.scale > 0)))
		_die("scales must be > 0");
}

static void _parse_args(sim_t *sim, int argc, char **argv)
{
	mb_model_t custom = {
		.kind = MB_KIND_INPUT,
		.power = { false, 0, MB_FLOAT32, MB_ORDER_ABCD, 1.0 },
		.energy = { false, 0, MB_UINT32, MB_ORDER_ABCD, 3600.0 },
	};
	bool any_custom = false;
	int opt;

	sim->baud = 9600;
	sim->parity = 'N';
	sim->data_bits = 8;
	sim->stop_bits = 1;
	sim->epoch = NAN;
	sim->start_kwh = NAN;
	while ((opt = getopt_long(argc, argv, "", _long_opts, NULL)) != -1) {
		if (_custom_opt(&custom, opt, optarg))
			any_custom = true;
		else
			_other_opt(sim, opt, optarg);
	}
	if (optind != argc || !sim->trace_path)
		_die("--trace FILE is required (see --help)");
	if (!!sim->tcp == !!sim->rtu)
		_die("give exactly one of --tcp ADDR:PORT and --rtu DEVICE");
	_resolve_map(sim, &custom, any_custom);
	if (!isnan(sim->start_kwh) && sim->energy_offset_set)
		_die("--energy-offset and --energy-start-kwh exclude each other");
	if (!isnan(sim->start_kwh) && !sim->map.energy.present)
		_die("--energy-start-kwh needs an energy register");
	if (sim->logfile && !(sim->log = fopen(sim->logfile, "a")))
		_die("%s: %s", sim->logfile, strerror(errno));
	if (sim->reads_path && !(sim->reads = fopen(sim->reads_path, "a")))
		_die("%s: %s", sim->reads_path, strerror(errno));
	if (sim->cap_log_path &&
	    !(sim->cap_log = fopen(sim->cap_log_path, "a")))
		_die("%s: %s", sim->cap_log_path, strerror(errno));
	if (isnan(sim->epoch)) {
		sim->epoch = 0.0;
		sim->epoch = _trace_now(sim);
	}
}

/* The register block a map needs: [*start, *start + *n). */
static void _map_span(const mb_model_t *m, int *start, int *n)
{
	const mb_point_t *pts[2] = { &m->power, &m->energy };
	int lo = 65536, hi = 0, i;

	for (i = 0; i < 2; i++) {
		int end = pts[i]->address + (int)mb_type_words(pts[i]->type);

		if (!pts[i]->present)
			continue;
		if (pts[i]->address < lo)
			lo = pts[i]->address;
		if (end > hi)
			hi = end;
	}
	*start = lo;
	*n = hi - lo;
}

static void _new_unit(sim_t *sim, int id, int col)
{
	unit_t *u = &sim->units[sim->nunits++];
	int start, n;
	bool in = sim->map.kind == MB_KIND_INPUT;

	_map_span(&sim->map, &start, &n);
	u->id = id;
	u->col = col;
	u->map = modbus_mapping_new_start_address(0, 0, 0, 0,
						  in ? 0 : start, in ? 0 : n,
						  in ? start : 0, in ? n : 0);
	if (!u->map)
		_die("modbus_mapping_new_start_address: %s",
		     modbus_strerror(errno));
	u->fault.delay_ms = -1;
	if (!isnan(sim->start_kwh))	/* kWh x 3.6e6 J/kWh, kept exact-ish */
		_set_offset(sim, u, (long double)sim->start_kwh * 3600000.0L);
	else
		_set_offset(sim, u, sim->energy_offset);
}

static void _setup_units(sim_t *sim)
{
	char err[512] = "", what[128];
	int i, rc, max_id = sim->tcp ? 255 : 247;

	rc = power_trace_load(sim->trace_path, &sim->trace, err, sizeof(err));
	if (rc)
		_die("%s", err[0] ? err : strerror(-rc));
	if (!_nunit_specs)
		_add_unit_spec(power_trace_column_name(sim->trace, 0));
	for (i = 0; i < _nunit_specs; i++) {
		const char *spec = _unit_specs[i], *colon = strchr(spec, ':');
		char idbuf[16];
		int id = 1, col;

		if (colon && strspn(spec, "0123456789") == (size_t)(colon - spec)
		    && colon - spec < (long)sizeof(idbuf) && colon > spec) {
			memcpy(idbuf, spec, colon - spec);
			idbuf[colon - spec] = '\0';
			id = _num(idbuf, sim->tcp ? 0 : 1, max_id, "unit id");
			spec = colon + 1;
		}
		col = power_trace_column(sim->trace, spec);
		if (col < 0)
			_die("%s: no column '%s'", sim->trace_path, spec);
		if (_find_unit(sim, id))
			_die("unit %d given twice", id);
		_new_unit(sim, id, col);
		_describe_energy(sim, &sim->units[sim->nunits - 1], 0.0, what,
				 sizeof(what));
		_log(sim, "unit %d plays column %s; at the epoch: %s", id,
		     spec, what);
	}
}

/*
 * Private functions: meter values
 */

static uint16_t *_regs_at(const sim_t *sim, unit_t *u, uint16_t address)
{
	if (sim->map.kind == MB_KIND_INPUT)
		return u->map->tab_input_registers +
		       (address - u->map->start_input_registers);
	return u->map->tab_registers + (address - u->map->start_registers);
}

/* Bits an integer counter of this type counts before it wraps. */
static unsigned _wrap_bits(mb_type_t type)
{
	if (mb_type_counter_bits(type))
		return mb_type_counter_bits(type);
	if (type == MB_FLOAT32)
		return 0;
	return 16 * mb_type_words(type) - 1;	/* signed: the positive half */
}

static uint64_t _mask(unsigned bits)
{
	return bits >= 64 ? UINT64_MAX : (1ULL << bits) - 1;
}

/* The trace's part of a unit's energy (min(trace, cap) with --cap). */
static double _trace_joules(const sim_t *sim, const unit_t *u, double t)
{
	if (t <= u->base_t)
		return 0.0;
	if (u->cap_path)
		return (double)(u->seg_j + (long double)_capped_joules(
					sim, u, u->seg_t, t));
	return power_trace_joules(sim->trace, u->col, u->base_t, t);
}

static double _joules(const sim_t *sim, const unit_t *u, double t)
{
	if (t <= u->base_t)
		return 0.0;
	return _trace_joules(sim, u, t) + _gpu_joules(sim, u, t);
}

/*
 * Whole counts of an integer counter at trace time t, before the whole
 * counts of its offset: the meter's own fraction of a count at base_t plus
 * what accumulated since, floored (a meter advances its register only once
 * a whole unit has accumulated).
 */
static uint64_t _counts(const sim_t *sim, const unit_t *u, double t)
{
	long double c = floorl(u->frac + (long double)_joules(sim, u, t) /
			       (long double)sim->map.energy.scale);

	if (!(c > 0))
		return 0;
	return c >= 18446744073709551615.0L ? UINT64_MAX : (uint64_t)c;
}

/*
 * A float register holds its exact reading rounded to the nearest float,
 * as the Eastron meters do.  The reading is carried in long double (64-bit
 * significand), so the one rounding that matters is the cast to float: round
 * to nearest, ties to even, in the default floating-point environment.
 */
static float _float_reading(const sim_t *sim, const unit_t *u, double t)
{
	return (float)(u->offset_units + (long double)_joules(sim, u, t) /
		       (long double)sim->map.energy.scale);
}

static void _update_energy(sim_t *sim, unit_t *u, double t)
{
	const mb_point_t *p = &sim->map.energy;
	unsigned bits = _wrap_bits(p->type);
	uint16_t *regs = _regs_at(sim, u, p->address);

	if (!bits) {
		/* a float is exactly a double: mb_encode keeps it as it is */
		mb_encode((double)_float_reading(sim, u, t), p->type, p->order,
			  regs);
		return;
	}
	mb_encode_raw((_counts(sim, u, t) + u->raw_offset) & _mask(bits),
		      p->type, p->order, regs);
}

static void _update_unit(sim_t *sim, unit_t *u, double t)
{
	const mb_point_t *p = &sim->map.power, *e = &sim->map.energy;
	double w = u->fault.power_set ? u->fault.power_w : _watts(sim, u, t);

	if (p->present)
		mb_encode(w / p->scale, p->type, p->order,
			  _regs_at(sim, u, p->address));
	if (e->present && u->fault.energy_set)
		mb_encode(u->fault.energy_value, e->type, e->order,
			  _regs_at(sim, u, e->address));
	else if (e->present)
		_update_energy(sim, u, t);
	/* what the client was served and when: a test integrates it the
	 * way the client should have (test_step_boundaries) */
	if (sim->reads) {
		fprintf(sim->reads, "%d %.6f %.3f\n", u->id, t, w);
		fflush(sim->reads);
	}
}

/*
 * The energy register reads joules / scale register units at base_t (a
 * meter in service reads thousands of kWh).  An integer counter keeps the
 * whole counts and the meter's fraction of the next count; a reading given
 * with the register's own decimals (23456.7 kWh on a 0.1 kWh register) is
 * exactly that many counts, not one less for a binary rounding error.  An
 * integer counter does not go below 0; a float offset may.
 */
static void _set_offset(sim_t *sim, unit_t *u, long double joules)
{
	const mb_point_t *p = &sim->map.energy;
	long double q = joules / (long double)p->scale, whole = roundl(q);
	unsigned bits = _wrap_bits(p->type);

	u->raw_offset = 0;
	u->frac = 0.0L;
	u->offset_units = 0.0L;
	if (!p->present)
		return;
	if (fabsl(q - whole) < 1e-6L)
		q = whole;
	if (!bits) {
		u->offset_units = q;
		return;
	}
	if (!(q > 0))
		return;
	whole = floorl(q);
	u->frac = q - whole;
	u->raw_offset = whole >= 18446744073709551615.0L ? UINT64_MAX :
			(uint64_t)whole;
}

/* The register's value at trace time t, for the log. */
static void _describe_energy(sim_t *sim, const unit_t *u, double t,
			     char *buf, size_t len)
{
	unsigned bits = _wrap_bits(sim->map.energy.type);

	if (!sim->map.energy.present)
		snprintf(buf, len, "no energy register");
	else if (!bits)
		snprintf(buf, len, "energy register %.9g (%s)",
			 (double)_float_reading(sim, u, t),
			 mb_type_names[sim->map.energy.type]);
	else
		snprintf(buf, len, "energy register %" PRIu64 " counts (%s)",
			 (_counts(sim, u, t) + u->raw_offset) & _mask(bits),
			 mb_type_names[sim->map.energy.type]);
}

/* Set the counter offset so that it wraps secs seconds from now. */
static void _arm_wrap(sim_t *sim, unit_t *u, double secs)
{
	unsigned bits = _wrap_bits(sim->map.energy.type);
	uint64_t at;

	if (!bits || !sim->map.energy.present) {
		_log(sim, "unit %d: wrap ignored: energy is not an integer "
		     "counter", u->id);
		return;
	}
	at = _counts(sim, u, _trace_now(sim) + secs);
	u->raw_offset = (0 - at) & _mask(bits);
	_log(sim, "unit %d: %u-bit counter wraps in %.3f s (offset %" PRIu64
	     " counts)", u->id, bits, secs, u->raw_offset);
}

static void _reset_counter(sim_t *sim, unit_t *u)
{
	u->base_t = _trace_now(sim);
	u->raw_offset = 0;
	u->frac = 0.0L;
	u->offset_units = 0.0L;
	u->seg_t = u->base_t;
	u->seg_j = 0.0L;
	_gpu_rebase(u);
	_log(sim, "unit %d: energy counter reset at trace time %.3f", u->id,
	     u->base_t);
}

/*
 * Private functions: fault control file
 */

static void _clear_faults(sim_t *sim)
{
	int i;

	for (i = 0; i < sim->nunits; i++) {
		sim->units[i].fault = (fault_t){ .delay_ms = -1 };
	}
}

/* Apply one parsed control line to one unit. */
static void _apply_line(sim_t *sim, unit_t *u, const char *kw,
			const char *arg)
{
	fault_t *f = &u->fault;
	double v = arg ? strtod(arg, NULL) : 0.0;

	if (!strcasecmp(kw, "stall") && !arg)
		f->stall_until = STALL_FOREVER;
	else if (!strcasecmp(kw, "stall"))
		f->stall_until = v > 0 ? _mono_ns() + (uint64_t)(v * 1e9) : 0;
	else if (!strcasecmp(kw, "exception"))
		f->exception = arg ? (int)strtol(arg, NULL, 0) : 4;
	else if (!strcasecmp(kw, "garbage"))
		f->garbage = arg && !strcasecmp(arg, "short") ?
			GARBAGE_SHORT : GARBAGE_CRC;
	else if (!strcasecmp(kw, "delay"))
		f->delay_ms = (long)v;
	else if (!strcasecmp(kw, "power") && arg) {
		f->power_set = true;
		f->power_w = v;		/* strtod takes "nan" and "-inf" */
	} else if (!strcasecmp(kw, "energy") && arg) {
		f->energy_set = true;
		f->energy_value = v;
	}
	else if (!strcasecmp(kw, "offset"))
		_set_offset(sim, u, v);
	else if (!strcasecmp(kw, "wrap"))
		_arm_wrap(sim, u, v);
	else if (!strcasecmp(kw, "reset"))
		_reset_counter(sim, u);
}

static bool _known_keyword(const char *kw)
{
	static const char *const kws[] = { "stall", "exception", "garbage",
		"delay", "offset", "wrap", "reset", "clear", "power", "energy",
		NULL };

	return mb_name_index(kws, kw) >= 0;
}

static void _control_line(sim_t *sim, char *line)
{
	char *tok[4] = { NULL }, *save = NULL, *s;
	const char *kw, *arg = NULL;
	int ntok = 0, unit = -1, i;

	if ((s = strchr(line, '#')))
		*s = '\0';
	for (s = strtok_r(line, " \t\r\n", &save); s && ntok < 4;
	     s = strtok_r(NULL, " \t\r\n", &save)) {
		if (!strncasecmp(s, "unit=", 5))
			unit = atoi(s + 5);
		else
			tok[ntok++] = s;
	}
	if (!ntok)
		return;
	kw = tok[0];
	arg = tok[1];
	if (!_known_keyword(kw)) {
		_log(sim, "control: unknown line '%s' ignored", kw);
		return;
	}
	_log(sim, "control: %s%s%s%s", kw, arg ? " " : "", arg ? arg : "",
	     unit >= 0 ? " (one unit)" : "");
	for (i = 0; i < sim->nunits; i++) {
		if (unit < 0 || sim->units[i].id == unit)
			_apply_line(sim, &sim->units[i], kw, arg);
	}
}

static void _control_load(sim_t *sim)
{
	char line[256];
	FILE *f = fopen(sim->control_path, "r");

	_clear_faults(sim);
	if (!f) {
		_log(sim, "control: %s absent: no faults", sim->control_path);
		return;
	}
	while (fgets(line, sizeof(line), f))
		_control_line(sim, line);
	fclose(f);
}

static bool _same_stat(const struct stat *a, const struct stat *b)
{
	return a->st_ino == b->st_ino && a->st_size == b->st_size &&
	       a->st_mtim.tv_sec == b->st_mtim.tv_sec &&
	       a->st_mtim.tv_nsec == b->st_mtim.tv_nsec;
}

/* Re-read the control file when it changed (or on SIGUSR1). */
static void _control_poll(sim_t *sim)
{
	struct stat st;
	bool exists;

	_caps_poll(sim);
	if (!sim->control_path)
		return;
	exists = stat(sim->control_path, &st) == 0;
	if (!_reload && exists == sim->control_seen &&
	    (!exists || _same_stat(&st, &sim->control_st)))
		return;
	_reload = 0;
	sim->control_seen = exists;
	if (exists)
		sim->control_st = st;
	_control_load(sim);
}

/*
 * Private functions: answering a request
 */

static unit_t *_find_unit(sim_t *sim, int id)
{
	int i;

	for (i = 0; i < sim->nunits; i++) {
		if (sim->units[i].id == id)
			return &sim->units[i];
	}
	return NULL;
}

static long _delay_ms(const sim_t *sim, const unit_t *u)
{
	return u->fault.delay_ms >= 0 ? u->fault.delay_ms : sim->delay_ms;
}

static bool _stalled(const unit_t *u)
{
	return u->fault.stall_until && _mono_ns() < u->fault.stall_until;
}

/* Read back what libmodbus wrote into the render socket. */
static int _drain_render(sim_t *sim, uint8_t *rsp)
{
	int len = 0;
	ssize_t n;

	while ((n = recv(sim->render[0], rsp + len, SIM_ADU_MAX - len,
			 MSG_DONTWAIT)) > 0)
		len += (int)n;
	return len;
}

/* A read whose register count breaks the meter's limit: 0x03. */
static bool _too_many(const sim_t *sim, const uint8_t *req)
{
	const uint8_t *pdu = req + sim->header_len;
	int nb;

	if (pdu[0] != 0x03 && pdu[0] != 0x04)
		return false;
	nb = (pdu[3] << 8) | pdu[4];
	return nb < 1 || nb > sim->map.max_regs_per_read;
}

/*
 * Build the reply to req for unit u into rsp, through libmodbus.
 * Returns its length, 0 when nothing is to be sent.
 */
static int _render(sim_t *sim, unit_t *u, const uint8_t *req, int len,
		   uint8_t *rsp)
{
	int s = modbus_get_socket(sim->ctx), code = 0;

	if (u && u->fault.exception)
		code = u->fault.exception;
	else if (!u)
		code = MODBUS_EXCEPTION_GATEWAY_TARGET;
	else if (_too_many(sim, req))
		code = MODBUS_EXCEPTION_ILLEGAL_DATA_VALUE;
	modbus_set_socket(sim->ctx, sim->render[1]);
	if (code) {
		modbus_reply_exception(sim->ctx, req, code);
	} else {
		_update_unit(sim, u, _trace_now(sim));
		modbus_reply(sim->ctx, req, len, u->map);
	}
	modbus_set_socket(sim->ctx, s);
	return _drain_render(sim, rsp);
}

static uint16_t _crc16(const uint8_t *p, int n)
{
	uint16_t crc = 0xFFFF;
	int i, b;

	for (i = 0; i < n; i++) {
		crc ^= p[i];
		for (b = 0; b < 8; b++)
			crc = (crc & 1) ? (crc >> 1) ^ 0xA001 : crc >> 1;
	}
	return crc;
}

/* Corrupt a rendered reply as the unit's garbage fault says. */
static int _apply_garbage(sim_t *sim, const unit_t *u, uint8_t *rsp, int len)
{
	if (!u || len < 4)
		return len;
	switch (u->fault.garbage) {
	case GARBAGE_CRC:
		if (sim->rtu)
			rsp[len - 1] ^= 0x5A;	/* CRC no longer matches */
		else
			rsp[1] ^= 0x5A;	/* MBAP transaction id */
		return len;
	case GARBAGE_SHORT:
		return len / 2;
	default:
		return len;
	}
}

/*
 * Private functions: TCP
 */

static void _parse_hostport(const char *s, char *host, size_t hlen, int *port)
{
	const char *colon = strrchr(s, ':');
	struct in_addr a;

	if (!colon || (size_t)(colon - s) >= hlen)
		_die("--tcp wants ADDR:PORT, got '%s'", s);
	memcpy(host, s, colon - s);
	host[colon - s] = '\0';
	*port = (int)_num(colon + 1, 0, 65535, "port");
	if (inet_pton(AF_INET, host, &a) != 1)
		_die("--tcp: '%s' is not an IPv4 address", host);
	if (a.s_addr == htonl(INADDR_ANY))
		_die("--tcp: refusing the wildcard address; give loopback or "
		     "one of this namespace's own addresses");
}

static int _tcp_listen(sim_t *sim)
{
	char host[64];
	int port, fd;
	struct sockaddr_in sa;
	socklen_t sl = sizeof(sa);

	_parse_hostport(sim->tcp, host, sizeof(host), &port);
	sim->ctx = modbus_new_tcp(host, port);
	if (!sim->ctx)
		_die("modbus_new_tcp: %s", modbus_strerror(errno));
	fd = modbus_tcp_listen(sim->ctx, 16);
	if (fd < 0)
		_die("listen on %s: %s", sim->tcp, modbus_strerror(errno));
	getsockname(fd, (struct sockaddr *)&sa, &sl);
	_log(sim, "listening on %s:%d, %d unit(s), model %s", host,
	     ntohs(sa.sin_port), sim->nunits, sim->map.name);
	if (sim->portfile) {
		FILE *f = fopen(sim->portfile, "w");

		if (!f)
			_die("%s: %s", sim->portfile, strerror(errno));
		fprintf(f, "%d\n", ntohs(sa.sin_port));
		fclose(f);
	}
	return fd;
}

static void _drop_client(sim_t *sim, int idx)
{
	int fd = sim->clients[idx], i;

	for (i = 0; i < sim->npending; i++) {
		if (sim->pending[i].fd == fd)
			sim->pending[i--] = sim->pending[--sim->npending];
	}
	close(fd);
	sim->clients[idx] = sim->clients[--sim->nclients];
}

static void _send_all(int fd, const uint8_t *p, int len)
{
	ssize_t n;

	while (len > 0 && (n = send(fd, p, len, MSG_NOSIGNAL)) > 0) {
		p += n;
		len -= (int)n;
	}
}

static void _tcp_answer(sim_t *sim, pending_t *pd)
{
	uint8_t rsp[SIM_ADU_MAX];
	int len = _render(sim, pd->unit, pd->req, pd->len, rsp);

	len = _apply_garbage(sim, pd->unit, rsp, len);
	if (sim->verbose)
		_log(sim, "tcp fd %d unit %d fc 0x%02x: %d bytes", pd->fd,
		     pd->req[6], pd->req[7], len);
	_send_all(pd->fd, rsp, len);
}

static void _tcp_request(sim_t *sim, int fd, const uint8_t *req, int len)
{
	unit_t *u = _find_unit(sim, req[6]);
	pending_t *pd;

	if (u && _stalled(u)) {
		if (sim->verbose)
			_log(sim, "unit %d stalled: request dropped", u->id);
		return;
	}
	if (sim->npending >= SIM_MAX_PENDING) {
		_log(sim, "too many pending replies: request dropped");
		return;
	}
	pd = &sim->pending[sim->npending++];
	pd->fd = fd;
	pd->unit = u;
	pd->len = len;
	memcpy(pd->req, req, len);
	pd->due = _mono_ns() + (uint64_t)(u ? _delay_ms(sim, u) : 0) *
		  NS_PER_MS;
}

static void _tcp_due(sim_t *sim)
{
	uint64_t now = _mono_ns();
	int i;

	for (i = 0; i < sim->npending; i++) {
		pending_t pd = sim->pending[i];

		if (pd.due > now)
			continue;
		sim->pending[i--] = sim->pending[--sim->npending];
		_tcp_answer(sim, &pd);
	}
}

static void _tcp_readable(sim_t *sim, int idx)
{
	uint8_t req[MODBUS_TCP_MAX_ADU_LENGTH];
	int rc;

	modbus_set_socket(sim->ctx, sim->clients[idx]);
	rc = modbus_receive(sim->ctx, req);
	if (rc < 0) {
		if (sim->verbose)
			_log(sim, "client fd %d gone: %s", sim->clients[idx],
			     modbus_strerror(errno));
		_drop_client(sim, idx);
		return;
	}
	if (rc > 0) {
		_control_poll(sim);
		_tcp_request(sim, sim->clients[idx], req, rc);
	}
}

static void _tcp_accept(sim_t *sim, int lfd)
{
	int fd = modbus_tcp_accept(sim->ctx, &lfd);

	if (fd < 0)
		return;
	if (sim->nclients >= SIM_MAX_CLIENTS) {
		_log(sim, "too many clients: connection refused");
		close(fd);
		return;
	}
	sim->clients[sim->nclients++] = fd;
	if (sim->verbose)
		_log(sim, "client connected (fd %d)", fd);
}

static struct timeval _tcp_timeout(const sim_t *sim)
{
	uint64_t now = _mono_ns(), wait = _nuj_specs ? SIM_UJ_NS : SIM_POLL_NS;
	int i;

	for (i = 0; i < sim->npending; i++) {
		uint64_t due = sim->pending[i].due;

		if (due <= now)
			wait = 0;
		else if (due - now < wait)
			wait = due - now;
	}
	return (struct timeval){ .tv_sec = (time_t)(wait / NS_PER_SEC),
				 .tv_usec = (long)(wait % NS_PER_SEC) / 1000 };
}

static int _run_tcp(sim_t *sim)
{
	int lfd = _tcp_listen(sim), i;

	sim->header_len = modbus_get_header_length(sim->ctx);
	modbus_set_response_timeout(sim->ctx, 0, 1000);
	_write_pidfile(sim);
	_control_poll(sim);
	while (!_stop) {
		fd_set rd;
		struct timeval tv = _tcp_timeout(sim);
		int maxfd = lfd;

		FD_ZERO(&rd);
		FD_SET(lfd, &rd);
		for (i = 0; i < sim->nclients; i++) {
			FD_SET(sim->clients[i], &rd);
			if (sim->clients[i] > maxfd)
				maxfd = sim->clients[i];
		}
		if (select(maxfd + 1, &rd, NULL, NULL, &tv) < 0) {
			if (errno != EINTR)
				_die("select: %s", strerror(errno));
			/* The sets are undefined after EINTR (a SIGTERM):
			 * look at the stop flag before touching a socket. */
			continue;
		}
		_control_poll(sim);
		if (FD_ISSET(lfd, &rd))
			_tcp_accept(sim, lfd);
		for (i = sim->nclients - 1; i >= 0; i--) {
			if (FD_ISSET(sim->clients[i], &rd))
				_tcp_readable(sim, i);
		}
		_tcp_due(sim);
	}
	close(lfd);
	return 0;
}

/*
 * Private functions: RTU
 */

/* Expected length of an RTU request from its first bytes; 0: need more,
 * -1: unknown function (the frame ends at the inter-frame silence). */
static int _rtu_frame_len(const uint8_t *b, int n)
{
	if (n < 2)
		return 0;
	switch (b[1]) {
	case 0x01: case 0x02: case 0x03: case 0x04: case 0x05: case 0x06:
	case 0x08:
		return 8;
	case 0x07: case 0x0B: case 0x0C: case 0x11:
		return 4;
	case 0x0F: case 0x10:
		return n < 7 ? 0 : 9 + b[6];
	case 0x17:
		return n < 11 ? 0 : 13 + b[10];
	default:
		return -1;
	}
}

/* Silence that ends a frame: 3.5 characters, 1.75 ms above 19200 baud,
 * but at least 5 ms since a pty delivers in scheduler-sized bursts. */
static uint64_t _rtu_t35(const sim_t *sim)
{
	return sim->baud > 19200 ? 1750000ULL : sim->char_ns * 7 / 2;
}

static uint64_t _rtu_gap(const sim_t *sim)
{
	uint64_t t = _rtu_t35(sim);

	return t < 5 * NS_PER_MS ? 5 * NS_PER_MS : t;
}

/* Write a frame one character at a time at the line's pace. */
static void _rtu_transmit(sim_t *sim, int fd, const uint8_t *p, int len)
{
	uint64_t t = _mono_ns();
	int i;

	for (i = 0; i < len && !_stop; i++) {
		t += sim->char_ns;
		_sleep_until(t);
		if (write(fd, p + i, 1) != 1) {
			_log(sim, "rtu write: %s", strerror(errno));
			return;
		}
	}
}

static void _rtu_request(sim_t *sim, int fd, const uint8_t *req, int len,
			 uint64_t t_end)
{
	uint8_t rsp[SIM_ADU_MAX];
	unit_t *u = _find_unit(sim, req[0]);
	int n;

	if (!u || req[0] == 0)
		return;		/* another device's, or a broadcast */
	_control_poll(sim);
	if (_stalled(u)) {
		if (sim->verbose)
			_log(sim, "unit %d stalled: request dropped", u->id);
		return;
	}
	/* The request took len characters on the wire, then 3.5 of silence,
	 * then the device thinks for its response delay. */
	_sleep_until(t_end + (uint64_t)len * sim->char_ns + _rtu_t35(sim) +
		     (uint64_t)_delay_ms(sim, u) * NS_PER_MS);
	n = _apply_garbage(sim, u, rsp, _render(sim, u, req, len, rsp));
	if (sim->verbose)
		_log(sim, "rtu unit %d fc 0x%02x: %d bytes", u->id, req[1], n);
	_rtu_transmit(sim, fd, rsp, n);
}

/* Take a complete frame off the buffer; returns its length or 0. */
static int _rtu_take_frame(sim_t *sim, uint8_t *buf, int *have, bool silent,
			   uint8_t *frame)
{
	int want = _rtu_frame_len(buf, *have);

	if (want < 0 && silent)
		want = *have;
	if (want > SIM_ADU_MAX) {
		want = 0;	/* no request is this long: noise */
		silent = true;
	}
	if (want <= 0 || want > *have) {
		if (silent && *have) {
			if (sim->verbose)
				_log(sim, "rtu: %d stray bytes dropped", *have);
			*have = 0;
		}
		return 0;
	}
	memcpy(frame, buf, want);
	memmove(buf, buf + want, *have - want);
	*have -= want;
	return want;
}

static void _rtu_frame(sim_t *sim, int fd, const uint8_t *f, int len,
		       uint64_t t_end)
{
	if (len < 4 || _crc16(f, len - 2) != (f[len - 2] | f[len - 1] << 8)) {
		if (sim->verbose)
			_log(sim, "rtu: frame of %d bytes with bad CRC dropped",
			     len);
		return;
	}
	_rtu_request(sim, fd, f, len, t_end);
}

static int _rtu_open(sim_t *sim)
{
	int bits = 1 + sim->data_bits + (sim->parity != 'N') + sim->stop_bits;

	sim->ctx = modbus_new_rtu(sim->rtu, sim->baud, sim->parity,
				  sim->data_bits, sim->stop_bits);
	if (!sim->ctx || modbus_connect(sim->ctx) < 0)
		_die("open %s: %s", sim->rtu, modbus_strerror(errno));
	sim->header_len = modbus_get_header_length(sim->ctx);
	modbus_set_response_timeout(sim->ctx, 0, 1000);
	sim->char_ns = (uint64_t)bits * NS_PER_SEC / (uint64_t)sim->baud;
	_log(sim, "serving %s at %d %d%c%d (%.3f ms/char), %d unit(s), "
	     "model %s", sim->rtu, sim->baud, sim->data_bits, sim->parity,
	     sim->stop_bits, sim->char_ns / 1e6, sim->nunits, sim->map.name);
	return modbus_get_socket(sim->ctx);
}

static int _run_rtu(sim_t *sim)
{
	uint8_t buf[1024], frame[SIM_ADU_MAX];
	int fd = _rtu_open(sim), have = 0, len;
	uint64_t last = 0;

	_write_pidfile(sim);
	_control_poll(sim);
	while (!_stop) {
		fd_set rd;
		uint64_t wait = have ? _rtu_gap(sim) : SIM_POLL_NS;
		struct timeval tv = { 0, (long)(wait / 1000) };
		ssize_t n;

		FD_ZERO(&rd);
		FD_SET(fd, &rd);
		if (select(fd + 1, &rd, NULL, NULL, &tv) < 0) {
			if (errno != EINTR)
				_die("select: %s", strerror(errno));
			continue;	/* sets undefined: re-check the stop flag */
		}
		_control_poll(sim);
		if (FD_ISSET(fd, &rd)) {
			n = read(fd, buf + have, sizeof(buf) - have);
			if (n > 0) {
				have += (int)n;
				last = _mono_ns();
			}
		}
		while ((len = _rtu_take_frame(sim, buf, &have,
					      _mono_ns() - last >=
					      _rtu_gap(sim), frame)) > 0)
			_rtu_frame(sim, fd, frame, len, last);
		if (have == (int)sizeof(buf))
			have = 0;
	}
	return 0;
}

static void _write_pidfile(sim_t *sim)
{
	char tmp[4096];
	FILE *f;

	if (!sim->pidfile)
		return;
	snprintf(tmp, sizeof(tmp), "%s.tmp", sim->pidfile);
	f = fopen(tmp, "w");
	if (!f || fprintf(f, "%d\n", (int)getpid()) < 0 || fclose(f) ||
	    rename(tmp, sim->pidfile))
		_die("%s: %s", sim->pidfile, strerror(errno));
}

static void _on_signal(int sig)
{
	if (sig == SIGUSR1)
		_reload = 1;
	else
		_stop = 1;
}

/*
 * Private functions: a load-following meter (--cap, issue #45)
 *
 * A unit given --cap ID:PATH draws min(trace, cap): the trace is the node's
 * demand, the cap the number in PATH in microwatts, as the powercap agent's
 * rapl knob writes a fake sysfs tree's constraint_0_power_limit_uw.  The
 * file is read on every request and at least every SIM_POLL_NS; a change
 * takes effect at the trace time it is seen (like a RAPL limit applied at
 * its next window), is written to --cap-log as "UNIT TRACE_TIME CAP_W",
 * and the energy register integrates min(trace, cap) exactly: the joules up
 * to the last change are kept in long double, the rest is
 * power_trace_joules_capped() from there.  A test recomputes the same from
 * the trace and the cap log (selab.capped), independently.
 *
 * --idle ID:PATH (with --cap ID:...): while PATH exists, the watts in it
 * bound the unit's power too: the node's job ended and it idles, whatever
 * the trace demands (a powercap daemon uncaps an idle node; its trace
 * would otherwise draw the job's demand uncapped).  The bound in force is
 * min(cap, idle), and that is what the cap log records, so the truth
 * recomputed from the log needs nothing else.
 */

static double _capped_joules(const sim_t *sim, const unit_t *u, double t0,
			     double t1)
{
	if (t1 <= t0)
		return 0.0;
	return power_trace_joules_capped(sim->trace, u->col, t0, t1, u->cap_w);
}

static double _watts(const sim_t *sim, const unit_t *u, double t)
{
	double w = power_trace_watts(sim->trace, u->col, t);

	return (u->cap_path && u->cap_w < w ? u->cap_w : w) + _gpu_watts(u);
}

/* The cap in PATH in watts, or NAN (errno-style text in err). */
static double _read_cap(const char *path, char *err, size_t len)
{
	char buf[64], *end;
	double uw;
	FILE *f = fopen(path, "r");
	size_t n;

	if (!f) {
		snprintf(err, len, "%s", strerror(errno));
		return NAN;
	}
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	errno = 0;
	uw = strtod(buf, &end);
	while (*end == '\n' || *end == ' ')
		end++;
	if (end == buf || *end || errno || !(uw >= 0) || isinf(uw)) {
		snprintf(err, len, "'%.*s' is not microwatts",
			 (int)strcspn(buf, "\n"), buf);
		return NAN;
	}
	return uw / 1e6;
}

static void _cap_logline(sim_t *sim, const unit_t *u, double t)
{
	if (!sim->cap_log)
		return;
	fprintf(sim->cap_log, "%d %.9f %.6f\n", u->id, t, u->cap_w);
	fflush(sim->cap_log);
}

/* The watts in an --idle file; INFINITY while it does not exist. */
static double _read_idle(const unit_t *u)
{
	char buf[64];
	FILE *f;
	size_t n;
	double w;

	if (!u->idle_path || !(f = fopen(u->idle_path, "r")))
		return INFINITY;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	w = strtod(buf, NULL);
	return w >= 0 ? w : INFINITY;
}

/* Re-read one unit's cap; a change starts a new segment at trace time t. */
static void _cap_poll(sim_t *sim, unit_t *u, double t)
{
	char err[160];
	double cap = _read_cap(u->cap_path, err, sizeof(err));
	double idle = _read_idle(u);

	if (isnan(cap)) {	/* keep the cap in force, as a BMC would */
		_log(sim, "unit %d: %s: %s: cap kept at %.3f W", u->id,
		     u->cap_path, err, u->cap_w);
		return;
	}
	if (idle < cap)
		cap = idle;
	if (cap == u->cap_w)
		return;
	if (t > u->seg_t) {
		u->seg_j += (long double)_capped_joules(sim, u, u->seg_t, t);
		u->seg_t = t;
	}
	u->cap_w = cap;
	_cap_logline(sim, u, t);
	if (sim->verbose)
		_log(sim, "unit %d: cap %.3f W at trace time %.6f", u->id,
		     cap, t);
}

static void _caps_poll(sim_t *sim)
{
	double t = _trace_now(sim);
	int i;

	_energy_uj_poll(sim);
	for (i = 0; i < sim->nunits; i++)
		if (sim->units[i].cap_path)
			_cap_poll(sim, &sim->units[i], t);
}

/* An --OPT ID:PATH spec's unit (it must exist) and PATH. */
static unit_t *_spec_unit(sim_t *sim, const char *opt, const char *spec,
			  const char **path)
{
	const char *colon = strchr(spec, ':');
	char idbuf[16], what[32];
	unit_t *u;

	if (!colon || colon == spec || colon - spec >= (long)sizeof(idbuf))
		_die("--%s '%s': expected ID:PATH", opt, spec);
	memcpy(idbuf, spec, colon - spec);
	idbuf[colon - spec] = '\0';
	snprintf(what, sizeof(what), "--%s unit id", opt);
	u = _find_unit(sim, _num(idbuf, 0, 255, what));
	if (!u)
		_die("--%s '%s': no unit %s", opt, spec, idbuf);
	*path = colon + 1;
	return u;
}

static void _setup_caps(sim_t *sim)
{
	char err[160];
	const char *path;
	int i;

	for (i = 0; i < _ncap_specs; i++) {
		unit_t *u = _spec_unit(sim, "cap", _cap_specs[i], &path);

		if (u->cap_path)
			_die("--cap: unit %d given twice", u->id);
		u->cap_path = path;
		u->cap_w = _read_cap(u->cap_path, err, sizeof(err));
		if (isnan(u->cap_w))
			_die("--cap: %s: %s", u->cap_path, err);
		u->seg_t = u->base_t;
		u->seg_j = 0.0L;
		_cap_logline(sim, u, _trace_now(sim));
		_log(sim, "unit %d follows the cap in %s (now %.3f W)", u->id,
		     u->cap_path, u->cap_w);
	}
	for (i = 0; i < _nidle_specs; i++) {
		unit_t *u = _spec_unit(sim, "idle", _idle_specs[i], &path);

		if (!u->cap_path)
			_die("--idle '%s': unit %d has no --cap", _idle_specs[i],
			     u->id);
		u->idle_path = path;
	}
}

/*
 * Private functions: the GPUs inside a node (--gpus ID:NVML_LIBRARY)
 *
 * A node's power meter sees its GPUs too.  With --gpus, unit ID adds every
 * GPU of the NVML library given (the fake NVML of tests/gpu, its state
 * named by FAKE_NVML_STATE in this process's environment) to what it
 * serves: power + the GPUs' nvmlDeviceGetPowerUsage, energy + what their
 * nvmlDeviceGetTotalEnergyConsumption counters added since the unit's
 * base.  A fake NVML with follow_limits obeys the power cap's nvml knob,
 * so the meter follows a GPU node's caps.  The GPUs are read after the
 * trace time the request is served at (microseconds, more on a loaded
 * host): their energy is taken back to that time at their power, so
 * that the counter stands for one instant; their power is the one read.
 * A failed read counts the power as 0 and holds the counter.  One unit
 * only: NVML is process-wide.
 */

static const nvml_lib_t *_nvml;

static void _gpu_rebase(unit_t *u)
{
	for (int i = 0; i < u->n_gpus; i++) {
		unsigned long long mj = 0;

		if (_nvml->DeviceGetTotalEnergyConsumption(u->gpu[i], &mj))
			mj = u->gpu_last_mj[i];
		u->gpu_base_mj[i] = u->gpu_last_mj[i] = mj;
	}
}

static double _gpu_watts_one(const unit_t *u, int i)
{
	unsigned int mw;

	if (!_nvml->DeviceGetPowerUsage ||
	    _nvml->DeviceGetPowerUsage(u->gpu[i], &mw))
		return 0.0;
	return mw / 1000.0;
}

static double _gpu_joules(const sim_t *sim, const unit_t *u, double t)
{
	double j = 0.0;

	for (int i = 0; i < u->n_gpus; i++) {
		unsigned long long mj;
		unit_t *w = (unit_t *)u;	/* the last read is a cache */
		double before = _trace_now(sim), lag;
		bool ok = !_nvml->DeviceGetTotalEnergyConsumption(u->gpu[i],
								  &mj);

		/* the read's instant: the middle of the call */
		lag = (before + _trace_now(sim)) / 2 - t;
		if (ok && mj >= u->gpu_last_mj[i])
			w->gpu_last_mj[i] = mj;
		j += (u->gpu_last_mj[i] - u->gpu_base_mj[i]) / 1000.0;
		if (ok && lag > 0)	/* < 0: a wrap armed ahead */
			j -= lag * _gpu_watts_one(u, i);
	}
	return j;
}

static double _gpu_watts(const unit_t *u)
{
	double w = 0;

	for (int i = 0; i < u->n_gpus; i++)
		w += _gpu_watts_one(u, i);
	return w;
}

static void _setup_gpus(sim_t *sim)
{
	char err[256];
	const char *lib;
	unsigned n;
	unit_t *u;

	if (!_gpus_spec)
		return;
	u = _spec_unit(sim, "gpus", _gpus_spec, &lib);
	if (!(_nvml = nvml_lib_open(*lib ? lib : NULL, err, sizeof(err))))
		_die("--gpus: %s", err);
	if (_nvml->DeviceGetCount(&n) || n > SIM_MAX_GPUS)
		_die("--gpus: %s: no GPU count, or more than %d", lib,
		     SIM_MAX_GPUS);
	for (unsigned i = 0; i < n; i++)
		if (_nvml->DeviceGetHandleByIndex(i, &u->gpu[i]))
			_die("--gpus: %s: no handle for GPU %u", lib, i);
	u->n_gpus = (int)n;
	_gpu_rebase(u);
	_log(sim, "unit %d adds the %u GPUs of %s", u->id, n, lib);
}

/*
 * Private functions: a RAPL package counter (--energy-uj ID:FILE)
 *
 * The trace's part of unit ID's energy (min(trace, cap) with --cap; not
 * its --gpus) is written to FILE as a RAPL zone's energy_uj, whole
 * microjoules since the sim started, every 10 ms (TCP mode: the loop then
 * wakes that often), through a rename: the power cap's rapl knob reads
 * it as the package's energy, to split a node's cap by what each knob
 * draws (pcap_node.h).  Real counters step about every millisecond.
 */

static void _energy_uj_write(sim_t *sim, unit_t *u)
{
	char tmp[4096];
	double j = _trace_joules(sim, u, _trace_now(sim));
	FILE *f;

	snprintf(tmp, sizeof(tmp), "%s.tmp", u->energy_uj_path);
	if (!(f = fopen(tmp, "w"))) {
		_log(sim, "%s: %s", tmp, strerror(errno));
		return;
	}
	fprintf(f, "%llu\n", (unsigned long long)(j > 0 ? j * 1e6 : 0));
	if (fclose(f) || rename(tmp, u->energy_uj_path))
		_log(sim, "%s: %s", u->energy_uj_path, strerror(errno));
}

static void _energy_uj_poll(sim_t *sim)
{
	uint64_t now = _mono_ns();

	for (int i = 0; i < sim->nunits; i++) {
		unit_t *u = &sim->units[i];

		if (!u->energy_uj_path || now - u->energy_uj_ns < SIM_UJ_NS)
			continue;
		u->energy_uj_ns = now;
		_energy_uj_write(sim, u);
	}
}

static void _setup_energy_uj(sim_t *sim)
{
	const char *path;

	for (int i = 0; i < _nuj_specs; i++) {
		unit_t *u = _spec_unit(sim, "energy-uj", _uj_specs[i], &path);

		u->energy_uj_path = path;
		_energy_uj_write(sim, u);
		u->energy_uj_ns = _mono_ns();
		_log(sim, "unit %d writes its energy_uj to %s", u->id, path);
	}
}
