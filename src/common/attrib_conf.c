/*
 * attrib_conf.c - the attribution keys of acct_gather.conf, shared by every
 * energy plugin of the suite (the glue registers them beside the back-end's
 * own; see acct_gather_energy_attribution.5).
 */
#ifdef HAVE_CONFIG_H
#include "se_config.h"
#endif

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "attrib.h"
#include "conf.h"

#define IDLE_W_MAX	1e6

static const char *const mode_names[] = { "node", "share", NULL };
static const char *const idle_names[] = { "share", "none", NULL };

static int _set_idle_w(void *conf, const conf_where_t *w, const char *value,
		       char *err, size_t err_len)
{
	attrib_conf_t *c = conf;
	double watts;
	int rc;

	/* "learn" (or empty) says: no configured value */
	if (!value[0] || !strcasecmp(value, "learn")) {
		c->idle_set = false;
		c->idle_mw = 0;
		return 0;
	}
	if ((rc = conf_double(w, value, 0, IDLE_W_MAX, &watts, err, err_len)))
		return rc;
	c->idle_set = true;
	c->idle_mw = (uint64_t) (watts * 1000 + 0.5);
	return 0;
}

static int _set_root(void *conf, const conf_where_t *w, const char *value,
		     char *err, size_t err_len)
{
	attrib_conf_t *c = conf;
	char probe[4096], *s;
	int rc;

	if (value[0] && strcmp(value, "auto") && value[0] != '/') {
		snprintf(err, err_len, "%s: %s=%s: must be an absolute path or auto",
			 w->file, w->key, value);
		return -EINVAL;
	}
	/* bad % escapes are refused now, at load time */
	if ((rc = conf_expand(w, value, "node", probe, sizeof(probe), err,
			      err_len)))
		return rc;
	if (!(s = strdup(value)))
		return -ENOMEM;
	free(c->cgroup_root);
	c->cgroup_root = (!value[0] || !strcmp(value, "auto")) ? NULL : s;
	if (!c->cgroup_root)
		free(s);
	return 0;
}

static void _show_idle_w(const void *conf, char *buf, size_t len)
{
	const attrib_conf_t *c = conf;

	if (c->idle_set)
		snprintf(buf, len, "%g", (double) c->idle_mw / 1000);
	else
		snprintf(buf, len, "learn");
}

SE_CONF_SHOW(_show_root, attrib_conf_t, "%s",
	     c->cgroup_root ? c->cgroup_root : "auto")

static const se_conf_key_t keys[] = {
	SE_KEY_ENUM("EnergyAttribution", attrib_conf_t, mode, mode_names),
	SE_KEY_ENUM("EnergyIdle", attrib_conf_t, idle, idle_names),
	SE_KEY_FN("EnergyIdleWatts", _set_idle_w, _show_idle_w),
	SE_KEY_FN("EnergyCgroupRoot", _set_root, _show_root),
};

void attrib_conf_init(attrib_conf_t *c)
{
	memset(c, 0, sizeof(*c));
	c->mode = ATTRIB_MODE_NODE;
	c->idle = ATTRIB_IDLE_SHARE;
}

void attrib_conf_free(attrib_conf_t *c)
{
	free(c->cgroup_root);
	memset(c, 0, sizeof(*c));
}

SE_CONF_DESC_DEFINE_NOCHECK(attrib_conf_desc, attrib_conf, attrib_conf_t,
			    "attribution", "acct_gather.conf", keys);
