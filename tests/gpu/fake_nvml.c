/*
 * fake_nvml.c - a test double of libnvidia-ml.so.1 (no GPU needed).
 *
 * Same ABI as the NVML entry points the suite and Slurm's gpu/nvml use
 * (declared in src/meters/nvml/se_nvml.h after NVIDIA's public API).
 * Driven by a state file named by $FAKE_NVML_STATE, read at nvmlInit:
 *
 *   # comment
 *   epoch 1763800000.25        wall-clock seconds that are trace time 0
 *   trace /path/gpu.trace      optional power trace (src/common/power_trace.h)
 *   log /path/nvml.log         optional: every clock set/reset is appended
 *   clocks /path/nvml.clocks   optional: current application and locked
 *                              clocks, kept across processes (default:
 *                              <state>.clocks)
 *   mem_clocks 5001 877 405    supported memory clocks, MHz
 *   gfx_clocks 1530 1000 135   supported graphics clocks (any memory clock)
 *   locked_clocks gpu mem      which clocks the GPUs can lock (default
 *                              both, an Ampere or newer GPU; "gpu": a Volta,
 *                              "none": older); the locked-clock calls of
 *                              the others return NVML_ERROR_NOT_SUPPORTED
 *   app_clocks no              application clocks NOT_SUPPORTED (as on an
 *                              H100; default yes)
 *   limits /path/nvml.limits   optional: each GPU's power limit set, kept
 *                              across processes (default: <state>.limits)
 *   gpu bus=0000:3b:00.0 uuid=GPU-1 name=Tesla_V100 minor=0 cpus=0-3 \
 *       power=250 col=gpu0 links=-1,2,0,0
 *
 * Power limits (the cluster power cap's nvml knob, issue #45): a gpu line
 * may say plimit=W (the default limit, 300), plimit_min=W (100) and
 * plimit_max=W (the default); nvmlDeviceSetPowerManagementLimit refuses a
 * value outside [min, max] with INVALID_ARGUMENT as NVML does, logs
 *   PLIMIT index=I bus=B mw=M              (PLIMIT-REFUSED when refused)
 * and keeps "index mw" per GPU in the limits file.
 *
 * A GPU that obeys its limit ("follow_limits yes"): its power is
 * min(what it plays, its limit) and its energy counter the exact integral
 * of that (power_trace_joules_capped).  The limits' history is the cap
 * log ("cap_log PATH", default <state>.caplog), shared by every process,
 * one line per change, "INDEX TRACE_TIME CAP_W" (se-modbus-sim
 * --cap-log's format, the GPU's index as its unit: selab.capped computes
 * the truth from it): nvmlInit writes a GPU's first line (its limit then,
 * which holds from before the epoch) when it has none, and
 * nvmlDeviceSetPowerManagementLimit one at every change.  A limit counts
 * from the trace time it was set (a real GPU settles within ~100 ms).
 *
 * One "gpu" line per device, in NVML index order (PCI bus id order on real
 * hardware).  Power (W) follows trace column col= when a trace is given,
 * else the constant power=; the energy counter is the exact integral of
 * that power from the epoch (0 before it), in mJ, as
 * nvmlDeviceGetTotalEnergyConsumption reports it.  links= lists, per other
 * GPU index, the NvLink count (-1 for itself), like gres.conf Links=.
 * A "fail X" line makes entry point X (nvmlDeviceGetTotalEnergyConsumption,
 * nvmlDeviceGetPowerUsage, nvmlDeviceGetMinorNumber, a locked-clock
 * call, nvmlDeviceSetPowerManagementLimit or
 * nvmlDeviceGetPowerManagementLimitConstraints) return
 * NVML_ERROR_UNKNOWN.
 *
 * Clocks: the log gets one line per call that sets or resets one,
 *   SET index=I bus=B mem=M gfx=G          nvmlDeviceSetApplicationsClocks
 *   RESET index=I bus=B                    nvmlDeviceResetApplicationsClocks
 *   LOCK-MEM index=I bus=B min=M max=M     nvmlDeviceSetMemoryLockedClocks
 *   LOCK-GPU index=I bus=B min=M max=M     nvmlDeviceSetGpuLockedClocks
 *   UNLOCK-MEM index=I bus=B               nvmlDeviceResetMemoryLockedClocks
 *   UNLOCK-GPU index=I bus=B               nvmlDeviceResetGpuLockedClocks
 * (a refused call: its word followed by -REFUSED and the reason), and the
 * clocks file holds "index mem gfx gpu_min gpu_max mem_min mem_max" per
 * GPU (application clocks, then the locks; 0 0: not locked).  This
 * library always exports the four locked-clock calls, as NVML 11 and
 * later do; a library older than them lacks the symbols, which the unit
 * tests stand for with a table whose entries are NULL
 * (tests/unit/test_gpu_nvml.c).
 *
 * Faults at run time (tests of issue #14): a control file, "control PATH"
 * (default <state>.control), re-read when it changes (checked at every
 * call, at most every 100 ms).  Each line applies to the nodes named first
 * ("*" for all; the node is the process's hostname, as in the test
 * cluster's UTS namespaces) and to GPU index IDX (NVML order, "*" for all):
 *
 *   NODE init ERROR           nvmlInit fails with NVML_ERROR_ERROR
 *                             (DRIVER_NOT_LOADED, UNKNOWN, ...): the
 *                             driver is not up yet when slurmd starts
 *   NODE error IDX ERROR      energy and power reads fail with it
 *                             (UNKNOWN, TIMEOUT, NO_DATA, NOT_SUPPORTED...)
 *   NODE lost IDX             the GPU fell off the bus: every call on it,
 *                             its handle included, gives GPU_IS_LOST
 *   NODE hang IDX SECONDS     an energy read blocks that long (a hung
 *                             driver call)
 *   NODE reset IDX WALL       the counter restarted from 0 at wall-clock
 *                             WALL (a driver reload): energy since WALL
 *   NODE spike IDX MJ         the next counter read (one, per process) is
 *                             MJ too high (a garbled read)
 *   NODE power IDX MW         the power reading is MW (4294967295: a
 *                             negative value cast, or any absurd one)
 *   NODE col IDX COLUMN WALL  from wall-clock WALL on, the GPU plays trace
 *                             column COLUMN (a GPU-heavy job landing on
 *                             whichever GPU Slurm gave it); its counter
 *                             stays continuous: the integral of the old
 *                             column up to WALL, then of the new one.
 *                             Several switches of one GPU apply in WALL
 *                             order.  Unlike a fault, a switch is
 *                             history: keep its line in the file (removing
 *                             it rewrites the counter's past), and write
 *                             WALL ahead of now, so that no reader has
 *                             already counted past it
 *
 * Time is the kernel's own wall clock (a raw syscall): a GPU's counter
 * does not follow a step of the node's clock (tests/clockstep).
 *
 * One file, though over 800 lines: it is the one library (one ABI, one
 * device table read from its config) that stands in for libnvidia-ml.so.1;
 * each entry point is short.
 */
#ifdef HAVE_CONFIG_H
#include "se_config.h"
#endif

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "power_trace.h"
#include "se_nvml.h"

#define FAKE_MAX_GPUS	16
#define FAKE_MAX_CLOCKS	16
#define FAKE_MAX_CPUS	1024
#define FAKE_MAX_FAILS	8
#define FAKE_MAX_FAULTS	32
#define CONTROL_RECHECK_S 0.1

/* A run-time fault of the control file (see the top). */
typedef enum {
	FAULT_INIT = 1, FAULT_ERROR, FAULT_LOST, FAULT_HANG, FAULT_RESET,
	FAULT_SPIKE, FAULT_POWER, FAULT_COL,
} fault_kind_t;

typedef struct {
	fault_kind_t kind;
	int gpu;			/* NVML index, -1: all */
	nvmlReturn_t rc;		/* init, error */
	double value;			/* seconds, wall, mJ, mW */
	int used;			/* spike: already given */
	int col;			/* col: the trace column from value */
} fault_t;

struct nvmlDevice_st {
	unsigned int index;
	char bus[NVML_DEVICE_PCI_BUS_ID_BUFFER_SIZE];
	char uuid[NVML_DEVICE_UUID_BUFFER_SIZE];
	char name[NVML_DEVICE_NAME_BUFFER_SIZE];
	unsigned int minor;
	unsigned char cpus[FAKE_MAX_CPUS];
	double power_w;
	unsigned plimit_mw, plimit_min_mw, plimit_max_mw;
	int col;			/* trace column, -1 = constant */
	char col_name[32];		/* col= (resolved after the load) */
	int links[FAKE_MAX_GPUS];	/* -1 self, else NvLink count */
	int nlinks;
};

typedef struct {
	int inited;
	double epoch;
	power_trace_t *trace;
	char log_path[PATH_MAX];
	char clocks_path[PATH_MAX];
	char limits_path[PATH_MAX];
	char cap_log_path[PATH_MAX];
	int follow_limits;		/* power = min(play, limit) */
	unsigned mem_clocks[FAKE_MAX_CLOCKS], n_mem;
	unsigned gfx_clocks[FAKE_MAX_CLOCKS], n_gfx;
	int no_lock_gpu, no_lock_mem;	/* locked_clocks: NOT_SUPPORTED */
	int no_app_clocks;		/* app_clocks no: NOT_SUPPORTED */
	struct nvmlDevice_st gpus[FAKE_MAX_GPUS];
	unsigned int count;
	char fails[FAKE_MAX_FAILS][64];
	int n_fails;
	char control_path[PATH_MAX];
	struct timespec control_mtime;
	off_t control_size;
	double control_checked;
	fault_t faults[FAKE_MAX_FAULTS];
	int n_faults;
} fake_state_t;

static fake_state_t st;
static pthread_mutex_t st_lock = PTHREAD_MUTEX_INITIALIZER;

/* Exported entry points (prototypes for -Wmissing-prototypes). */
nvmlReturn_t nvmlInit_v2(void);
nvmlReturn_t nvmlInit(void);
nvmlReturn_t nvmlShutdown(void);
const char *nvmlErrorString(nvmlReturn_t rc);
nvmlReturn_t nvmlSystemGetDriverVersion(char *v, unsigned int len);
nvmlReturn_t nvmlSystemGetNVMLVersion(char *v, unsigned int len);
nvmlReturn_t nvmlDeviceGetCount_v2(unsigned int *count);
nvmlReturn_t nvmlDeviceGetCount(unsigned int *count);
nvmlReturn_t nvmlDeviceGetHandleByIndex_v2(unsigned int i, nvmlDevice_t *d);
nvmlReturn_t nvmlDeviceGetHandleByIndex(unsigned int i, nvmlDevice_t *d);
nvmlReturn_t nvmlDeviceGetPciInfo_v3(nvmlDevice_t d, nvmlPciInfo_t *p);
nvmlReturn_t nvmlDeviceGetPciInfo_v2(nvmlDevice_t d, nvmlPciInfo_t *p);
nvmlReturn_t nvmlDeviceGetPciInfo(nvmlDevice_t d, nvmlPciInfo_t *p);
nvmlReturn_t nvmlDeviceGetUUID(nvmlDevice_t d, char *uuid, unsigned int len);
nvmlReturn_t nvmlDeviceGetName(nvmlDevice_t d, char *name, unsigned int len);
nvmlReturn_t nvmlDeviceGetMinorNumber(nvmlDevice_t d, unsigned int *minor);
nvmlReturn_t nvmlDeviceGetCpuAffinity(nvmlDevice_t d, unsigned int n,
				      unsigned long *set);
nvmlReturn_t nvmlDeviceGetTotalEnergyConsumption(nvmlDevice_t d,
						 unsigned long long *mj);
nvmlReturn_t nvmlDeviceGetPowerUsage(nvmlDevice_t d, unsigned int *mw);
nvmlReturn_t nvmlDeviceGetSupportedMemoryClocks(nvmlDevice_t d,
						unsigned int *count,
						unsigned int *mhz);
nvmlReturn_t nvmlDeviceGetSupportedGraphicsClocks(nvmlDevice_t d,
						  unsigned int mem,
						  unsigned int *count,
						  unsigned int *mhz);
nvmlReturn_t nvmlDeviceSetApplicationsClocks(nvmlDevice_t d, unsigned int mem,
					     unsigned int gfx);
nvmlReturn_t nvmlDeviceResetApplicationsClocks(nvmlDevice_t d);
nvmlReturn_t nvmlDeviceGetApplicationsClock(nvmlDevice_t d,
					    nvmlClockType_t type,
					    unsigned int *mhz);
nvmlReturn_t nvmlDeviceSetGpuLockedClocks(nvmlDevice_t d,
					  unsigned int minGpuClockMHz,
					  unsigned int maxGpuClockMHz);
nvmlReturn_t nvmlDeviceResetGpuLockedClocks(nvmlDevice_t d);
nvmlReturn_t nvmlDeviceSetMemoryLockedClocks(nvmlDevice_t d,
					     unsigned int minMemClockMHz,
					     unsigned int maxMemClockMHz);
nvmlReturn_t nvmlDeviceResetMemoryLockedClocks(nvmlDevice_t d);
nvmlReturn_t nvmlDeviceGetPowerManagementLimitConstraints(nvmlDevice_t d,
							 unsigned int *min_mw,
							 unsigned int *max_mw);
nvmlReturn_t nvmlDeviceGetPowerManagementDefaultLimit(nvmlDevice_t d,
						      unsigned int *mw);
nvmlReturn_t nvmlDeviceGetPowerManagementLimit(nvmlDevice_t d,
					       unsigned int *mw);
nvmlReturn_t nvmlDeviceSetPowerManagementLimit(nvmlDevice_t d,
					       unsigned int mw);
nvmlReturn_t nvmlDeviceGetNvLinkState(nvmlDevice_t d, unsigned int link,
				      nvmlEnableState_t *active);
nvmlReturn_t nvmlDeviceGetNvLinkRemotePciInfo_v2(nvmlDevice_t d,
						 unsigned int link,
						 nvmlPciInfo_t *p);
nvmlReturn_t nvmlDeviceGetNvLinkRemotePciInfo(nvmlDevice_t d,
					      unsigned int link,
					      nvmlPciInfo_t *p);

/* ------------------------------------------------------------- helpers */

static double _wall_now(void)
{
	struct timespec ts;

	/* the kernel's clock, past any LD_PRELOAD (see the top) */
	syscall(SYS_clock_gettime, CLOCK_REALTIME, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* ------------------------------------------------------- fault control */

static const struct {
	const char *name;
	nvmlReturn_t rc;
} error_names[] = {
	{ "UNINITIALIZED", NVML_ERROR_UNINITIALIZED },
	{ "NOT_SUPPORTED", NVML_ERROR_NOT_SUPPORTED },
	{ "NO_PERMISSION", NVML_ERROR_NO_PERMISSION },
	{ "NOT_FOUND", NVML_ERROR_NOT_FOUND },
	{ "DRIVER_NOT_LOADED", NVML_ERROR_DRIVER_NOT_LOADED },
	{ "TIMEOUT", NVML_ERROR_TIMEOUT },
	{ "GPU_IS_LOST", NVML_ERROR_GPU_IS_LOST },
	{ "NO_DATA", NVML_ERROR_NO_DATA },
	{ "UNKNOWN", NVML_ERROR_UNKNOWN },
};

static nvmlReturn_t _error_named(const char *name)
{
	for (size_t i = 0; i < sizeof(error_names) / sizeof(error_names[0]);
	     i++)
		if (!strcmp(error_names[i].name, name))
			return error_names[i].rc;
	return NVML_ERROR_UNKNOWN;
}

/* Does a line's node field name this process's node? */
static int _for_this_node(const char *field)
{
	char host[256] = "";

	if (!strcmp(field, "*"))
		return 1;
	gethostname(host, sizeof(host) - 1);
	return !strcmp(field, host);
}

/*
 * "NODE col IDX COLUMN WALL": the column by name (a column the trace lacks,
 * or no trace: the line is ignored) and WALL as trace time.
 */
static int _parse_col(const char *line, fault_t *ft)
{
	char name[64], wall[64];

	if (sscanf(line, "%*s %*s %*s %63s %63s", name, wall) != 2 ||
	    !st.trace)
		return -1;
	ft->kind = FAULT_COL;
	ft->col = power_trace_column(st.trace, name);
	ft->value = strtod(wall, NULL) - st.epoch;
	return ft->col < 0 ? -1 : 0;
}

static void _control_parse(FILE *f)
{
	char line[256], node[128], kind[32], gpu[32], arg[64];

	st.n_faults = 0;
	while (fgets(line, sizeof(line), f) && st.n_faults < FAKE_MAX_FAULTS) {
		fault_t *ft = &st.faults[st.n_faults];
		int n;

		arg[0] = gpu[0] = '\0';
		n = sscanf(line, "%127s %31s %31s %63s", node, kind, gpu, arg);
		if (n < 3 || node[0] == '#' || !_for_this_node(node))
			continue;
		memset(ft, 0, sizeof(*ft));
		if (!strcmp(kind, "init")) {
			ft->kind = FAULT_INIT;
			ft->gpu = -1;
			ft->rc = _error_named(gpu);
			st.n_faults++;
			continue;
		}
		ft->gpu = strcmp(gpu, "*") ? atoi(gpu) : -1;
		ft->value = strtod(arg, NULL);
		if (!strcmp(kind, "col")) {
			if (_parse_col(line, ft) < 0)
				continue;
		} else if (!strcmp(kind, "error") && n == 4) {
			ft->kind = FAULT_ERROR;
			ft->rc = _error_named(arg);
		} else if (!strcmp(kind, "lost")) {
			ft->kind = FAULT_LOST;
		} else if (!strcmp(kind, "hang") && n == 4) {
			ft->kind = FAULT_HANG;
		} else if (!strcmp(kind, "reset") && n == 4) {
			ft->kind = FAULT_RESET;
		} else if (!strcmp(kind, "spike") && n == 4) {
			ft->kind = FAULT_SPIKE;
		} else if (!strcmp(kind, "power") && n == 4) {
			ft->kind = FAULT_POWER;
		} else {
			continue;
		}
		st.n_faults++;
	}
}

/* Re-read the control file if it changed (under st_lock). */
static void _control_check(void)
{
	double now = _wall_now();
	struct stat sb;
	FILE *f;

	if (!st.control_path[0] || now - st.control_checked < CONTROL_RECHECK_S)
		return;
	st.control_checked = now;
	if (stat(st.control_path, &sb) < 0) {
		st.n_faults = 0;
		st.control_size = -1;
		return;
	}
	if (sb.st_size == st.control_size &&
	    sb.st_mtim.tv_sec == st.control_mtime.tv_sec &&
	    sb.st_mtim.tv_nsec == st.control_mtime.tv_nsec)
		return;
	st.control_size = sb.st_size;
	st.control_mtime = sb.st_mtim;
	if ((f = fopen(st.control_path, "r"))) {
		_control_parse(f);
		fclose(f);
	}
}

/* The fault of a kind on GPU index (or of init, idx -1), or NULL. */
static const fault_t *_fault(fault_kind_t kind, int idx)
{
	_control_check();
	for (int i = 0; i < st.n_faults; i++)
		if (st.faults[i].kind == kind &&
		    (st.faults[i].gpu < 0 || st.faults[i].gpu == idx))
			return &st.faults[i];
	return NULL;
}

/* The error a read on GPU idx gives now (NVML_SUCCESS: none). */
static nvmlReturn_t _read_fault(int idx)
{
	const fault_t *f;

	if (_fault(FAULT_LOST, idx))
		return NVML_ERROR_GPU_IS_LOST;
	if ((f = _fault(FAULT_ERROR, idx)))
		return f->rc;
	return NVML_SUCCESS;
}

static int _failing(const char *fn)
{
	for (int i = 0; i < st.n_fails; i++)
		if (!strcmp(st.fails[i], fn))
			return 1;
	return 0;
}

static void _parse_cpus(const char *s, unsigned char *cpus)
{
	while (*s) {
		char *end;
		long a = strtol(s, &end, 10), b = a;

		if (end == s)
			return;
		if (*end == '-')
			b = strtol(end + 1, &end, 10);
		for (long c = a; c <= b && c >= 0 && c < FAKE_MAX_CPUS; c++)
			cpus[c] = 1;
		s = (*end == ',') ? end + 1 : end;
		if (*end && *end != ',')
			return;
	}
}

static void _parse_gpu(char *rest)
{
	struct nvmlDevice_st *g;
	char *tok, *save = NULL;

	if (st.count >= FAKE_MAX_GPUS)
		return;
	g = &st.gpus[st.count];
	memset(g, 0, sizeof(*g));
	g->index = st.count;
	g->minor = st.count;
	g->power_w = 100.0;
	g->col = -1;
	snprintf(g->name, sizeof(g->name), "Fake_GPU");
	for (tok = strtok_r(rest, " \t\n", &save); tok;
	     tok = strtok_r(NULL, " \t\n", &save)) {
		char *v = strchr(tok, '=');

		if (!v)
			continue;
		*v++ = '\0';
		if (!strcmp(tok, "bus"))
			snprintf(g->bus, sizeof(g->bus), "%s", v);
		else if (!strcmp(tok, "uuid"))
			snprintf(g->uuid, sizeof(g->uuid), "%s", v);
		else if (!strcmp(tok, "name"))
			snprintf(g->name, sizeof(g->name), "%s", v);
		else if (!strcmp(tok, "minor"))
			g->minor = strtoul(v, NULL, 10);
		else if (!strcmp(tok, "cpus"))
			_parse_cpus(v, g->cpus);
		else if (!strcmp(tok, "power"))
			g->power_w = strtod(v, NULL);
		else if (!strcmp(tok, "plimit"))
			g->plimit_mw = strtoul(v, NULL, 10) * 1000;
		else if (!strcmp(tok, "plimit_min"))
			g->plimit_min_mw = strtoul(v, NULL, 10) * 1000;
		else if (!strcmp(tok, "plimit_max"))
			g->plimit_max_mw = strtoul(v, NULL, 10) * 1000;
		else if (!strcmp(tok, "col"))
			snprintf(g->col_name, sizeof(g->col_name), "%s", v);
		else if (!strcmp(tok, "links")) {
			char *l, *s2 = NULL;

			for (l = strtok_r(v, ",", &s2);
			     l && g->nlinks < FAKE_MAX_GPUS;
			     l = strtok_r(NULL, ",", &s2))
				g->links[g->nlinks++] = atoi(l);
		}
	}
	st.count++;
}

static void _parse_clocks(char *rest, unsigned *arr, unsigned *n)
{
	char *tok, *save = NULL;

	*n = 0;
	for (tok = strtok_r(rest, " \t\n", &save); tok && *n < FAKE_MAX_CLOCKS;
	     tok = strtok_r(NULL, " \t\n", &save))
		arr[(*n)++] = strtoul(tok, NULL, 10);
}

static int _load(const char *path)
{
	FILE *f = fopen(path, "r");
	char line[1024];

	if (!f)
		return -errno;
	snprintf(st.clocks_path, sizeof(st.clocks_path), "%s.clocks", path);
	snprintf(st.limits_path, sizeof(st.limits_path), "%s.limits", path);
	snprintf(st.cap_log_path, sizeof(st.cap_log_path), "%s.caplog", path);
	snprintf(st.control_path, sizeof(st.control_path), "%s.control", path);
	st.control_size = -1;
	while (fgets(line, sizeof(line), f)) {
		char *key = line, *rest;

		key += strspn(key, " \t");
		if (*key == '#' || *key == '\n' || !*key)
			continue;
		rest = key + strcspn(key, " \t\n");
		if (*rest)
			*rest++ = '\0';
		rest[strcspn(rest, "\n")] = '\0';
		if (!strcmp(key, "epoch")) {
			st.epoch = strtod(rest, NULL);
		} else if (!strcmp(key, "trace")) {
			char err[256];

			if (power_trace_load(rest, &st.trace, err,
					     sizeof(err)) < 0)
				fprintf(stderr, "fake_nvml: %s\n", err);
		} else if (!strcmp(key, "log")) {
			snprintf(st.log_path, sizeof(st.log_path), "%s", rest);
		} else if (!strcmp(key, "control")) {
			snprintf(st.control_path, sizeof(st.control_path),
				 "%s", rest);
		} else if (!strcmp(key, "limits")) {
			snprintf(st.limits_path, sizeof(st.limits_path), "%s",
				 rest);
		} else if (!strcmp(key, "cap_log")) {
			snprintf(st.cap_log_path, sizeof(st.cap_log_path),
				 "%s", rest);
		} else if (!strcmp(key, "follow_limits")) {
			st.follow_limits = !strncmp(rest, "yes", 3);
		} else if (!strcmp(key, "clocks")) {
			snprintf(st.clocks_path, sizeof(st.clocks_path), "%s",
				 rest);
		} else if (!strcmp(key, "mem_clocks")) {
			_parse_clocks(rest, st.mem_clocks, &st.n_mem);
		} else if (!strcmp(key, "gfx_clocks")) {
			_parse_clocks(rest, st.gfx_clocks, &st.n_gfx);
		} else if (!strcmp(key, "locked_clocks")) {
			st.no_lock_gpu = !strstr(rest, "gpu");
			st.no_lock_mem = !strstr(rest, "mem");
		} else if (!strcmp(key, "app_clocks")) {
			st.no_app_clocks = !strncmp(rest, "no", 2);
		} else if (!strcmp(key, "gpu")) {
			_parse_gpu(rest);
		} else if (!strcmp(key, "fail") && st.n_fails < FAKE_MAX_FAILS) {
			snprintf(st.fails[st.n_fails++], sizeof(st.fails[0]),
				 "%s", rest);
		}
	}
	fclose(f);
	for (unsigned i = 0; i < st.count; i++) {
		struct nvmlDevice_st *g = &st.gpus[i];

		if (!g->plimit_mw)
			g->plimit_mw = 300000;
		if (!g->plimit_min_mw)
			g->plimit_min_mw = 100000;
		if (!g->plimit_max_mw)
			g->plimit_max_mw = g->plimit_mw;
	}
	/* the trace line may come after the gpu lines */
	for (unsigned i = 0; i < st.count; i++)
		if (st.trace && st.gpus[i].col_name[0])
			st.gpus[i].col = power_trace_column(st.trace,
							    st.gpus[i].col_name);
	return 0;
}

static void _log(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void _log(const char *fmt, ...)
{
	FILE *f;
	va_list ap;

	if (!st.log_path[0] || !(f = fopen(st.log_path, "a")))
		return;
	fprintf(f, "%.3f pid=%d ", _wall_now(), (int) getpid());
	va_start(ap, fmt);
	vfprintf(f, fmt, ap);
	va_end(ap);
	fputc('\n', f);
	fclose(f);
}

/* A GPU's clocks, MHz: application clocks, and locks (0 0: none). */
typedef struct {
	unsigned mem, gfx;
	unsigned gpu_min, gpu_max, mem_min, mem_max;
} fake_clocks_t;

/* The clocks of every GPU, from the clocks file (defaults: the highest
 * supported application clocks, nothing locked). */
static void _clocks_load(fake_clocks_t *c)
{
	FILE *f = fopen(st.clocks_path, "r");
	char line[256];

	for (unsigned i = 0; i < st.count; i++) {
		memset(&c[i], 0, sizeof(c[i]));
		c[i].mem = st.n_mem ? st.mem_clocks[0] : 0;
		c[i].gfx = st.n_gfx ? st.gfx_clocks[0] : 0;
	}
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		fake_clocks_t r = { 0 };
		unsigned i;

		if (sscanf(line, "%u %u %u %u %u %u %u", &i, &r.mem, &r.gfx,
			   &r.gpu_min, &r.gpu_max, &r.mem_min,
			   &r.mem_max) >= 3 && i < st.count)
			c[i] = r;
	}
	fclose(f);
}

static void _clocks_save(const fake_clocks_t *c)
{
	char tmp[PATH_MAX + 8];
	FILE *f;

	snprintf(tmp, sizeof(tmp), "%s.%d", st.clocks_path, (int) getpid());
	if (!(f = fopen(tmp, "w")))
		return;
	for (unsigned i = 0; i < st.count; i++)
		fprintf(f, "%u %u %u %u %u %u %u\n", i, c[i].mem, c[i].gfx,
			c[i].gpu_min, c[i].gpu_max, c[i].mem_min, c[i].mem_max);
	fclose(f);
	rename(tmp, st.clocks_path);
}

static int _valid(nvmlDevice_t d)
{
	return st.inited && d >= &st.gpus[0] && d < &st.gpus[st.count];
}

/* What a GPU plays from trace time `from` on: a trace column, or its
 * constant power (col -1). */
typedef struct {
	double from;
	int col;
} play_t;

/*
 * A GPU's schedule (under st_lock): its state-file column from -infinity,
 * then its col switches in time order (a stable insertion sort: of two
 * switches at one instant, the later line wins).  Copied out, so that the
 * integral runs without the lock, as the other reads do.
 */
static int _schedule(nvmlDevice_t d, play_t *out, int max)
{
	int n = 1;

	_control_check();
	out[0].from = -INFINITY;
	out[0].col = d->col;
	for (int i = 0; i < st.n_faults && n < max; i++) {
		const fault_t *f = &st.faults[i];
		int j;

		if (f->kind != FAULT_COL ||
		    (f->gpu >= 0 && f->gpu != (int) d->index))
			continue;
		for (j = n++; j > 1 && out[j - 1].from > f->value; j--)
			out[j] = out[j - 1];
		out[j].from = f->value;
		out[j].col = f->col;
	}
	return n;
}

static double _play_joules(nvmlDevice_t d, int col, double t0, double t1)
{
	if (col >= 0)
		return power_trace_joules(st.trace, col, t0, t1);
	return d->power_w * (t1 - t0);
}

/* A GPU's limit from trace time `from` on (follow_limits). */
typedef struct {
	double from;
	double w;
} cap_t;

static int _caps(nvmlDevice_t d, cap_t **out);
static void _cap_log_start(void);

/* Energy over [a, b] of column col under a cap (INFINITY: none). */
static double _piece_joules(nvmlDevice_t d, int col, double a, double b,
			    double cap_w)
{
	if (isinf(cap_w))
		return _play_joules(d, col, a, b);
	if (col >= 0)
		return power_trace_joules_capped(st.trace, col, a, b, cap_w);
	return fmin(d->power_w, cap_w) * (b - a);
}

/* Energy over [t0, t1] of what the schedule played under the limits in
 * force: the exact integral of each piece over its part of the window. */
static double _schedule_joules(nvmlDevice_t d, const play_t *p, int n,
			       double t0, double t1)
{
	cap_t *caps;
	int n_caps = _caps(d, &caps);
	double j = 0;

	for (int i = 0; i < n; i++) {
		double a = fmax(t0, p[i].from);
		double b = (i + 1 < n) ? fmin(t1, p[i + 1].from) : t1;

		for (int k = 0; k < n_caps && b > a; k++) {
			double ca = fmax(a, caps[k].from);
			double cb = k + 1 < n_caps ? fmin(b, caps[k + 1].from)
						   : b;

			if (cb > ca)
				j += _piece_joules(d, p[i].col, ca, cb,
						   caps[k].w);
		}
	}
	free(caps);
	return j;
}

/* The column a schedule plays at trace time t. */
static int _schedule_col(const play_t *p, int n, double t)
{
	int col = p[0].col;

	for (int i = 1; i < n && p[i].from <= t; i++)
		col = p[i].col;
	return col;
}

static double _watts(nvmlDevice_t d, int col, double t)
{
	if (col >= 0)
		return power_trace_watts(st.trace, col, t);
	return d->power_w;
}

static void _fill_pci(nvmlDevice_t d, nvmlPciInfo_t *p)
{
	unsigned dom = 0, bus = 0, dev = 0, fn = 0;

	memset(p, 0, sizeof(*p));
	sscanf(d->bus, "%x:%x:%x.%x", &dom, &bus, &dev, &fn);
	p->domain = dom;
	p->bus = bus;
	p->device = dev;
	p->pciDeviceId = 0x1db610de;
	snprintf(p->busId, sizeof(p->busId), "%s", d->bus);
	snprintf(p->busIdLegacy, sizeof(p->busIdLegacy), "%04x:%02x:%02x.%x",
		 dom, bus, dev, fn);
}

/* ------------------------------------------------------- entry points */

nvmlReturn_t nvmlInit_v2(void)
{
	const char *path = getenv("FAKE_NVML_STATE");
	nvmlReturn_t rc = NVML_SUCCESS;

	const fault_t *f;

	pthread_mutex_lock(&st_lock);
	if (st.inited++ == 0) {
		if (!path || _load(path) < 0) {
			st.inited = 0;
			rc = NVML_ERROR_UNKNOWN;
		} else if ((f = _fault(FAULT_INIT, -1))) {
			/* the driver is not there: nothing initialised */
			rc = f->rc;
			power_trace_free(st.trace);
			memset(&st, 0, sizeof(st));
		} else if (st.follow_limits) {
			_cap_log_start();
		}
	}
	pthread_mutex_unlock(&st_lock);
	return rc;
}

nvmlReturn_t nvmlInit(void)
{
	return nvmlInit_v2();
}

nvmlReturn_t nvmlShutdown(void)
{
	pthread_mutex_lock(&st_lock);
	if (!st.inited) {
		pthread_mutex_unlock(&st_lock);
		return NVML_ERROR_UNINITIALIZED;
	}
	if (--st.inited == 0) {
		power_trace_free(st.trace);
		memset(&st, 0, sizeof(st));
	}
	pthread_mutex_unlock(&st_lock);
	return NVML_SUCCESS;
}

const char *nvmlErrorString(nvmlReturn_t rc)
{
	switch (rc) {
	case NVML_SUCCESS:
		return "Success";
	case NVML_ERROR_UNINITIALIZED:
		return "Uninitialized";
	case NVML_ERROR_INVALID_ARGUMENT:
		return "Invalid Argument";
	case NVML_ERROR_NOT_SUPPORTED:
		return "Not Supported";
	case NVML_ERROR_INSUFFICIENT_SIZE:
		return "Insufficient Size";
	case NVML_ERROR_DRIVER_NOT_LOADED:
		return "Driver Not Loaded";
	case NVML_ERROR_TIMEOUT:
		return "Timeout";
	case NVML_ERROR_FUNCTION_NOT_FOUND:
		return "Function Not Found";
	case NVML_ERROR_GPU_IS_LOST:
		return "GPU is lost";
	case NVML_ERROR_NO_DATA:
		return "No Data";
	default:
		return "Unknown Error";
	}
}

nvmlReturn_t nvmlSystemGetDriverVersion(char *v, unsigned int len)
{
	snprintf(v, len, "fake-535.0");
	return NVML_SUCCESS;
}

nvmlReturn_t nvmlSystemGetNVMLVersion(char *v, unsigned int len)
{
	snprintf(v, len, "12.fake");
	return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetCount_v2(unsigned int *count)
{
	if (!st.inited)
		return NVML_ERROR_UNINITIALIZED;
	if (!count)
		return NVML_ERROR_INVALID_ARGUMENT;
	*count = st.count;
	return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetCount(unsigned int *count)
{
	return nvmlDeviceGetCount_v2(count);
}

nvmlReturn_t nvmlDeviceGetHandleByIndex_v2(unsigned int i, nvmlDevice_t *d)
{
	if (!st.inited)
		return NVML_ERROR_UNINITIALIZED;
	if (i >= st.count || !d)
		return NVML_ERROR_INVALID_ARGUMENT;
	pthread_mutex_lock(&st_lock);
	if (_fault(FAULT_LOST, (int) i)) {
		pthread_mutex_unlock(&st_lock);
		return NVML_ERROR_GPU_IS_LOST;
	}
	pthread_mutex_unlock(&st_lock);
	*d = &st.gpus[i];
	return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetHandleByIndex(unsigned int i, nvmlDevice_t *d)
{
	return nvmlDeviceGetHandleByIndex_v2(i, d);
}

nvmlReturn_t nvmlDeviceGetPciInfo_v3(nvmlDevice_t d, nvmlPciInfo_t *p)
{
	if (!_valid(d) || !p)
		return NVML_ERROR_INVALID_ARGUMENT;
	_fill_pci(d, p);
	return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetPciInfo_v2(nvmlDevice_t d, nvmlPciInfo_t *p)
{
	return nvmlDeviceGetPciInfo_v3(d, p);
}

nvmlReturn_t nvmlDeviceGetPciInfo(nvmlDevice_t d, nvmlPciInfo_t *p)
{
	return nvmlDeviceGetPciInfo_v3(d, p);
}

nvmlReturn_t nvmlDeviceGetUUID(nvmlDevice_t d, char *uuid, unsigned int len)
{
	if (!_valid(d) || !uuid)
		return NVML_ERROR_INVALID_ARGUMENT;
	if (strlen(d->uuid) >= len)
		return NVML_ERROR_INSUFFICIENT_SIZE;
	strcpy(uuid, d->uuid);
	return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetName(nvmlDevice_t d, char *name, unsigned int len)
{
	if (!_valid(d) || !name)
		return NVML_ERROR_INVALID_ARGUMENT;
	if (strlen(d->name) >= len)
		return NVML_ERROR_INSUFFICIENT_SIZE;
	strcpy(name, d->name);
	return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetMinorNumber(nvmlDevice_t d, unsigned int *minor)
{
	if (!_valid(d) || !minor)
		return NVML_ERROR_INVALID_ARGUMENT;
	if (_failing(__func__))
		return NVML_ERROR_UNKNOWN;
	*minor = d->minor;
	return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetCpuAffinity(nvmlDevice_t d, unsigned int n,
				      unsigned long *set)
{
	const unsigned bits = sizeof(unsigned long) * 8;

	if (!_valid(d) || !set)
		return NVML_ERROR_INVALID_ARGUMENT;
	memset(set, 0, n * sizeof(unsigned long));
	for (unsigned c = 0; c < FAKE_MAX_CPUS && c < n * bits; c++)
		if (d->cpus[c])
			set[c / bits] |= 1UL << (c % bits);
	return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetTotalEnergyConsumption(nvmlDevice_t d,
						 unsigned long long *mj)
{
	double t, t0 = 0, j, extra_mj = 0, hang_s = 0;
	play_t play[FAKE_MAX_FAULTS + 1];
	const fault_t *f;
	nvmlReturn_t rc;
	int n_play;

	if (!_valid(d) || !mj)
		return NVML_ERROR_INVALID_ARGUMENT;
	if (_failing(__func__))
		return NVML_ERROR_UNKNOWN;
	pthread_mutex_lock(&st_lock);
	rc = _read_fault((int) d->index);
	n_play = _schedule(d, play, FAKE_MAX_FAULTS + 1);
	if ((f = _fault(FAULT_HANG, (int) d->index)))
		hang_s = f->value;
	if ((f = _fault(FAULT_RESET, (int) d->index)))
		t0 = f->value - st.epoch;	/* counting from 0 since */
	if ((f = _fault(FAULT_SPIKE, (int) d->index)) && !f->used) {
		extra_mj = f->value;
		((fault_t *) f)->used = 1;	/* one garbled read */
	}
	pthread_mutex_unlock(&st_lock);
	if (hang_s > 0)
		usleep((useconds_t) (hang_s * 1e6));
	if (rc != NVML_SUCCESS)
		return rc;
	t = _wall_now() - st.epoch;
	if (t0 < 0)
		t0 = 0;
	j = (t <= t0) ? 0 : _schedule_joules(d, play, n_play, t0, t);
	*mj = (unsigned long long) llround(j * 1000.0 + extra_mj);
	return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetPowerUsage(nvmlDevice_t d, unsigned int *mw)
{
	play_t play[FAKE_MAX_FAULTS + 1];
	const fault_t *f;
	nvmlReturn_t rc;
	double forced = -1, t;
	int n_play;

	if (!_valid(d) || !mw)
		return NVML_ERROR_INVALID_ARGUMENT;
	if (_failing(__func__))
		return NVML_ERROR_UNKNOWN;
	pthread_mutex_lock(&st_lock);
	rc = _read_fault((int) d->index);
	if ((f = _fault(FAULT_POWER, (int) d->index)))
		forced = f->value;
	n_play = _schedule(d, play, FAKE_MAX_FAULTS + 1);
	pthread_mutex_unlock(&st_lock);
	if (rc != NVML_SUCCESS)
		return rc;
	t = _wall_now() - st.epoch;
	if (forced >= 0) {
		*mw = (unsigned int) forced;
	} else {
		cap_t *caps;
		int k = _caps(d, &caps);
		double w = _watts(d, _schedule_col(play, n_play, t), t);

		while (k > 1 && caps[k - 1].from > t)
			k--;
		*mw = (unsigned int) lround(fmin(w, caps[k - 1].w) * 1000);
		free(caps);
	}
	return NVML_SUCCESS;
}

static nvmlReturn_t _list(const unsigned *arr, unsigned n,
			  unsigned int *count, unsigned int *mhz)
{
	if (!count)
		return NVML_ERROR_INVALID_ARGUMENT;
	if (!n)
		return NVML_ERROR_NOT_SUPPORTED;
	if (*count < n || !mhz) {
		*count = n;
		return NVML_ERROR_INSUFFICIENT_SIZE;
	}
	memcpy(mhz, arr, n * sizeof(*arr));
	*count = n;
	return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetSupportedMemoryClocks(nvmlDevice_t d,
						unsigned int *count,
						unsigned int *mhz)
{
	if (!_valid(d))
		return NVML_ERROR_INVALID_ARGUMENT;
	return _list(st.mem_clocks, st.n_mem, count, mhz);
}

nvmlReturn_t nvmlDeviceGetSupportedGraphicsClocks(nvmlDevice_t d,
						  unsigned int mem,
						  unsigned int *count,
						  unsigned int *mhz)
{
	if (!_valid(d))
		return NVML_ERROR_INVALID_ARGUMENT;
	return _list(st.gfx_clocks, st.n_gfx, count, mhz);
}

static int _in(const unsigned *arr, unsigned n, unsigned v)
{
	for (unsigned i = 0; i < n; i++)
		if (arr[i] == v)
			return 1;
	return 0;
}

nvmlReturn_t nvmlDeviceSetApplicationsClocks(nvmlDevice_t d, unsigned int mem,
					     unsigned int gfx)
{
	fake_clocks_t c[FAKE_MAX_GPUS];

	if (!_valid(d))
		return NVML_ERROR_INVALID_ARGUMENT;
	if (st.no_app_clocks) {
		_log("SET-REFUSED index=%u bus=%s mem=%u gfx=%u not supported",
		     d->index, d->bus, mem, gfx);
		return NVML_ERROR_NOT_SUPPORTED;
	}
	if (!_in(st.mem_clocks, st.n_mem, mem) ||
	    !_in(st.gfx_clocks, st.n_gfx, gfx)) {
		_log("SET-REFUSED index=%u bus=%s mem=%u gfx=%u", d->index,
		     d->bus, mem, gfx);
		return NVML_ERROR_INVALID_ARGUMENT;
	}
	_clocks_load(c);
	c[d->index].mem = mem;
	c[d->index].gfx = gfx;
	_clocks_save(c);
	_log("SET index=%u bus=%s mem=%u gfx=%u", d->index, d->bus, mem, gfx);
	return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceResetApplicationsClocks(nvmlDevice_t d)
{
	fake_clocks_t c[FAKE_MAX_GPUS];

	if (!_valid(d))
		return NVML_ERROR_INVALID_ARGUMENT;
	if (st.no_app_clocks) {
		_log("RESET-REFUSED index=%u bus=%s not supported", d->index,
		     d->bus);
		return NVML_ERROR_NOT_SUPPORTED;
	}
	_clocks_load(c);
	c[d->index].mem = st.n_mem ? st.mem_clocks[0] : 0;
	c[d->index].gfx = st.n_gfx ? st.gfx_clocks[0] : 0;
	_clocks_save(c);
	_log("RESET index=%u bus=%s", d->index, d->bus);
	return NVML_SUCCESS;
}

/*
 * Locked clocks: kept as [min, max] per GPU in the clocks file; refused
 * with NOT_SUPPORTED by a GPU that cannot lock that clock (locked_clocks),
 * INVALID_ARGUMENT for min > max.  what: "GPU" or "MEM".
 */
static nvmlReturn_t _lock(const char *fn, nvmlDevice_t d, const char *what,
			  int unsupported, unsigned int lo, unsigned int hi,
			  int reset)
{
	fake_clocks_t c[FAKE_MAX_GPUS];
	unsigned *min, *max;

	if (!_valid(d))
		return NVML_ERROR_INVALID_ARGUMENT;
	if (_failing(fn)) {
		_log("%sLOCK-%s-REFUSED index=%u bus=%s unknown error",
		     reset ? "UN" : "", what, d->index, d->bus);
		return NVML_ERROR_UNKNOWN;
	}
	if (unsupported) {
		_log("%sLOCK-%s-REFUSED index=%u bus=%s not supported",
		     reset ? "UN" : "", what, d->index, d->bus);
		return NVML_ERROR_NOT_SUPPORTED;
	}
	if (!reset && lo > hi) {
		_log("LOCK-%s-REFUSED index=%u bus=%s min=%u max=%u", what,
		     d->index, d->bus, lo, hi);
		return NVML_ERROR_INVALID_ARGUMENT;
	}
	_clocks_load(c);
	min = (what[0] == 'G') ? &c[d->index].gpu_min : &c[d->index].mem_min;
	max = (what[0] == 'G') ? &c[d->index].gpu_max : &c[d->index].mem_max;
	*min = reset ? 0 : lo;
	*max = reset ? 0 : hi;
	_clocks_save(c);
	if (reset)
		_log("UNLOCK-%s index=%u bus=%s", what, d->index, d->bus);
	else
		_log("LOCK-%s index=%u bus=%s min=%u max=%u", what, d->index,
		     d->bus, lo, hi);
	return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceSetGpuLockedClocks(nvmlDevice_t d,
					  unsigned int minGpuClockMHz,
					  unsigned int maxGpuClockMHz)
{
	return _lock(__func__, d, "GPU", st.no_lock_gpu, minGpuClockMHz,
		     maxGpuClockMHz, 0);
}

nvmlReturn_t nvmlDeviceResetGpuLockedClocks(nvmlDevice_t d)
{
	return _lock(__func__, d, "GPU", st.no_lock_gpu, 0, 0, 1);
}

nvmlReturn_t nvmlDeviceSetMemoryLockedClocks(nvmlDevice_t d,
					     unsigned int minMemClockMHz,
					     unsigned int maxMemClockMHz)
{
	return _lock(__func__, d, "MEM", st.no_lock_mem, minMemClockMHz,
		     maxMemClockMHz, 0);
}

nvmlReturn_t nvmlDeviceResetMemoryLockedClocks(nvmlDevice_t d)
{
	return _lock(__func__, d, "MEM", st.no_lock_mem, 0, 0, 1);
}

nvmlReturn_t nvmlDeviceGetApplicationsClock(nvmlDevice_t d,
					    nvmlClockType_t type,
					    unsigned int *mhz)
{
	fake_clocks_t c[FAKE_MAX_GPUS];

	if (!_valid(d) || !mhz)
		return NVML_ERROR_INVALID_ARGUMENT;
	if (st.no_app_clocks)
		return NVML_ERROR_NOT_SUPPORTED;
	_clocks_load(c);
	if (type == NVML_CLOCK_MEM)
		*mhz = c[d->index].mem;
	else if (type == NVML_CLOCK_GRAPHICS || type == NVML_CLOCK_SM)
		*mhz = c[d->index].gfx;
	else
		return NVML_ERROR_NOT_SUPPORTED;
	return NVML_SUCCESS;
}

/*
 * NvLinks: link l of a device is active when it is among the first
 * (sum of its links= counts) links, and leads to the GPU whose count it
 * falls in.
 */
static int _link_peer(nvmlDevice_t d, unsigned int link)
{
	unsigned n = 0;

	for (int j = 0; j < d->nlinks; j++) {
		if (d->links[j] <= 0)
			continue;
		n += d->links[j];
		if (link < n)
			return j;
	}
	return -1;
}

nvmlReturn_t nvmlDeviceGetNvLinkState(nvmlDevice_t d, unsigned int link,
				      nvmlEnableState_t *active)
{
	if (!_valid(d) || !active || link >= NVML_NVLINK_MAX_LINKS)
		return NVML_ERROR_INVALID_ARGUMENT;
	*active = (_link_peer(d, link) >= 0) ? NVML_FEATURE_ENABLED :
					       NVML_FEATURE_DISABLED;
	return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetNvLinkRemotePciInfo_v2(nvmlDevice_t d,
						 unsigned int link,
						 nvmlPciInfo_t *p)
{
	int peer;

	if (!_valid(d) || !p || link >= NVML_NVLINK_MAX_LINKS)
		return NVML_ERROR_INVALID_ARGUMENT;
	peer = _link_peer(d, link);
	if (peer < 0 || (unsigned) peer >= st.count)
		return NVML_ERROR_NOT_SUPPORTED;
	_fill_pci(&st.gpus[peer], p);
	return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetNvLinkRemotePciInfo(nvmlDevice_t d,
					      unsigned int link,
					      nvmlPciInfo_t *p)
{
	return nvmlDeviceGetNvLinkRemotePciInfo_v2(d, link, p);
}

/* ------------------------------------------------------- power limits */

/* Every GPU's limit, mW: the limits file's, else its default. */
static void _limits_load(unsigned *mw)
{
	FILE *f = fopen(st.limits_path, "r");
	unsigned i, v;

	for (i = 0; i < st.count; i++)
		mw[i] = st.gpus[i].plimit_mw;
	if (!f)
		return;
	while (fscanf(f, "%u %u", &i, &v) == 2)
		if (i < st.count)
			mw[i] = v;
	fclose(f);
}

static void _limits_save(const unsigned *mw)
{
	char tmp[PATH_MAX + 8];
	FILE *f;

	snprintf(tmp, sizeof(tmp), "%s.%d", st.limits_path, (int) getpid());
	if (!(f = fopen(tmp, "w")))
		return;
	for (unsigned i = 0; i < st.count; i++)
		fprintf(f, "%u %u\n", i, mw[i]);
	fclose(f);
	rename(tmp, st.limits_path);
}

/*
 * A GPU's limit history from the cap log, in its order (the lines are
 * appended as the limits are set): out[0] from -infinity, at the GPU's
 * first line's limit.  Without follow_limits one cap, INFINITY: none.
 * Returns the count; *out is malloc'd (the caller frees it).
 */
static int _caps(nvmlDevice_t d, cap_t **out)
{
	int n = 1, room = 16;
	cap_t *v = malloc(room * sizeof(*v));
	unsigned idx, lim[FAKE_MAX_GPUS];
	double t, w;
	FILE *f;

	if (!v)
		abort();
	v[0].from = -INFINITY;
	v[0].w = INFINITY;
	*out = v;
	if (!st.follow_limits)
		return 1;
	_limits_load(lim);		/* no line (yet): the limit now */
	v[0].w = lim[d->index] / 1000.0;
	if (!(f = fopen(st.cap_log_path, "r")))
		return 1;
	for (bool first = true; fscanf(f, "%u %lf %lf", &idx, &t, &w) == 3;) {
		if (idx != d->index)
			continue;
		if (first) {
			v[0].w = w;
			first = false;
			continue;
		}
		if (n == room && !(v = realloc(v, (room *= 2) * sizeof(*v))))
			abort();
		v[n].from = t;
		v[n++].w = w;
	}
	fclose(f);
	*out = v;
	return n;
}

static void _cap_log(unsigned index, unsigned mw)
{
	FILE *f = fopen(st.cap_log_path, "a");

	if (!f)
		return;
	/* one write(2) at fclose, O_APPEND: whole lines among processes */
	fprintf(f, "%u %.6f %.3f\n", index, _wall_now() - st.epoch,
		mw / 1000.0);
	fclose(f);
}

/* nvmlInit with follow_limits: a first line for every GPU that has none
 * (two processes starting at once may both write it: the same limit). */
static void _cap_log_start(void)
{
	unsigned idx, lim[FAKE_MAX_GPUS];
	bool seen[FAKE_MAX_GPUS] = { false };
	double t, w;
	FILE *f = fopen(st.cap_log_path, "r");

	if (f) {
		while (fscanf(f, "%u %lf %lf", &idx, &t, &w) == 3)
			if (idx < FAKE_MAX_GPUS)
				seen[idx] = true;
		fclose(f);
	}
	_limits_load(lim);
	for (unsigned i = 0; i < st.count; i++)
		if (!seen[i])
			_cap_log(i, lim[i]);
}

nvmlReturn_t nvmlDeviceGetPowerManagementLimitConstraints(nvmlDevice_t d,
							 unsigned int *min_mw,
							 unsigned int *max_mw)
{
	if (!_valid(d) || !min_mw || !max_mw)
		return NVML_ERROR_INVALID_ARGUMENT;
	if (_failing(__func__))
		return NVML_ERROR_UNKNOWN;
	*min_mw = d->plimit_min_mw;
	*max_mw = d->plimit_max_mw;
	return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetPowerManagementDefaultLimit(nvmlDevice_t d,
						      unsigned int *mw)
{
	if (!_valid(d) || !mw)
		return NVML_ERROR_INVALID_ARGUMENT;
	*mw = d->plimit_mw;
	return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetPowerManagementLimit(nvmlDevice_t d,
					       unsigned int *mw)
{
	unsigned lim[FAKE_MAX_GPUS];

	if (!_valid(d) || !mw)
		return NVML_ERROR_INVALID_ARGUMENT;
	_limits_load(lim);
	*mw = lim[d->index];
	return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceSetPowerManagementLimit(nvmlDevice_t d,
					       unsigned int mw)
{
	unsigned lim[FAKE_MAX_GPUS];

	if (!_valid(d))
		return NVML_ERROR_INVALID_ARGUMENT;
	if (_failing(__func__)) {
		_log("PLIMIT-REFUSED index=%u bus=%s mw=%u failing", d->index,
		     d->bus, mw);
		return NVML_ERROR_UNKNOWN;
	}
	if (mw < d->plimit_min_mw || mw > d->plimit_max_mw) {
		_log("PLIMIT-REFUSED index=%u bus=%s mw=%u out of %u..%u",
		     d->index, d->bus, mw, d->plimit_min_mw,
		     d->plimit_max_mw);
		return NVML_ERROR_INVALID_ARGUMENT;
	}
	_limits_load(lim);
	if (st.follow_limits && lim[d->index] != mw)
		_cap_log(d->index, mw);
	lim[d->index] = mw;
	_limits_save(lim);
	_log("PLIMIT index=%u bus=%s mw=%u", d->index, d->bus, mw);
	return NVML_SUCCESS;
}
