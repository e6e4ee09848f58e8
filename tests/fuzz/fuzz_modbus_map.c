/*
 * fuzz_modbus_map - the per-node Modbus map file (EnergyModbusMap=,
 * src/meters/modbus/modbus_conf.c over conf_read_pairs_file() of
 * src/common/conf.c), then what slurmd does with it: resolve each node's
 * channel and build its meter (no I/O).
 *
 * Input: the map file.  acct_gather.conf sets EnergyModbusDevice (with
 * %n), EnergyModbusModel=sdm630 and the map.  Hostlists are comma lists of
 * names here (a '[' is refused as Slurm's parser refuses a bad
 * expression).  Invariants for nodes n1..n6:
 *  - a map that reads has entries; an error names the map file;
 *  - a resolved node has a share in (0, 1] and a positive MaxPower;
 *  - the shares of the nodes on one channel (device, unit, offset) sum to
 *    at most 1: energy is never billed twice;
 *  - a channel that resolves builds a meter (the device string parses).
 */
#include "fuzz_common.h"

#include <errno.h>
#include <math.h>
#include <strings.h>

#include "modbus_conf.h"
#include "modbus_meter.h"

#define N_NODES 6

static const char *const nodes[N_NODES] = { "n1", "n2", "n3", "n4", "n5",
					    "gpu01" };

static bool in_list(const char *expr, const char *node)
{
	size_t len = strlen(node);

	for (const char *p = expr; p; p = strchr(p, ',')) {
		if (*p == ',')
			p++;
		if (!strncmp(p, node, len) && (p[len] == ',' || !p[len]))
			return true;
	}
	return false;
}

static int hl_contains(void *arg, const char *expr, const char *node)
{
	(void) arg;
	if (strpbrk(expr, "[]") || !*expr)
		return -EINVAL;
	return in_list(expr, node);
}

/* Distinct names in the union of the lists. */
static long hl_count(void *arg, const char *const *exprs, size_t n)
{
	const char *name[256];
	size_t len[256], n_names = 0;

	(void) arg;
	for (size_t i = 0; i < n; i++) {
		if (strpbrk(exprs[i], "[]") || !*exprs[i])
			return -EINVAL;
		for (const char *p = exprs[i]; p; p = strchr(p, ',')) {
			size_t l, k;

			if (*p == ',')
				p++;
			l = strcspn(p, ",");
			for (k = 0; k < n_names; k++)
				if (len[k] == l && !strncmp(name[k], p, l))
					break;
			if (k == n_names && n_names < 256) {
				name[n_names] = p;
				len[n_names++] = l;
			}
		}
	}
	return (long) n_names;
}

typedef struct {
	char device[512];
	unsigned unit, offset;
	double share;
} channel_t;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	modbus_hostlist_ops_t hl = { hl_contains, hl_count, NULL };
	modbus_conf_t c;
	channel_t ch[N_NODES];
	size_t n_ch = 0;
	char err[1024];
	const char *path = fuzz_file(data, size);
	int rc;

	fuzz_quiet();
	modbus_conf_init(&c);
	if (se_conf_set(&modbus_conf_desc, &c, NULL, "EnergyModbusDevice",
			"tcp://meter-%n:502", err, sizeof(err)) ||
	    se_conf_set(&modbus_conf_desc, &c, NULL, "EnergyModbusModel",
			"sdm630", err, sizeof(err)) ||
	    se_conf_set(&modbus_conf_desc, &c, NULL, "EnergyModbusMap", path,
			err, sizeof(err)) ||
	    modbus_conf_check(&c, MODBUS_CONF_FILE, err, sizeof(err))) {
		fprintf(stderr, "setup: %s\n", err);
		abort();
	}

	err[0] = '\0';
	rc = modbus_conf_read_map(&c, err, sizeof(err));
	if (rc) {
		FUZZ_CHECK(rc < 0 && strstr(err, path) == err,
			   "map refused (%d) with '%s'", rc, err);
		modbus_conf_free(&c);
		return 0;
	}
	FUZZ_CHECK(c.map_len > 0, "a map without entries");

	for (int i = 0; i < N_NODES; i++) {
		modbus_target_t t;
		modbus_meter_config_t mc;
		modbus_meter_t *m = NULL;
		size_t k;

		err[0] = '\0';
		if (modbus_conf_resolve(&c, nodes[i], &hl, &t, err,
					sizeof(err))) {
			FUZZ_CHECK(err[0], "%s: refused without a message",
				   nodes[i]);
			continue;
		}
		if (getenv("FUZZ_VERBOSE"))
			fprintf(stderr, "%s: line %u device '%s' unit %u offset %u share %g\n",
				nodes[i], t.line, t.none ? "none" : t.device,
				t.unit, t.offset, t.share);
		if (t.none)
			continue;
		FUZZ_CHECK(t.share > 0 && t.share <= 1, "%s: share %g",
			   nodes[i], t.share);
		FUZZ_CHECK(t.max_power_w > 0 && isfinite(t.max_power_w),
			   "%s: MaxPower %g", nodes[i], t.max_power_w);
		if (modbus_conf_meter_config(&c, &t, &mc, err, sizeof(err)))
			continue;
		FUZZ_CHECK(!modbus_meter_create(&mc, &m, err, sizeof(err)),
			   "%s: a resolved channel (%s) builds no meter: %s",
			   nodes[i], t.device, err);
		modbus_meter_destroy(m);

		for (k = 0; k < n_ch; k++)
			if (!strcmp(ch[k].device, t.device) &&
			    ch[k].unit == t.unit && ch[k].offset == t.offset)
				break;
		if (k == n_ch) {
			snprintf(ch[k].device, sizeof(ch[k].device), "%s",
				 t.device);
			ch[k].unit = t.unit;
			ch[k].offset = t.offset;
			ch[k].share = 0;
			n_ch++;
		}
		ch[k].share += t.share;
		FUZZ_CHECK(ch[k].share <= 1 + 1e-9,
			   "channel %s unit %u offset %u billed %.9f of itself",
			   t.device, t.unit, t.offset, ch[k].share);
	}
	modbus_conf_free(&c);
	return 0;
}
