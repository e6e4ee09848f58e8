/*
 * bmc_meter_sensors.c - the sum of SDR Watts sensors, by libipmimonitoring.
 *
 * libipmimonitoring opens a session per call (0.4-1 ms on loopback), so
 * open() only prepares a context; the first read lists every sensor and
 * chooses the ones to sum, later reads ask for those record ids only.
 *
 * Default choice ("the node's system entity"): libipmimonitoring does not
 * report entities, so they are read from the SDR cache file it has just
 * written (IPMI 2.0 §43.1 full/compact sensor records, entity ids of
 * §43.14): the Watts sensors of power supplies (0x0A) if there are any,
 * else those of the system board (0x07), power unit (0x13), power
 * distribution board (0x15) or system chassis (0x17).  A processor or
 * memory Watts sensor measures part of the same power and is left out.
 * Without a readable cache every Watts sensor is summed (logged).
 */
#ifdef HAVE_CONFIG_H
#include "se_config.h"
#endif

#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bmc_meter_priv.h"
#include "se_time.h"

#define SDR_CACHE_PREFIX	"slurm-energy-bmc-"
#define SENSOR_NAME_MAX		64

/* IPMI 2.0 §43.14 entity ids */
#define ENTITY_SYSTEM_BOARD	0x07
#define ENTITY_POWER_SUPPLY	0x0a
#define ENTITY_POWER_UNIT	0x13
#define ENTITY_POWER_BOARD	0x15
#define ENTITY_SYSTEM_CHASSIS	0x17

/* One sensor of a reading pass. */
typedef struct {
	unsigned id;
	char name[SENSOR_NAME_MAX];
	bool watts;
	bool valid;		/* a finite, non-negative reading */
	double value;
	uint8_t entity;		/* BMC_ENTITY_UNKNOWN until looked up */
} sensor_t;

static pthread_once_t _init_once = PTHREAD_ONCE_INIT;
static int _init_rc;

static void _init(void)
{
	int errnum;

	_init_rc = ipmi_monitoring_init(0, &errnum) ? -EIO : 0;
}

static int _errno(ipmi_monitoring_ctx_t mon)
{
	switch (ipmi_monitoring_ctx_errnum(mon)) {
	case IPMI_MONITORING_ERR_USERNAME_INVALID:
	case IPMI_MONITORING_ERR_PASSWORD_INVALID:
	case IPMI_MONITORING_ERR_PASSWORD_VERIFICATION_TIMEOUT:
	case IPMI_MONITORING_ERR_PRIVILEGE_LEVEL_INSUFFICIENT:
	case IPMI_MONITORING_ERR_PRIVILEGEL_LEVEL_CANNOT_BE_OBTAINED:
		return -EACCES;
	case IPMI_MONITORING_ERR_CONNECTION_TIMEOUT:
	case IPMI_MONITORING_ERR_SESSION_TIMEOUT:
		return -ETIMEDOUT;
	default:
		return -EIO;
	}
}

static const char *_cache_dir(const struct bmc_meter *m)
{
	return m->conf->sdr_cache_dir ? m->conf->sdr_cache_dir :
					BMC_SDR_CACHE_DIR_DEFAULT;
}

/* The host is looked up here, by the deadline, and kept for the reads:
 * libipmimonitoring would look it up in every read with no timeout. */
int bmc_sensors_open(struct bmc_meter *m, uint64_t deadline_ns)
{
	int rc;

	if ((rc = bmc_lan_host(m, deadline_ns)))
		return rc;
	pthread_once(&_init_once, _init);
	if (_init_rc) {
		se_log_limited(&m->rl, se_mono_ns(), SE_LOG_ERROR,
			       "libipmimonitoring failed to initialise");
		return _init_rc;
	}
	if (!(m->mon = ipmi_monitoring_ctx_create()))
		return -ENOMEM;
	if (mkdir(_cache_dir(m), 0700) && errno != EEXIST)
		se_log_limited(&m->rl, se_mono_ns(), SE_LOG_ERROR,
			       "BMC SDR cache directory %s: %s",
			       _cache_dir(m), strerror(errno));
	if (ipmi_monitoring_ctx_sdr_cache_directory(m->mon, _cache_dir(m)) ||
	    ipmi_monitoring_ctx_sdr_cache_filenames(m->mon,
						    SDR_CACHE_PREFIX "%H")) {
		bmc_sensors_close(m);
		return -EINVAL;
	}
	return 0;
}

void bmc_sensors_close(struct bmc_meter *m)
{
	if (!m->mon)
		return;
	ipmi_monitoring_ctx_destroy(m->mon);
	m->mon = NULL;
}

/* Session parameters for one call, timeouts from the deadline. */
static void _ipmi_config(const struct bmc_meter *m, uint64_t deadline_ns,
			 struct ipmi_monitoring_ipmi_config *cfg)
{
	static const int priv[] = {
		[BMC_PRIV_USER] = IPMI_MONITORING_PRIVILEGE_LEVEL_USER,
		[BMC_PRIV_OPERATOR] = IPMI_MONITORING_PRIVILEGE_LEVEL_OPERATOR,
		[BMC_PRIV_ADMIN] = IPMI_MONITORING_PRIVILEGE_LEVEL_ADMIN,
	};
	const bmc_conf_t *c = m->conf;
	unsigned timeout_ms = bmc_timeout_ms(m, deadline_ns);
	bool v15 = c->protocol == BMC_PROTO_1_5;

	memset(cfg, 0, sizeof(*cfg));
	cfg->driver_type = access("/dev/ipmi0", F_OK) == 0 ?
			   IPMI_MONITORING_DRIVER_TYPE_OPENIPMI : -1;
	cfg->protocol_version = v15 ? IPMI_MONITORING_PROTOCOL_VERSION_1_5 :
				      IPMI_MONITORING_PROTOCOL_VERSION_2_0;
	cfg->username = c->user;
	cfg->password = c->have_password ? (char *) c->password : NULL;
	cfg->privilege_level = priv[c->privilege];
	cfg->authentication_type = IPMI_MONITORING_AUTHENTICATION_TYPE_MD5;
	cfg->cipher_suite_id = (int) c->cipher_suite;
	cfg->session_timeout_len = (int) timeout_ms;
	cfg->retransmission_timeout_len = (int) (timeout_ms / 4 ? timeout_ms / 4 : 1);
	cfg->workaround_flags = v15 ? c->workarounds_1_5 : c->workarounds_2_0;
}

/* The sensor under libipmimonitoring's iterator. */
static void _take(ipmi_monitoring_ctx_t mon, sensor_t *s)
{
	const char *name = ipmi_monitoring_sensor_read_sensor_name(mon);
	const double *reading = ipmi_monitoring_sensor_read_sensor_reading(mon);

	memset(s, 0, sizeof(*s));
	s->id = (unsigned) ipmi_monitoring_sensor_read_record_id(mon);
	snprintf(s->name, sizeof(s->name), "%s", name ? name : "?");
	s->watts = ipmi_monitoring_sensor_read_sensor_units(mon) ==
		   IPMI_MONITORING_SENSOR_UNITS_WATTS;
	s->entity = BMC_ENTITY_UNKNOWN;
	if (reading && ipmi_monitoring_sensor_read_sensor_reading_type(mon) ==
		       IPMI_MONITORING_SENSOR_READING_TYPE_DOUBLE) {
		s->value = *reading;
		s->valid = isfinite(s->value) && s->value >= 0;
	}
}

/*
 * Read the sensors with the given record ids (all when n_ids is 0) into a
 * new array *out of *n entries.  Returns 0 or -errno with msg.
 */
static int _read_all(struct bmc_meter *m, const unsigned *ids, size_t n_ids,
		     uint64_t deadline_ns, sensor_t **out, size_t *n,
		     char *msg, size_t msg_len)
{
	struct ipmi_monitoring_ipmi_config cfg;
	unsigned flags = n_ids ? 0 :
		IPMI_MONITORING_SENSOR_READING_FLAGS_IGNORE_NON_INTERPRETABLE_SENSORS;
	int count, i;

	_ipmi_config(m, deadline_ns, &cfg);
	count = ipmi_monitoring_sensor_readings_by_record_id(
		m->mon, bmc_lib_host(m), &cfg, flags,
		n_ids ? (unsigned *) ids : NULL, (unsigned) n_ids, NULL, NULL);
	if (count < 0) {
		snprintf(msg, msg_len, "BMC %s: reading sensors: %s",
			 bmc_where(m), ipmi_monitoring_ctx_errormsg(m->mon));
		return _errno(m->mon);
	}
	*out = calloc(count ? (size_t) count : 1, sizeof(**out));
	if (!*out)
		return -ENOMEM;
	for (i = 0; i < count; i++) {
		_take(m->mon, &(*out)[i]);
		ipmi_monitoring_sensor_iterator_next(m->mon);
	}
	*n = (size_t) count;
	return 0;
}

/* Entity ids of the sensors, from the SDR cache file libipmimonitoring
 * keeps.  Returns 0, or -errno when the cache cannot be read. */
static int _entities(const struct bmc_meter *m, sensor_t *s, size_t n)
{
	char path[4096];
	ipmi_sdr_ctx_t sdr = ipmi_sdr_ctx_create();
	uint16_t rid;
	uint8_t rtype, eid, inst, itype;
	size_t i;
	int rc = -ENOENT;

	/* named after the host libipmimonitoring was given (%H) */
	snprintf(path, sizeof(path), "%s/" SDR_CACHE_PREFIX "%s", _cache_dir(m),
		 m->conf->host ? bmc_lib_host(m) : "localhost");
	if (!sdr)
		return -ENOMEM;
	if (ipmi_sdr_cache_open(sdr, NULL, path) || ipmi_sdr_cache_first(sdr))
		goto out;
	do {
		if (ipmi_sdr_parse_record_id_and_type(sdr, NULL, 0, &rid, &rtype) ||
		    (rtype != IPMI_SDR_FORMAT_FULL_SENSOR_RECORD &&
		     rtype != IPMI_SDR_FORMAT_COMPACT_SENSOR_RECORD) ||
		    ipmi_sdr_parse_entity_id_instance_type(sdr, NULL, 0, &eid,
							   &inst, &itype))
			continue;
		for (i = 0; i < n; i++)
			if (s[i].id == rid)
				s[i].entity = eid;
	} while (ipmi_sdr_cache_next(sdr) == 1);
	rc = 0;
	ipmi_sdr_cache_close(sdr);
out:
	ipmi_sdr_ctx_destroy(sdr);
	return rc;
}

static int _tier(uint8_t entity)
{
	switch (entity) {
	case ENTITY_POWER_SUPPLY:
		return 1;
	case ENTITY_SYSTEM_BOARD:
	case ENTITY_POWER_UNIT:
	case ENTITY_POWER_BOARD:
	case ENTITY_SYSTEM_CHASSIS:
		return 2;
	default:
		return 0;
	}
}

/* Default choice: the Watts sensors of the best entity tier present. */
static void _choose_default(struct bmc_meter *m, sensor_t *s, size_t n)
{
	int best = 3, t;
	size_t i;

	if (_entities(m, s, n)) {
		se_log(SE_LOG_INFO, "BMC %s: SDR cache in %s unreadable: summing every Watts sensor",
		       bmc_where(m), _cache_dir(m));
		best = 0;
	}
	for (i = 0; i < n && best; i++)
		if (s[i].watts && (t = _tier(s[i].entity)) && t < best)
			best = t;
	for (i = 0; i < n && m->n_ids < BMC_MAX_SENSORS; i++)
		if (s[i].watts && (best == 0 || _tier(s[i].entity) == best))
			m->ids[m->n_ids++] = s[i].id;
}

static sensor_t *_find(sensor_t *s, size_t n, const bmc_sensor_sel_t *sel)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (sel->by_id ? s[i].id == sel->record_id :
				 !strcasecmp(s[i].name, sel->name))
			return &s[i];
	return NULL;
}

/* The sensors named in EnergyBMCSensors: each must exist, in Watts. */
static int _choose_named(struct bmc_meter *m, sensor_t *s, size_t n,
			 char *msg, size_t msg_len)
{
	size_t i;

	for (i = 0; i < m->conf->n_sensors; i++) {
		const bmc_sensor_sel_t *sel = &m->conf->sensors[i];
		sensor_t *found = _find(s, n, sel);
		char what[SENSOR_NAME_MAX + 16];

		if (sel->by_id)
			snprintf(what, sizeof(what), "record id %u",
				 sel->record_id);
		else
			snprintf(what, sizeof(what), "'%s'", sel->name);
		if (!found || !found->watts) {
			snprintf(msg, msg_len,
				 "BMC %s: EnergyBMCSensors: %s is %s",
				 bmc_where(m), what,
				 found ? "not in Watts" : "not on this BMC");
			m->n_ids = 0;
			return -ENOENT;
		}
		m->ids[m->n_ids++] = found->id;
	}
	return 0;
}

static void _log_choice(const struct bmc_meter *m, const sensor_t *s,
			size_t n)
{
	char list[1024] = "";
	size_t i, j, len = 0;

	for (i = 0; i < m->n_ids; i++)
		for (j = 0; j < n; j++)
			if (s[j].id == m->ids[i] && len < sizeof(list))
				len += snprintf(list + len, sizeof(list) - len,
						"%s#%u '%s'", i ? ", " : "",
						s[j].id, s[j].name);
	se_log(SE_LOG_INFO, "BMC %s: power is the sum of %zu Watts sensor%s: %s",
	       bmc_where(m), m->n_ids, m->n_ids == 1 ? "" : "s", list);
}

static int _choose(struct bmc_meter *m, sensor_t *s, size_t n, char *msg,
		   size_t msg_len)
{
	int rc = 0;

	m->n_ids = 0;
	if (m->conf->n_sensors)
		rc = _choose_named(m, s, n, msg, msg_len);
	else
		_choose_default(m, s, n);
	if (rc)
		return rc;
	if (!m->n_ids) {
		snprintf(msg, msg_len, "BMC %s: no Watts sensor found",
			 bmc_where(m));
		return -ENOENT;
	}
	_log_choice(m, s, n);
	return 0;
}

/* Sum the chosen sensors; every one of them must have read. */
static int _sum(const struct bmc_meter *m, const sensor_t *s, size_t n,
		double *watts, char *msg, size_t msg_len)
{
	size_t i, j;

	*watts = 0;
	for (i = 0; i < m->n_ids; i++) {
		for (j = 0; j < n && s[j].id != m->ids[i]; j++)
			;
		if (j == n || !s[j].valid) {
			snprintf(msg, msg_len,
				 "BMC %s: sensor #%u %s%s%sgave no reading",
				 bmc_where(m), m->ids[i], j < n ? "'" : "",
				 j < n ? s[j].name : "", j < n ? "' " : "");
			return -EAGAIN;
		}
		*watts += s[j].value;
	}
	return 0;
}

int bmc_sensors_read(struct bmc_meter *m, meter_reading_t *out,
		     uint64_t deadline_ns, char *msg, size_t msg_len)
{
	char scratch[8];
	sensor_t *s = NULL;
	size_t n = 0;
	double watts;
	int rc;

	if (!msg) {
		msg = scratch;
		msg_len = sizeof(scratch);
	}
	rc = _read_all(m, m->ids, m->n_ids, deadline_ns, &s, &n, msg, msg_len);
	if (!rc && !m->n_ids)
		rc = _choose(m, s, n, msg, msg_len);
	if (!rc)
		rc = _sum(m, s, n, &watts, msg, msg_len);
	free(s);
	if (rc)
		return rc;

	memset(out, 0, sizeof(*out));
	out->has_power = true;
	out->power_mw = (uint64_t) llround(watts * 1000.0);
	return bmc_check_range(m, out->power_mw, msg, msg_len);
}
