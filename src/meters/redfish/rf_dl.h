/*
 * rf_dl.h - libcurl and json-c opened on first use, for
 * acct_gather_energy/bmc's Redfish method (see src/common/se_dynlib.h for
 * why: libcurl brings about 30 libraries, OpenSSL, Kerberos and LDAP among
 * them, that no slurmstepd should map).
 *
 * rf_dl.c defines the libcurl and json-c functions the Redfish meter
 * calls, with the libraries' own names and prototypes; each loads its
 * library on its first call.  Linked into the plugin only: the unit tests
 * link the libraries themselves.
 */
#ifndef SE_RF_DL_H
#define SE_RF_DL_H

#include <stddef.h>

/* Load both libraries now: 0, or -1 with the library's file name and the
 * loader's words in err (slurmd calls it before making the meter). */
int rf_dl_load(char *err, size_t err_len);

#endif
