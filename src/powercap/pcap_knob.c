/*
 * pcap_knob.c - the knobs' public API: the spec "name[:key=value...]", the
 * table of knobs (each knob's file is below this one; the helpers they
 * share are in pcap_knob_util.c, below them), the split of a node's cap.
 */
#ifdef HAVE_CONFIG_H
#include "se_config.h"
#endif

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pcap_knob.h"
#include "pcap_knob_priv.h"

/* Every knob's name, those of this build or not: a configuration naming
 * one this build lacks fails clearly instead of leaving a node uncapped
 * that the admin believes capped. */
static const char *const _all_knobs[] = {
	"rapl", "cpufreq", "nvml", "dcmi", "redfish",
};

static const pcap_knob_ops_t *const _knobs[] = {
	&pcap_knob_rapl_ops,
	&pcap_knob_cpufreq_ops,
	&pcap_knob_nvml_ops,
#ifdef PCAP_HAVE_DCMI
	&pcap_knob_dcmi_ops,		/* with libfreeipmi (BUILD_BMC) */
#endif
#ifdef PCAP_HAVE_REDFISH
	&pcap_knob_redfish_ops,		/* libcurl, json-c (BUILD_REDFISH) */
#endif
};

#define N_KNOBS (sizeof(_knobs) / sizeof(_knobs[0]))

/* ---------------------------------------------------- private functions */

static const pcap_knob_ops_t *_find(const char *name)
{
	for (size_t i = 0; i < N_KNOBS; i++)
		if (!strcmp(_knobs[i]->name, name))
			return _knobs[i];
	return NULL;
}

static bool _known_key(const char *keys, const char *key)
{
	size_t n = strlen(key);

	for (const char *p = keys; (p = strstr(p, key)); p += n)
		if ((p == keys || p[-1] == ' ') && (p[n] == ' ' || !p[n]))
			return true;
	return false;
}

static int _unknown(const char *name, char *err, size_t err_len)
{
	char built[128] = "";

	for (size_t i = 0; i < N_KNOBS; i++)
		snprintf(built + strlen(built), sizeof(built) - strlen(built),
			 "%s%s", i ? ", " : "", _knobs[i]->name);
	for (size_t i = 0; i < sizeof(_all_knobs) / sizeof(_all_knobs[0]);
	     i++)
		if (!strcmp(_all_knobs[i], name)) {
			snprintf(err, err_len, "knob '%s' is not available in "
				 "this build (built: %s)", name, built);
			return -ENOTSUP;
		}
	snprintf(err, err_len, "unknown knob '%s' (known: rapl, cpufreq, "
		 "nvml, dcmi, redfish)", name);
	return -EINVAL;
}

/* "name:k=v:k=v" into k; 0 or -EINVAL with err naming the spec. */
static int _parse_spec(pcap_knob_t *k, char *err, size_t err_len)
{
	char *save = NULL, *tok, *copy = strdup(k->spec);
	int rv = 0;

	if (!copy)
		return -ENOMEM;
	tok = strtok_r(copy, ":", &save);
	if (!tok || !(k->ops = _find(tok))) {
		rv = _unknown(tok ? tok : "", err, err_len);
		goto out;
	}
	while ((tok = strtok_r(NULL, ":", &save))) {
		char *eq = strchr(tok, '=');

		if (!eq || eq == tok || !eq[1]) {
			snprintf(err, err_len, "knob '%s': option '%s' is not "
				 "key=value", k->spec, tok);
			rv = -EINVAL;
			goto out;
		}
		*eq = '\0';
		if (!_known_key(k->ops->keys, tok)) {
			snprintf(err, err_len, "knob '%s': unknown option "
				 "'%s' (known: %s)", k->spec, tok,
				 k->ops->keys);
			rv = -EINVAL;
			goto out;
		}
		if (pcap_knob_opt(k, tok)) {
			snprintf(err, err_len, "knob '%s': option '%s' given "
				 "twice", k->spec, tok);
			rv = -EINVAL;
			goto out;
		}
		if (k->n_opts == PCAP_KNOB_MAX_OPTS) {
			snprintf(err, err_len, "knob '%s': more than %d "
				 "options", k->spec, PCAP_KNOB_MAX_OPTS);
			rv = -EINVAL;
			goto out;
		}
		k->opt_key[k->n_opts] = strdup(tok);
		k->opt_val[k->n_opts++] = strdup(eq + 1);
	}
out:
	free(copy);
	return rv;
}

/* ----------------------------------------------------- public functions */

int pcap_knob_check_spec(const char *spec, char *err, size_t err_len)
{
	pcap_knob_t k = { .spec = (char *)spec };
	int ret = _parse_spec(&k, err, err_len);

	for (size_t i = 0; i < k.n_opts; i++) {
		free(k.opt_key[i]);
		free(k.opt_val[i]);
	}
	return ret;
}

pcap_knob_t *pcap_knob_open(const char *spec, char *err, size_t err_len)
{
	pcap_knob_t *k = calloc(1, sizeof(*k));

	if (!k || !(k->spec = strdup(spec))) {
		snprintf(err, err_len, "knob '%s': out of memory", spec);
		free(k);
		return NULL;
	}
	if (_parse_spec(k, err, err_len) || k->ops->open(k, err, err_len)) {
		pcap_knob_close(k);
		return NULL;
	}
	return k;
}

void pcap_knob_close(pcap_knob_t *k)
{
	if (!k)
		return;
	if (k->ops && k->ops->close)
		k->ops->close(k);
	for (size_t i = 0; i < k->n_opts; i++) {
		free(k->opt_key[i]);
		free(k->opt_val[i]);
	}
	for (size_t i = 0; i < k->n_zones; i++)
		free(k->zone[i].path);
	free(k->root);
	free(k->spec);
	free(k);
}

int pcap_knob_apply(pcap_knob_t *k, uint32_t cap_mw, char *err,
		    size_t err_len)
{
	if (cap_mw < k->min_mw)
		cap_mw = k->min_mw;
	if (cap_mw > k->max_mw)
		cap_mw = k->max_mw;
	return k->ops->apply(k, cap_mw, err, err_len);
}

int pcap_knob_read(pcap_knob_t *k, uint32_t *cap_mw, char *err,
		   size_t err_len)
{
	return k->ops->read(k, cap_mw, err, err_len);
}

int pcap_knob_restore(pcap_knob_t *k, char *err, size_t err_len)
{
	if (!k->ops->restore)
		return k->ops->apply(k, k->max_mw, err, err_len);
	return k->ops->restore(k, err, err_len);
}

void pcap_split_drawn(size_t n, uint32_t node_floor_mw, uint32_t node_max_mw,
		      uint32_t node_cap_mw, const uint32_t *kmin_mw,
		      const uint32_t *kmax_mw, const uint32_t *draw_mw,
		      const uint32_t *last_mw, uint32_t margin_mw,
		      uint32_t *out_mw)
{
	uint64_t freed = 0, room = 0, back = 0;
	bool donor[64] = { false };

	for (size_t i = 0; i < n && i < 64; i++) {
		uint32_t s = pcap_split(node_floor_mw, node_max_mw, node_cap_mw,
					kmin_mw[i], kmax_mw[i]);
		uint32_t limit = last_mw[i] && last_mw[i] < s ? last_mw[i] : s;
		uint64_t want = (uint64_t)draw_mw[i] + 2 * (uint64_t)margin_mw;

		if (want < kmin_mw[i])
			want = kmin_mw[i];
		out_mw[i] = s;
		/* not using its limit, and what it would keep is below s */
		if ((uint64_t)draw_mw[i] + margin_mw >= limit || want >= s)
			continue;
		donor[i] = true;
		freed += s - want;
		out_mw[i] = (uint32_t)want;
	}
	for (size_t i = 0; i < n && i < 64; i++)
		if (!donor[i])
			room += kmax_mw[i] - out_mw[i];
	if (!freed)
		return;
	/* the takers, in proportion to their room; the rest goes back */
	for (size_t i = 0; i < n && i < 64; i++) {
		uint64_t give;

		if (donor[i] || !room)
			continue;
		give = freed >= room ? kmax_mw[i] - out_mw[i] :
		       freed * (kmax_mw[i] - out_mw[i]) / room;
		out_mw[i] += (uint32_t)give;
		back += give;
	}
	back = freed - back;	/* what the takers could not take */
	for (size_t i = 0; i < n && i < 64 && back; i++) {
		uint32_t s;
		uint64_t add;

		if (!donor[i])
			continue;
		s = pcap_split(node_floor_mw, node_max_mw, node_cap_mw,
			       kmin_mw[i], kmax_mw[i]);
		add = back * (s - out_mw[i]) / freed;
		out_mw[i] += (uint32_t)add;
	}
}

bool pcap_knob_has_energy(const pcap_knob_t *k)
{
	return k->ops->energy != NULL;
}

int pcap_knob_energy(pcap_knob_t *k, uint64_t *mj, char *err,
		     size_t err_len)
{
	if (!k->ops->energy) {
		snprintf(err, err_len, "%s: no energy counter", k->ops->name);
		return -ENOENT;
	}
	return k->ops->energy(k, mj, err, err_len);
}

uint32_t pcap_split(uint32_t node_floor_mw, uint32_t node_max_mw,
		    uint32_t node_cap_mw, uint32_t kmin_mw, uint32_t kmax_mw)
{
	double f;

	if (node_max_mw <= node_floor_mw || node_cap_mw >= node_max_mw)
		return kmax_mw;
	if (node_cap_mw <= node_floor_mw)
		return kmin_mw;
	f = (double)(node_cap_mw - node_floor_mw) /
	    (node_max_mw - node_floor_mw);
	return kmin_mw + (uint32_t)(f * (kmax_mw - kmin_mw));
}
