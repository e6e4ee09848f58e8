/*
 * conf_map.h - one reader for the map files of the suite (EnergyModbusMap,
 * EnergyBMCMap): "Key=Value ..." lines (conf_read_pairs_file), each line's
 * keys set through a key table (conf_desc.h) into an entry struct, then
 * handed to the back-end.  A map key bounded as a configuration key is
 * written SE_KEY_LIKE(...) over that key's row, so both take the same
 * bounds and checks.  Nothing here knows Slurm.
 *
 * Messages name the map and the line:
 *   /etc/slurm/modbus.map:4: Unit=300: must be between 0 and 255
 *   /etc/slurm/bmc.map:2: Color=red: unknown key (known: Nodes, Host)
 *   acct_gather.conf: EnergyBMCMap=/etc/slurm/bmc.map: No such file or directory
 *   /etc/slurm/bmc.map: no entries
 */
#ifndef SE_CONF_MAP_H
#define SE_CONF_MAP_H

#include <stdbool.h>
#include <stddef.h>

#include "conf_desc.h"

typedef struct {
	const char *conf_file;		/* "acct_gather.conf" */
	const char *conf_key;		/* "EnergyBMCMap": names a map that
					 * cannot be read */
	const se_conf_key_t *keys;	/* a line's keys, over the entry */
	size_t n_keys;
	size_t entry_size;
	bool once;			/* a key twice on a line: refused */
	/* Optional: defaults of an entry (zeroed before). */
	void (*init)(void *entry);
	/* Optional: key i was set on this line. */
	void (*given)(void *entry, size_t i);
	/* The line's keys are set: check them together, keep what arg
	 * needs (moving a string out sets its field to NULL; the reader
	 * frees the entry's strings after the call).  0 or a negative errno
	 * with its message in err. */
	int (*line)(void *arg, void *entry, const char *path, unsigned line,
		    char *err, size_t err_len);
} se_conf_map_t;

/*
 * Hostlist matching for a map line's Nodes=, supplied by the caller (the
 * plugins: Slurm's hostlist API, se_slurm_hostlist_ops in slurm_compat.h;
 * the tests: their own), so that the map readers need no Slurm.
 */
typedef struct {
	/* 1 if the expression contains node, 0 if not, -EINVAL if bad */
	int (*contains)(void *arg, const char *expr, const char *node);
	/* distinct hosts in the union of n expressions, or -EINVAL (the
	 * readers that share a meter among nodes; others may leave it NULL) */
	long (*count)(void *arg, const char *const *exprs, size_t n);
	void *arg;
} se_hostlist_ops_t;

/*
 * Read the map at path, calling m->line for each entry line with arg.
 * Returns 0, a line's negative errno (its message "MAP:LINE: ..."), -errno
 * for a map that cannot be read, or -EINVAL for a map without entries.
 */
int se_conf_map_read(const se_conf_map_t *m, const char *path, void *arg,
		     char *err, size_t err_len);

#endif
