/*
 * pcap_knob_priv.h - what pcap_knob.c shares with the knobs' own files
 * (pcap_knob_rapl.c, pcap_knob_cpufreq.c): their ops tables, and helpers
 * whose errors name the knob, the file and the value.
 */
#ifndef SE_PCAP_KNOB_PRIV_H
#define SE_PCAP_KNOB_PRIV_H

#include <dirent.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "pcap_knob.h"

extern const pcap_knob_ops_t pcap_knob_rapl_ops;
extern const pcap_knob_ops_t pcap_knob_cpufreq_ops;
extern const pcap_knob_ops_t pcap_knob_nvml_ops;
extern const pcap_knob_ops_t pcap_knob_dcmi_ops;
extern const pcap_knob_ops_t pcap_knob_redfish_ops;

/* Where cap_mw lies in [k->min_mw, k->max_mw], 0..1. */
double pcap_fraction(const pcap_knob_t *k, uint32_t cap_mw);

/* One decimal number from a sysfs-style file; 0 or a negative errno. */
int pcap_read_u64(const pcap_knob_t *k, const char *path, uint64_t *out,
		  char *err, size_t err_len);
int pcap_write_u64(const pcap_knob_t *k, const char *path, uint64_t v,
		   char *err, size_t err_len);

/* A read-back within 1 % or one watt (unit_per_w units) of what was
 * written. */
bool pcap_close_enough(uint64_t want, uint64_t got, uint64_t unit_per_w);

/* v written to path and read back within pcap_close_enough: a file the
 * kernel clamps or refuses is an error naming the knob, file and values. */
int pcap_write_checked(const pcap_knob_t *k, const char *path, uint64_t v,
		       uint64_t unit_per_w, char *err, size_t err_len);

/* The first line of password_file (a BMC's), its line end cut; an error
 * names the knob and the file, never the password. */
int pcap_read_password(const pcap_knob_t *k, const char *path, char *pw,
		       size_t len, char *err, size_t err_len);

/* k->root opened to scan its zones, or NULL with *ret the negative errno
 * and err naming the knob and the folder. */
DIR *pcap_open_root(const pcap_knob_t *k, int *ret, char *err,
		    size_t err_len);

/* Option key as a whole number in lo..hi, dflt when absent. */
int pcap_opt_u32(const pcap_knob_t *k, const char *key, uint32_t dflt,
		 uint32_t lo, uint32_t hi, uint32_t *out, char *err,
		 size_t err_len);

#endif /* SE_PCAP_KNOB_PRIV_H */
