/*
 * snmp_dl.h - net-snmp opened on first use, for acct_gather_energy/snmp
 * (see src/common/se_dynlib.h for why: libnetsnmp brings OpenSSL's
 * libcrypto, and no slurmstepd should map it).
 *
 * snmp_dl.c defines the net-snmp functions the transport (snmp_net.c)
 * calls, with the library's own names and prototypes; the library is
 * loaded by snmp_dl_load(), which slurmd calls before making the meter.
 * Linked into the plugin only: the unit tests and tools link libnetsnmp.
 */
#ifndef SE_SNMP_DL_H
#define SE_SNMP_DL_H

#include <stddef.h>

/* Load libnetsnmp now: 0, or -1 with the file name and the loader's
 * words in err. */
int snmp_dl_load(char *err, size_t err_len);

#endif
