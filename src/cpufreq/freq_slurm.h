/*
 * freq_slurm.h - Slurm's --cpu-freq encoding <-> freq_request_t, and the
 * policy file, shared by the cpufreq plugins (Slurm glue, not core).
 *
 * Slurm (slurm.h) keeps a request in three uint32: cpu_freq_min/max are kHz
 * or CPU_FREQ_RANGE_FLAG|{LOW,MEDIUM,HIGH,HIGHM1}; cpu_freq_gov is a
 * CPU_FREQ_<GOVERNOR> bit; NO_VAL (or 0) means "not given".  --cpu-freq=X
 * sets max only (22.05) or max and the userspace governor (24.11);
 * min-max[:gov] sets all three.  A single frequency is written as
 * max + userspace and read back without the governor, on every release
 * (why: freq_slurm.c).
 */
#ifndef SE_FREQ_SLURM_H
#define SE_FREQ_SLURM_H

#include <stdint.h>

#include "freq_decide.h"

void freq_request_from_slurm(uint32_t min, uint32_t max, uint32_t gov,
			     freq_request_t *r);
void freq_request_to_slurm(const freq_request_t *r, uint32_t *min,
			   uint32_t *max, uint32_t *gov);

#endif
