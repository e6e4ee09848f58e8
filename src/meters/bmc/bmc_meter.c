/*
 * bmc_meter.c - the BMC behind meter_ops_t: choose the method, dispatch.
 */
#ifdef HAVE_CONFIG_H
#include "se_config.h"
#endif

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bmc_meter.h"
#include "bmc_meter_priv.h"
#include "se_time.h"

/* Open failures and method notes: a few a minute. */
#define BMC_LOG_INTERVAL_NS	(60 * SE_NS_PER_SEC)
#define BMC_LOG_BURST		3

static int _open(void *dev, uint64_t deadline_ns);
static int _read(void *dev, meter_reading_t *out, uint64_t deadline_ns,
		 char *msg, size_t msg_len);
static void _close(void *dev);

const meter_ops_t bmc_meter_ops = {
	.name = "bmc",
	.open = _open,
	.read = _read,
	.close = _close,
};

bmc_meter_t *bmc_meter_create(const bmc_conf_t *conf)
{
	bmc_meter_t *m = calloc(1, sizeof(*m));

	if (!m)
		return NULL;
	if (bmc_conf_copy(&m->own_conf, conf)) {
		free(m);
		errno = ENOMEM;
		return NULL;
	}
	m->conf = &m->own_conf;
	m->method = conf->method;
	m->rl = (se_ratelimit_t) SE_RATELIMIT_INIT(BMC_LOG_INTERVAL_NS,
						   BMC_LOG_BURST);
	return m;
}

void bmc_meter_destroy(bmc_meter_t *m)
{
	if (!m)
		return;
	_close(m);
	bmc_conf_free(&m->own_conf);
	free(m);
}

void bmc_meter_describe(const bmc_meter_t *m, char *buf, size_t len)
{
	const bmc_conf_t *c = m->conf;

	if (!c->host) {
		snprintf(buf, len, "%s in-band", bmc_method_name(m->method));
		return;
	}
	snprintf(buf, len, "%s over lan %s to %s as %s (%s)",
		 bmc_method_name(m->method),
		 c->protocol == BMC_PROTO_2_0 ? "2.0" : "1.5", c->host,
		 c->user ? c->user : "<null user>",
		 bmc_priv_name(c->privilege));
}

/* ------------------------------------------------------------ meter_ops_t */

/*
 * Open the method; with EnergyBMCMethod=auto, a BMC without DCMI
 * (bmc_dcmi_open() returns -EOPNOTSUPP) switches to sensors for good.
 */
static int _open(void *dev, uint64_t deadline_ns)
{
	bmc_meter_t *m = dev;
	int rc;

	if (m->method == BMC_METHOD_SENSORS)
		return bmc_sensors_open(m, deadline_ns);

	rc = bmc_dcmi_open(m, deadline_ns);
	if (!rc)
		m->open_told = false;	/* the next failure is a new fault */
	if (rc != -EOPNOTSUPP || m->conf->method != BMC_METHOD_AUTO)
		return rc;

	se_log(SE_LOG_INFO, "BMC %s: no DCMI power reading; EnergyBMCMethod=auto uses the Watts sensors",
	       bmc_where(m));
	m->method = BMC_METHOD_SENSORS;
	return bmc_sensors_open(m, deadline_ns);
}

static int _read(void *dev, meter_reading_t *out, uint64_t deadline_ns,
		 char *msg, size_t msg_len)
{
	bmc_meter_t *m = dev;

	if (m->method == BMC_METHOD_SENSORS)
		return bmc_sensors_read(m, out, deadline_ns, msg, msg_len);
	return bmc_dcmi_read(m, out, deadline_ns, msg, msg_len);
}

static void _close(void *dev)
{
	bmc_meter_t *m = dev;

	bmc_dcmi_close(m);
	bmc_sensors_close(m);
}
