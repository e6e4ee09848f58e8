/*
 * bmc_dl.h - libfreeipmi and libipmimonitoring opened on first use, for
 * acct_gather_energy/bmc (see src/common/se_dynlib.h for why).
 *
 * bmc_dl.c defines the FreeIPMI functions the BMC meter calls, with the
 * libraries' own names and prototypes; each loads its library on its first
 * call.  Linked into the plugin only: unit tests and the live harness link
 * the libraries themselves.
 */
#ifndef SE_BMC_DL_H
#define SE_BMC_DL_H

#include <stddef.h>

/* Load both libraries now: 0, or -1 with the library's file name and the
 * loader's words in err (slurmd calls it before making the meter). */
int bmc_dl_load(char *err, size_t err_len);

#endif
