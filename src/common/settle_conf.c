/*
 * settle_conf.c - the settle's keys in acct_gather.conf and
 * spank_energy_settle.so's arguments (see settle_conf.h).
 */
#ifdef HAVE_CONFIG_H
#include "se_config.h"
#endif

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "conf.h"
#include "conf_desc.h"
#include "settle_conf.h"

#define SETTLE_FILE	"plugstack.conf"

static const char *const yes_no[] = { "yes", "no", NULL };

static const se_conf_key_t energy_keys[] = {
	SE_KEY_ENUM("EnergySettle", settle_conf_t, in_plugin, yes_no),
	SE_KEY_UINT("EnergySettleMaxWait", settle_conf_t, max_wait_s, 0,
		    SETTLE_MAX_MAX_WAIT_S),
};

static const se_conf_key_t keys[] = {
	SE_KEY_UINT("max_wait", settle_conf_t, max_wait_s, 0,
		    SETTLE_MAX_MAX_WAIT_S),
};

void settle_conf_init(settle_conf_t *c)
{
	c->in_plugin = SETTLE_IN_PLUGIN_YES;
	c->max_wait_s = SETTLE_DEF_MAX_WAIT_S;
}

void settle_conf_free(settle_conf_t *c)
{
	settle_conf_init(c);
}

SE_CONF_DESC_DEFINE_NOCHECK(settle_conf_desc, settle_conf, settle_conf_t,
			    "energy_settle", SETTLE_FILE, keys);

/* The same struct and hooks (settle_conf_desc_init/free, defined above). */
SE_CONF_DESC_(settle_energy_conf_desc, settle_conf, settle_conf_t, "settle",
	      "acct_gather.conf", energy_keys, NULL);

int settle_conf_args(settle_conf_t *c, int ac, char **av, char *err,
		     size_t err_len)
{
	char key[64];

	for (int i = 0; i < ac; i++) {
		const char *eq = strchr(av[i], '=');
		size_t n = eq ? (size_t) (eq - av[i]) : 0;
		int rc;

		if (!eq || !n || n >= sizeof(key)) {
			snprintf(err, err_len,
				 "%s: spank_energy_settle.so: '%s': expected KEY=VALUE (known: max_wait=SECONDS)",
				 SETTLE_FILE, av[i]);
			return -EINVAL;
		}
		memcpy(key, av[i], n);
		key[n] = '\0';
		rc = se_conf_set(&settle_conf_desc, c, NULL, key, eq + 1, err,
				 err_len);
		if (rc == -ENOENT) {
			snprintf(err, err_len,
				 "%s: spank_energy_settle.so: %s: unknown argument (known: max_wait=SECONDS)",
				 SETTLE_FILE, av[i]);
			return -EINVAL;
		}
		if (rc)
			return rc;
	}
	return 0;
}
