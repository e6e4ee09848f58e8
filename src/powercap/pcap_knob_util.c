/*
 * pcap_knob_util.c - what the knobs' files share (pcap_knob_priv.h): their
 * options, the fraction of a range, and sysfs-style files read and written
 * with errors that name the knob, the file and the value.  Below every
 * knob's file and pcap_knob.c, calling none of them.
 */
#ifdef HAVE_CONFIG_H
#include "se_config.h"
#endif

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "pcap_knob.h"
#include "pcap_knob_priv.h"

const char *pcap_knob_opt(const pcap_knob_t *k, const char *key)
{
	for (size_t i = 0; i < k->n_opts; i++)
		if (!strcmp(k->opt_key[i], key))
			return k->opt_val[i];
	return NULL;
}

double pcap_fraction(const pcap_knob_t *k, uint32_t cap_mw)
{
	if (k->max_mw <= k->min_mw || cap_mw >= k->max_mw)
		return 1.0;
	if (cap_mw <= k->min_mw)
		return 0.0;
	return (double)(cap_mw - k->min_mw) / (k->max_mw - k->min_mw);
}

int pcap_read_u64(const pcap_knob_t *k, const char *path, uint64_t *out,
		  char *err, size_t err_len)
{
	char buf[64], *end;
	ssize_t n;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0) {
		int e = errno;

		snprintf(err, err_len, "%s: cannot read %s: %s",
			 k->ops->name, path, strerror(e));
		return -e;
	}
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0) {
		snprintf(err, err_len, "%s: %s is empty", k->ops->name, path);
		return -EIO;
	}
	buf[n] = '\0';
	errno = 0;
	*out = strtoull(buf, &end, 10);
	if (errno || end == buf || (*end && *end != '\n')) {
		buf[strcspn(buf, "\n")] = '\0';
		snprintf(err, err_len, "%s: %s holds '%s', not a number",
			 k->ops->name, path, buf);
		return -EIO;
	}
	return 0;
}

int pcap_write_u64(const pcap_knob_t *k, const char *path, uint64_t v,
		   char *err, size_t err_len)
{
	char buf[32];
	int len = snprintf(buf, sizeof(buf), "%" PRIu64 "\n", v);
	int fd = open(path, O_WRONLY | O_TRUNC | O_CLOEXEC);
	int e = 0;

	if (fd < 0)
		e = errno;
	else if (write(fd, buf, len) != len)
		e = errno ? errno : EIO;
	if (fd >= 0 && close(fd) && !e)
		e = errno;
	if (e) {
		snprintf(err, err_len, "%s: cannot write %" PRIu64 " to %s: "
			 "%s", k->ops->name, v, path, strerror(e));
		return -e;
	}
	return 0;
}

bool pcap_close_enough(uint64_t want, uint64_t got, uint64_t unit_per_w)
{
	uint64_t d = want > got ? want - got : got - want;

	return d <= unit_per_w || d * 100 <= want;
}

int pcap_write_checked(const pcap_knob_t *k, const char *path, uint64_t v,
		       uint64_t unit_per_w, char *err, size_t err_len)
{
	uint64_t back;
	int ret = pcap_write_u64(k, path, v, err, err_len);

	if (!ret)
		ret = pcap_read_u64(k, path, &back, err, err_len);
	if (ret)
		return ret;
	if (!pcap_close_enough(v, back, unit_per_w)) {
		snprintf(err, err_len, "%s: wrote %" PRIu64 " to %s, read "
			 "back %" PRIu64, k->ops->name, v, path, back);
		return -EIO;
	}
	return 0;
}

int pcap_read_password(const pcap_knob_t *k, const char *path, char *pw,
		       size_t len, char *err, size_t err_len)
{
	FILE *f = fopen(path, "re");

	if (!f) {
		int e = errno;

		snprintf(err, err_len, "%s: cannot read password_file=%s: %s",
			 k->ops->name, path, strerror(e));
		return -e;
	}
	if (!fgets(pw, (int)len, f))
		pw[0] = '\0';
	fclose(f);
	pw[strcspn(pw, "\r\n")] = '\0';
	return 0;
}

DIR *pcap_open_root(const pcap_knob_t *k, int *ret, char *err,
		    size_t err_len)
{
	DIR *d = opendir(k->root);

	if (!d) {
		int e = errno;

		snprintf(err, err_len, "%s: cannot open %s: %s", k->ops->name,
			 k->root, strerror(e));
		*ret = -e;
	}
	return d;
}

int pcap_opt_u32(const pcap_knob_t *k, const char *key, uint32_t dflt,
		 uint32_t lo, uint32_t hi, uint32_t *out, char *err,
		 size_t err_len)
{
	const char *v = pcap_knob_opt(k, key);
	char *end;
	unsigned long long x;

	if (!v) {
		*out = dflt;
		return 0;
	}
	errno = 0;
	x = strtoull(v, &end, 10);
	if (errno || *end || end == v || v[0] == '-' || x < lo || x > hi) {
		snprintf(err, err_len, "knob '%s': %s=%s is not a whole "
			 "number in %u..%u", k->spec, key, v, lo, hi);
		return -EINVAL;
	}
	*out = (uint32_t)x;
	return 0;
}
