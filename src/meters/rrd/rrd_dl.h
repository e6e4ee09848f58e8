/*
 * rrd_dl.h - librrd opened on first use, for acct_gather_energy/rrd (see
 * src/common/se_dynlib.h for why: librrd brings 44 more libraries).
 *
 * rrd_dl.c defines the librrd functions rrd_read.c calls, with librrd's
 * own names and prototypes; the first call loads the library: in slurmd's
 * sampler, and in a slurmstepd only when its settle reads the files.
 * Linked into acct_gather_energy/rrd only: ext_sensors/meters (slurmctld,
 * loaded once), the unit tests and the tools link librrd itself.
 */
#ifndef SE_RRD_DL_H
#define SE_RRD_DL_H

#include <stddef.h>

/* Load librrd now: 0, or -1 with the library's file name and the loader's
 * words in err (slurmd calls it before making the meter). */
int rrd_dl_load(char *err, size_t err_len);

#endif
