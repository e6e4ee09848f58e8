/*
 * modbus_dl.h - libmodbus opened on first use, for acct_gather_energy/modbus
 * (see src/common/se_dynlib.h for why).
 *
 * modbus_dl.c defines the libmodbus functions modbus_meter.c calls, with
 * libmodbus's own names and prototypes (<modbus.h>); each loads the library
 * on its first call.  Linked into the plugin only: unit tests, the
 * simulator and the tools link libmodbus itself.
 */
#ifndef SE_MODBUS_DL_H
#define SE_MODBUS_DL_H

#include <stddef.h>

/* Load libmodbus now: 0, or -1 with the library's file name and the
 * loader's words in err (slurmd calls it before making the meter, so a
 * missing library stops slurmd at start with that message). */
int modbus_dl_load(char *err, size_t err_len);

#endif
