/*
 * bmc_conf.c - acct_gather.conf keys of acct_gather_energy/bmc, one table.
 */
#ifdef HAVE_CONFIG_H
#include "se_config.h"
#endif

#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "bmc_conf.h"
#include "conf.h"
#include "conf_desc.h"
#include "conf_map.h"
#include "se_time.h"

/* ------------------------------------------------------------ private types */

/* A FreeIPMI workaround flag: its ipmi-sensors -W name and its bits for
 * IPMI 1.5 and 2.0 sessions (libfreeipmi's IPMI_WORKAROUND_FLAGS_OUTOFBAND_*
 * and libipmimonitoring's ..._PROTOCOL_VERSION_* share these values). */
typedef struct {
	const char *name;
	unsigned bits_1_5;
	unsigned bits_2_0;
} bmc_workaround_t;

/* ------------------------------------------------------------ private data */

#define BMC_PERIOD_MIN_NS	(100 * SE_NS_PER_MS)
#define BMC_PERIOD_MAX_NS	(3600 * SE_NS_PER_SEC)
#define BMC_TIMEOUT_MIN_MS	10
#define BMC_TIMEOUT_MAX_MS	60000
#define BMC_MAX_WATTS		65535	/* DCMI power is 16-bit */
/* Redfish: BMC sensors refresh every few seconds and some BMCs answer in
 * about 3 s (DESIGN.md §8): a read every 5 s, each request within 4 s.
 * Step boundaries come from the counter shaped by power, not from
 * polling faster (acct_gather_energy_bmc(5), REDFISH). */
#define BMC_RF_PERIOD_NS	(5 * SE_NS_PER_SEC)
#define BMC_RF_TIMEOUT_NS	(4000 * SE_NS_PER_MS)
#define BMC_IPMI_PERIOD_NS	SE_NS_PER_SEC
#define BMC_IPMI_TIMEOUT_NS	(2000 * SE_NS_PER_MS)

static const char *const _method_names[] = {
	[BMC_METHOD_AUTO] = "auto",
	[BMC_METHOD_DCMI] = "dcmi",
	[BMC_METHOD_SENSORS] = "sensors",
	[BMC_METHOD_REDFISH] = "redfish",
	NULL,
};

static const char *const _auth_names[] = {
	[BMC_AUTH_SESSION] = "session",
	[BMC_AUTH_BASIC] = "basic",
	NULL,
};

static const char *const _tls_names[] = {
	[BMC_TLS_YES] = "yes",
	[BMC_TLS_NO] = "no",
	NULL,
};

static const char *const _tick_watch_names[] = {
	[BMC_TICK_WATCH_YES] = "yes",
	[BMC_TICK_WATCH_NO] = "no",
	NULL,
};

static const char *const _priv_names[] = {
	[BMC_PRIV_USER] = "user",
	[BMC_PRIV_OPERATOR] = "operator",
	[BMC_PRIV_ADMIN] = "admin",
	NULL,
};

static const char *const _proto_names[] = {
	[BMC_PROTO_2_0] = "2.0",
	[BMC_PROTO_1_5] = "1.5",
	NULL,
};

static const bmc_workaround_t _workarounds[] = {
	{ "authcap",		0x01, 0x01 },
	{ "idzero",		0x02, 0 },
	{ "forcepermsg",	0x04, 0 },
	{ "unexpectedauth",	0x08, 0 },
	{ "endianseq",		0x10, 0 },
	{ "noauthcodecheck",	0x20, 0 },
	{ "nochecksumcheck",	0x40, 0x40 },
	{ "intel20",		0, 0x02 },
	{ "supermicro20",	0, 0x04 },
	{ "sun20",		0, 0x08 },
	{ "opensesspriv",	0, 0x10 },
	{ "integritycheckvalue", 0, 0x20 },
	{ NULL, 0, 0 },
};

/* IPMI 2.0 §22.15.2 cipher suites FreeIPMI implements */
static const unsigned _cipher_suites[] = { 0, 1, 2, 3, 6, 7, 8, 11, 12, 15,
					   16, 17 };

/* ------------------------------------------------------------ setters */

static void _free_sensors(bmc_conf_t *c)
{
	size_t i;

	for (i = 0; i < c->n_sensors; i++)
		free(c->sensors[i].name);
	c->n_sensors = 0;
}

static bool _all_digits(const char *s)
{
	if (!*s)
		return false;
	for (; *s; s++)
		if (!isdigit((unsigned char) *s))
			return false;
	return true;
}

/* One comma-separated item of EnergyBMCSensors: trimmed, id or name. */
static int _add_sensor(bmc_conf_t *c, const conf_where_t *w,
		       const char *value, char *item, char *err,
		       size_t err_len)
{
	bmc_sensor_sel_t *s = &c->sensors[c->n_sensors];
	char *end = item + strlen(item);

	while (isspace((unsigned char) *item))
		item++;
	while (end > item && isspace((unsigned char) end[-1]))
		*--end = '\0';
	if (!*item)
		return conf_fail(w, value, err, err_len, -EINVAL,
				 "empty item in the list");
	if (c->n_sensors == BMC_MAX_SENSORS)
		return conf_fail(w, value, err, err_len, -ERANGE,
				 "more than %d sensors", BMC_MAX_SENSORS);
	if (_all_digits(item)) {
		s->by_id = true;
		s->record_id = (unsigned) strtoul(item, NULL, 10);
		if (s->record_id > 0xffff)
			return conf_fail(w, value, err, err_len, -ERANGE,
					 "record id %s is not 16-bit", item);
	} else if (!(s->name = strdup(item))) {
		return -ENOMEM;
	}
	c->n_sensors++;
	return 0;
}

static int _set_sensors(void *conf, const conf_where_t *w, const char *value,
			char *err, size_t err_len)
{
	bmc_conf_t *c = conf, next = { .n_sensors = 0 };
	char *list = strdup(value), *rest = list, *item;
	int rc = 0;

	if (!list)
		return -ENOMEM;
	/* strsep, not strtok: "1,,2" has an empty item to complain about */
	while (!rc && (item = strsep(&rest, ",")))
		rc = _add_sensor(&next, w, value, item, err, err_len);
	free(list);
	if (rc) {		/* c keeps the list it had */
		_free_sensors(&next);
		return rc;
	}
	_free_sensors(c);
	memcpy(c->sensors, next.sensors, sizeof(c->sensors));
	c->n_sensors = next.n_sensors;
	return 0;
}

static int _check_host(const conf_where_t *w, const char *value, char *err,
		       size_t err_len)
{
	if (!*value)
		return conf_fail(w, value, err, err_len, -EINVAL,
				 "empty (leave the key out for in-band)");
	return 0;
}

/* A Redfish host: HOST[:PORT], or a URL of http or https. */
static int _check_rf_host(const conf_where_t *w, const char *host, char *err,
			  size_t err_len)
{
	const char *sep = strstr(host, "://");

	if (sep && strncmp(host, "https://", 8) && strncmp(host, "http://", 7))
		return conf_fail(w, host, err, err_len, -EINVAL,
				 "EnergyBMCMethod=redfish takes HOST[:PORT] (https) or an https:// or http:// URL");
	if (strpbrk(sep ? sep + 3 : host, "/?# \t"))
		return conf_fail(w, host, err, err_len, -EINVAL,
				 "the BMC's address only, no path (EnergyBMCRedfishChassis, EnergyBMCRedfishSource name resources)");
	return 0;
}

/* The longest name any method takes (Redfish's, an HTTP account); the
 * IPMI methods' 16 is checked with the method (bmc_conf_check), since
 * the keys come in any order. */
static int _check_user(const conf_where_t *w, const char *value, char *err,
		       size_t err_len)
{
	if (strlen(value) > BMC_USER_MAX_REDFISH)
		return conf_fail(w, value, err, err_len, -ERANGE,
				 "longer than 127 characters");
	return 0;
}

/* After the row's 0 to 17: one FreeIPMI implements. */
static int _check_cipher_suite(const conf_where_t *w, const char *value,
			       char *err, size_t err_len)
{
	uint64_t id = 0;
	size_t i;

	/* the row's parse took it: no message */
	conf_uint(w, value, 0, 17, &id, NULL, 0);
	for (i = 0; i < sizeof(_cipher_suites) / sizeof(_cipher_suites[0]); i++)
		if (_cipher_suites[i] == id)
			return 0;
	return conf_fail(w, value, err, err_len, -EINVAL,
			 "not a cipher suite FreeIPMI supports (0-3, 6-8, 11, 12, 15-17)");
}

static const bmc_workaround_t *_workaround(const char *name)
{
	const bmc_workaround_t *wa;

	for (wa = _workarounds; wa->name; wa++)
		if (!strcasecmp(wa->name, name))
			return wa;
	return NULL;
}

static int _set_workarounds(void *conf, const conf_where_t *w,
			    const char *value, char *err, size_t err_len)
{
	bmc_conf_t *c = conf;
	char *list = strdup(value), *save = NULL, *item;
	unsigned b15 = 0, b20 = 0;
	int rc = 0;

	if (!list)
		return -ENOMEM;
	for (item = strtok_r(list, ", ", &save); item && !rc;
	     item = strtok_r(NULL, ", ", &save)) {
		const bmc_workaround_t *wa = _workaround(item);

		if (!wa) {
			rc = conf_fail(w, value, err, err_len, -EINVAL,
				       "unknown workaround '%s' (known: authcap, idzero, forcepermsg, unexpectedauth, endianseq, noauthcodecheck, nochecksumcheck, intel20, supermicro20, sun20, opensesspriv, integritycheckvalue)",
				       item);
			break;
		}
		b15 |= wa->bits_1_5;
		b20 |= wa->bits_2_0;
	}
	free(list);
	if (rc)
		return rc;
	c->workarounds_1_5 = b15;
	c->workarounds_2_0 = b20;
	return conf_set_str(&c->workaround_names, value);
}

static int _set_max_watts(void *conf, const conf_where_t *w, const char *value,
			  char *err, size_t err_len)
{
	bmc_conf_t *c = conf;
	uint64_t watts;
	int rc;

	if ((rc = conf_uint(w, value, 1, BMC_MAX_WATTS, &watts, err, err_len)))
		return rc;
	c->max_power_mw = watts * 1000;
	return 0;
}

/* EnergyBMCRedfishChassis: an Id ("1U") or a URI ("/redfish/v1/...") */
static int _check_chassis(const conf_where_t *w, const char *value,
			  char *err, size_t err_len)
{
	if (!*value || strpbrk(value, " \t?#"))
		return conf_fail(w, value, err, err_len, -EINVAL,
				 "a chassis Id (1U) or URI (/redfish/v1/Chassis/1U)");
	if (value[0] == '/' && strncmp(value, "/redfish/v1/", 12))
		return conf_fail(w, value, err, err_len, -EINVAL,
				 "a URI starts with /redfish/v1/");
	return 0;
}

/* One resource of a source list: a path on the host, or a URL naming
 * another service (a node's second PDU). */
static bool _source_item_ok(const char *item, size_t len)
{
	const char *path = item;

	if (!strncmp(item, "https://", 8) || !strncmp(item, "http://", 7)) {
		path = memchr(item + 8, '/', len > 8 ? len - 8 : 0);
		if (!path || path == strchr(item, ':') + 3)
			return false;
	}
	return len < 256 && (size_t) (item + len - path) >= 12 &&
	       !strncmp(path, "/redfish/v1/", 12);
}

/* A Source= of the map: as EnergyBMCRedfishSource. */
static int _check_source(const conf_where_t *w, const char *value,
			 char *err, size_t err_len)
{
	static const char *const words[] = { "auto", "energy", "power" };
	const char *p = value;
	size_t i, n = 0;

	for (i = 0; i < 3; i++)
		if (!strcasecmp(value, words[i]))
			return 0;
	if (strpbrk(value, " \t?#"))
		p = NULL;
	while (p) {		/* URI[,URI...]: summed (a node's outlets) */
		const char *comma = strchr(p, ',');
		size_t len = comma ? (size_t) (comma - p) : strlen(p);

		if (!_source_item_ok(p, len) || ++n > BMC_RF_MAX_SOURCES)
			break;
		if (!comma)
			return 0;
		p = comma + 1;
	}
	return conf_fail(w, value, err, err_len, -EINVAL,
			 "must be auto, energy, power or a resource URI (/redfish/v1/... or https://HOST/redfish/v1/...), or up to 8 of them separated by commas, summed (a node's PDU outlets)");
}

/* EnergyBMCRedfishSource: auto, energy, power or a resource URI */
static int _set_rf_source(void *conf, const conf_where_t *w,
			  const char *value, char *err, size_t err_len)
{
	static const char *const words[] = { "auto", "energy", "power" };
	bmc_conf_t *c = conf;
	size_t i;
	int rc;

	if ((rc = _check_source(w, value, err, err_len)))
		return rc;
	for (i = 0; i < 3; i++)
		if (!strcasecmp(value, words[i])) {
			c->rf_source = (bmc_rf_source_t) i;
			free(c->rf_source_uri);
			c->rf_source_uri = NULL;
			return 0;
		}
	c->rf_source = BMC_RF_SOURCE_URI;
	return conf_set_str(&c->rf_source_uri, value);
}

/* ------------------------------------------------------------ public */

void bmc_conf_init(bmc_conf_t *c)
{
	memset(c, 0, sizeof(*c));
	c->method = BMC_METHOD_AUTO;
	c->privilege = BMC_PRIV_USER;
	c->protocol = BMC_PROTO_2_0;
	c->cipher_suite = 3;	/* HMAC-SHA1, HMAC-SHA1-96, AES-CBC-128 */
	c->period_ns = BMC_IPMI_PERIOD_NS;
	c->timeout_ns = BMC_IPMI_TIMEOUT_NS;
	c->max_power_mw = 20000ULL * 1000;
	c->auth = BMC_AUTH_SESSION;
	c->tls_verify = BMC_TLS_YES;
	c->rf_source = BMC_RF_SOURCE_AUTO;
}

void bmc_conf_free(bmc_conf_t *c)
{
	_free_sensors(c);
	se_conf_keys_free(bmc_conf_desc.keys, bmc_conf_desc.n_keys, c);
	free(c->workaround_names);
	free(c->map_host);
	free(c->map_source);
	free(c->map_chassis);
	free(c->host);
	free(c->rf_source_uri);
	explicit_bzero(c->password, sizeof(c->password));
	bmc_conf_init(c);
}

/* Read the first line of the (already checked) password file. */
static int _read_password(bmc_conf_t *c, const conf_where_t *w, char *err,
			  size_t err_len)
{
	size_t max = c->method == BMC_METHOD_REDFISH ? BMC_PASSWORD_MAX_REDFISH :
		     c->protocol == BMC_PROTO_1_5 ? BMC_PASSWORD_MAX_1_5 :
						     BMC_PASSWORD_MAX_2_0;
	char line[BMC_PASSWORD_MAX_REDFISH + 2];
	FILE *f;
	size_t n;
	int e;

	if (!(f = fopen(c->password_file, "r"))) {
		e = errno;
		return conf_fail(w, c->password_file, err, err_len, -e, "%s",
				 strerror(e));
	}
	if (!fgets(line, sizeof(line), f))
		line[0] = '\0';
	fclose(f);
	n = strcspn(line, "\r\n");
	line[n] = '\0';
	if (n > max) {
		explicit_bzero(line, sizeof(line));
		return conf_fail(w, c->password_file, err, err_len, -ERANGE,
				 "the password is longer than %zu bytes (%s%s)",
				 max, c->method == BMC_METHOD_REDFISH ?
				 "Redfish" : "IPMI ",
				 c->method == BMC_METHOD_REDFISH ? "" :
				 _proto_names[c->protocol]);
	}
	memcpy(c->password, line, n + 1);
	explicit_bzero(line, sizeof(line));
	c->have_password = true;
	return 0;
}

static int _finish_host(bmc_conf_t *c, const char *file, const char *node,
			char *err, size_t err_len)
{
	conf_where_t w = { .file = file, .key = "EnergyBMCHost" };
	char host[256];
	int rc;

	free(c->host);
	c->host = NULL;
	if (c->map_host) {
		w.file = c->map_path;
		w.key = "Host";
		w.line = c->map_line;
	} else if (!c->host_tmpl) {
		return 0;
	}
	rc = conf_expand(&w, c->map_host ? c->map_host : c->host_tmpl, node,
			 host, sizeof(host), err, err_len);
	if (!rc && c->method == BMC_METHOD_REDFISH)
		rc = _check_rf_host(&w, host, err, err_len);
	if (rc)
		return rc;
	return (c->host = strdup(host)) ? 0 : -ENOMEM;
}

/* ------------------------------------------------------------ map file */

/* What bmc_conf_resolve_map() looks for while the map is read. */
typedef struct {
	const char *node;
	const bmc_hostlist_ops_t *hl;
	unsigned found_line;	/* 0: node on no line yet */
	char *host;		/* Host= of found_line */
	char *source;		/* its Source= (redfish), or NULL */
	char *chassis;		/* its Chassis= (redfish), or NULL */
} bmc_map_ctx_t;

/* One line's keys. */
typedef struct {
	char *nodes;
	char *host;
	char *source;
	char *chassis;
} bmc_map_entry_t;

static int _map_line(void *arg, void *entry, const char *path, unsigned line,
		     char *err, size_t err_len);

static const se_conf_key_t _map_keys[] = {
	SE_KEY_STR("Nodes", bmc_map_entry_t, nodes, conf_nonempty, NULL),
	/* as EnergyBMCHost (%n allowed), whose "empty" says more */
	SE_KEY_STR("Host", bmc_map_entry_t, host, conf_nonempty, NULL),
	/* EnergyBMCMethod=redfish: this node's EnergyBMCRedfishSource and
	 * EnergyBMCRedfishChassis (a PDU outlet's URI, a blade's chassis) */
	SE_KEY_STR("Source", bmc_map_entry_t, source, _check_source, NULL),
	SE_KEY_STR("Chassis", bmc_map_entry_t, chassis, _check_chassis, NULL),
};

const se_conf_map_t bmc_map = {
	.conf_file = "acct_gather.conf",
	.conf_key = "EnergyBMCMap",
	.keys = _map_keys,
	.n_keys = sizeof(_map_keys) / sizeof(_map_keys[0]),
	.entry_size = sizeof(bmc_map_entry_t),
	.once = true,
	.line = _map_line,
};

/* se_conf_map_t.line: one "Nodes=... Host=..." line. */
static int _map_line(void *arg, void *entry, const char *path, unsigned line,
		     char *err, size_t err_len)
{
	bmc_map_ctx_t *mc = arg;
	bmc_map_entry_t *e = entry;
	int in;

	if (!e->nodes || !e->host) {
		snprintf(err, err_len, "%s:%u: %s", path, line,
			 e->nodes ? "no Host=" : "no Nodes=");
		return -EINVAL;
	}
	if ((in = mc->hl->contains(mc->hl->arg, e->nodes, mc->node)) < 0) {
		snprintf(err, err_len,
			 "%s:%u: Nodes=%s: not a hostlist expression", path,
			 line, e->nodes);
		return -EINVAL;
	}
	if (!in)
		return 0;
	if (mc->found_line) {
		snprintf(err, err_len,
			 "%s: node %s is on line %u and on line %u: one BMC per node",
			 path, mc->node, mc->found_line, line);
		return -EINVAL;
	}
	mc->host = e->host;
	mc->source = e->source;
	mc->chassis = e->chassis;
	e->host = e->source = e->chassis = NULL;	/* mc's now */
	mc->found_line = line;
	return 0;
}

int bmc_conf_resolve_map(bmc_conf_t *c, const char *node,
			 const bmc_hostlist_ops_t *hl, char *err,
			 size_t err_len)
{
	bmc_map_ctx_t mc = { .node = node, .hl = hl };
	int rc;

	free(c->map_host);
	free(c->map_source);
	free(c->map_chassis);
	c->map_host = c->map_source = c->map_chassis = NULL;
	c->map_line = 0;
	if (!c->map_path)
		return 0;
	if (!node) {
		snprintf(err, err_len, "%s: no node name to look up",
			 c->map_path);
		return -EINVAL;
	}
	rc = se_conf_map_read(&bmc_map, c->map_path, &mc, err, err_len);
	if (!rc && !mc.found_line && !c->host_tmpl) {
		snprintf(err, err_len,
			 "%s: node %s is on no line, and EnergyBMCHost is not set",
			 c->map_path, node);
		rc = -EINVAL;
	}
	if (rc) {
		free(mc.host);
		free(mc.source);
		free(mc.chassis);
		return rc;
	}
	c->map_host = mc.host;
	c->map_source = mc.source;
	c->map_chassis = mc.chassis;
	c->map_line = mc.found_line;
	return 0;
}

/* %n in EnergyBMCSdrCacheDir: one cache per node where several slurmds
 * share a file system and a BMC (libipmimonitoring names the file after
 * the BMC only, and concurrent first reads would write the same file). */
static int _finish_sdr_cache_dir(bmc_conf_t *c, const char *file,
				 const char *node, char *err, size_t err_len)
{
	conf_where_t w = { .file = file, .key = "EnergyBMCSdrCacheDir" };
	char dir[4096];
	int rc;

	if (!c->sdr_cache_dir || !strchr(c->sdr_cache_dir, '%'))
		return 0;
	rc = conf_expand(&w, c->sdr_cache_dir, node, dir, sizeof(dir), err,
			 err_len);
	if (rc)
		return rc;
	return conf_set_str(&c->sdr_cache_dir, dir);
}

static int _check_redfish(const bmc_conf_t *c, const char *file, char *err,
			  size_t err_len)
{
	conf_where_t w = { .file = file, .key = "EnergyBMCHost" };

	if (!c->host_tmpl && !c->map_path)
		return conf_fail(&w, "", err, err_len, -EINVAL,
				 "EnergyBMCMethod=redfish needs the BMC's address (EnergyBMCHost or EnergyBMCMap): Redfish has no in-band path here");
	if (c->host_tmpl)
		return _check_rf_host(&w, c->host_tmpl, err, err_len);
	return 0;
}

int bmc_conf_check(const bmc_conf_t *c, const char *file, char *err,
		   size_t err_len)
{
	conf_where_t w = { .file = file, .key = "EnergyBMCWorkaroundFlags" };

	if (c->poller && c->method != BMC_METHOD_REDFISH) {
		w.key = "EnergyBMCPoller";
		return conf_fail(&w, c->poller, err, err_len, -EINVAL,
				 "only with EnergyBMCMethod=redfish (the PDU poller reads Redfish PDU outlets), not %s",
				 bmc_method_name(c->method));
	}
	if (c->method == BMC_METHOD_REDFISH)
		return _check_redfish(c, file, err, err_len);
	if (c->user && strlen(c->user) > BMC_USER_MAX_IPMI) {
		w.key = "EnergyBMCUser";
		return conf_fail(&w, c->user, err, err_len, -ERANGE,
				 "longer than 16 characters (IPMI user names; EnergyBMCMethod=redfish takes up to 127)");
	}

	if (c->protocol == BMC_PROTO_2_0 && c->workarounds_1_5 &&
	    !c->workarounds_2_0)
		return conf_fail(&w, c->workaround_names, err, err_len, -EINVAL,
				 "only IPMI 1.5 workarounds, but EnergyBMCProtocol is 2.0");
	if (c->protocol == BMC_PROTO_1_5 && c->workarounds_2_0 &&
	    !c->workarounds_1_5)
		return conf_fail(&w, c->workaround_names, err, err_len, -EINVAL,
				 "only IPMI 2.0 workarounds, but EnergyBMCProtocol is 1.5");
	return 0;
}

/* The node's map line's Source= and Chassis= over the global keys. */
static int _finish_map_redfish(bmc_conf_t *c, char *err, size_t err_len)
{
	conf_where_t w = { .file = c->map_path, .key = "Source",
			   .line = c->map_line };
	int rc;

	if (c->map_source &&
	    (rc = _set_rf_source(c, &w, c->map_source, err, err_len)))
		return rc;
	if (c->map_chassis && conf_set_str(&c->rf_chassis, c->map_chassis))
		return -ENOMEM;
	return 0;
}

int bmc_conf_finish(bmc_conf_t *c, const char *file, const char *node,
		    char *err, size_t err_len)
{
	conf_where_t w = { .file = file, .key = "EnergyBMCPasswordFile" };
	int rc;

	if ((rc = bmc_conf_check(c, file, err, err_len)))
		return rc;
	if ((rc = _finish_host(c, file, node, err, err_len)) ||
	    (rc = _finish_sdr_cache_dir(c, file, node, err, err_len)) ||
	    (rc = _finish_map_redfish(c, err, err_len)))
		return rc;
	/* through the poller, the password is the poller's alone */
	if (!c->password_file || c->poller)
		return 0;
	rc = conf_check_secret_file(&w, c->password_file, err, err_len);
	if (rc)
		return rc;
	return _read_password(c, &w, err, err_len);
}

const char *bmc_method_name(bmc_method_t m)
{
	return (unsigned) m <= BMC_METHOD_REDFISH ? _method_names[m] : "?";
}

const char *bmc_priv_name(bmc_priv_t p)
{
	return (unsigned) p <= BMC_PRIV_ADMIN ? _priv_names[p] : "?";
}

static int _dup(char **dst, const char *src)
{
	*dst = NULL;
	return !src || (*dst = strdup(src)) ? 0 : -ENOMEM;
}

int bmc_conf_copy(bmc_conf_t *dst, const bmc_conf_t *src)
{
	size_t i;
	int rc = 0;

	*dst = *src;
	for (i = 0; i < src->n_sensors; i++)
		rc |= _dup(&dst->sensors[i].name, src->sensors[i].name);
	rc |= _dup(&dst->host_tmpl, src->host_tmpl);
	rc |= _dup(&dst->map_path, src->map_path);
	rc |= _dup(&dst->map_host, src->map_host);
	rc |= _dup(&dst->map_source, src->map_source);
	rc |= _dup(&dst->map_chassis, src->map_chassis);
	rc |= _dup(&dst->user, src->user);
	rc |= _dup(&dst->password_file, src->password_file);
	rc |= _dup(&dst->workaround_names, src->workaround_names);
	rc |= _dup(&dst->sdr_cache_dir, src->sdr_cache_dir);
	rc |= _dup(&dst->host, src->host);
	rc |= _dup(&dst->ca_file, src->ca_file);
	rc |= _dup(&dst->rf_chassis, src->rf_chassis);
	rc |= _dup(&dst->rf_source_uri, src->rf_source_uri);
	rc |= _dup(&dst->poller, src->poller);
	if (rc) {
		bmc_conf_free(dst);
		return -ENOMEM;
	}
	return 0;
}

/* ------------------------------------------------------------ printers */

static void _show_sensors(const void *conf, char *buf, size_t len)
{
	const bmc_conf_t *c = conf;
	size_t i, n = 0;

	for (i = 0; i < c->n_sensors && n < len; i++) {
		if (c->sensors[i].by_id)
			n += snprintf(buf + n, len - n, "%s%u", i ? "," : "",
				      c->sensors[i].record_id);
		else
			n += snprintf(buf + n, len - n, "%s%s", i ? "," : "",
				      c->sensors[i].name);
	}
	if (!c->n_sensors)
		snprintf(buf, len, "(every system Watts sensor)");
}

SE_CONF_SHOW(_show_workarounds, bmc_conf_t, "%s",
	     c->workaround_names ? c->workaround_names : "(none)")
SE_CONF_SHOW(_show_rf_source, bmc_conf_t, "%s",
	     c->rf_source == BMC_RF_SOURCE_URI ? c->rf_source_uri :
	     c->rf_source == BMC_RF_SOURCE_ENERGY ? "energy" :
	     c->rf_source == BMC_RF_SOURCE_POWER ? "power" : "auto")
SE_CONF_SHOW(_show_max_watts, bmc_conf_t,
	     "%llu", (unsigned long long) (c->max_power_mw / 1000))

/* ------------------------------------------------------------ the keys */

/* The man page documents the keys in this order. */
static const se_conf_key_t _keys[] = {
	SE_KEY_ENUM("EnergyBMCMethod", bmc_conf_t, method, _method_names),
	SE_KEY_FN("EnergyBMCSensors", _set_sensors, _show_sensors),
	SE_KEY_STR("EnergyBMCHost", bmc_conf_t, host_tmpl, _check_host,
		   "(in-band)"),
	SE_KEY_PATH("EnergyBMCMap", bmc_conf_t, map_path, NULL, "(none)"),
	SE_KEY_STR("EnergyBMCUser", bmc_conf_t, user, _check_user,
		   "(null user)"),
	/* the path, never the secret */
	SE_KEY_PATH("EnergyBMCPasswordFile", bmc_conf_t, password_file, NULL,
		    "(none)"),
	SE_KEY_ENUM("EnergyBMCPrivilege", bmc_conf_t, privilege, _priv_names),
	SE_KEY_ENUM("EnergyBMCProtocol", bmc_conf_t, protocol, _proto_names),
	{ .name = "EnergyBMCCipherSuite", .type = SE_CONF_UINT,
	  .offset = SE_CONF_FIELD(bmc_conf_t, cipher_suite, unsigned),
	  .min = 0, .max = 17, .check = _check_cipher_suite },
	SE_KEY_FN("EnergyBMCWorkaroundFlags", _set_workarounds,
		  _show_workarounds),
	SE_KEY_SECONDS("EnergyBMCFrequency", bmc_conf_t, period_ns,
		       BMC_PERIOD_MIN_NS, BMC_PERIOD_MAX_NS),
	SE_KEY_MILLIS("EnergyBMCTimeout", bmc_conf_t, timeout_ns,
		      BMC_TIMEOUT_MIN_MS, BMC_TIMEOUT_MAX_MS),
	SE_KEY_FN("EnergyBMCMaxWatts", _set_max_watts, _show_max_watts),
	SE_KEY_PATH("EnergyBMCSdrCacheDir", bmc_conf_t, sdr_cache_dir, NULL,
		    BMC_SDR_CACHE_DIR_DEFAULT),
	/* EnergyBMCMethod=redfish */
	SE_KEY_ENUM("EnergyBMCAuth", bmc_conf_t, auth, _auth_names),
	SE_KEY_PATH("EnergyBMCCAFile", bmc_conf_t, ca_file, NULL,
		    "(the system's CA certificates)"),
	SE_KEY_ENUM("EnergyBMCTLSVerify", bmc_conf_t, tls_verify, _tls_names),
	SE_KEY_STR("EnergyBMCRedfishChassis", bmc_conf_t, rf_chassis,
		   _check_chassis, "(the only outermost chassis)"),
	SE_KEY_FN("EnergyBMCRedfishSource", _set_rf_source, _show_rf_source),
	SE_KEY_ENUM("EnergyBMCRedfishTickWatch", bmc_conf_t, rf_tick_watch,
		    _tick_watch_names),
	/* HOST:PORT ([V6ADDR]:PORT), PORT 1-65535 */
	SE_KEY_STR("EnergyBMCPoller", bmc_conf_t, poller, conf_poller_addr,
		   "(none)"),
};

/*
 * se_conf_desc_t.given: EnergyBMCFrequency and EnergyBMCTimeout default by
 * method (Redfish BMCs are slower than an IPMI session) unless given,
 * whatever the order of the keys.
 */
static void _given(void *conf, size_t i)
{
	bmc_conf_t *c = conf;
	const char *key = _keys[i].name;
	bool rf;

	if (!strcmp(key, "EnergyBMCFrequency"))
		c->period_given = true;
	if (!strcmp(key, "EnergyBMCTimeout"))
		c->timeout_given = true;
	rf = c->method == BMC_METHOD_REDFISH;
	if (!c->period_given)
		c->period_ns = rf ? BMC_RF_PERIOD_NS : BMC_IPMI_PERIOD_NS;
	if (!c->timeout_given)
		c->timeout_ns = rf ? BMC_RF_TIMEOUT_NS : BMC_IPMI_TIMEOUT_NS;
}

/* A hostlist that holds no node: the map's syntax alone is checked. */
static int _in_no_list(void *arg, const char *expr, const char *node)
{
	(void) arg;
	(void) expr;
	(void) node;
	return 0;
}

/*
 * se_conf_desc_t.check_files, for offline checkers (se-conf-check): what
 * slurmd reads when it builds the meter, less what depends on the node:
 * the password file (owner, mode, length; the secret is wiped at once;
 * not with EnergyBMCPoller: the poller's host has it) and the map's
 * syntax.
 */
static int _check_files(void *conf, char *err, size_t err_len)
{
	static const bmc_hostlist_ops_t none = { .contains = _in_no_list };
	bmc_conf_t *c = conf;
	conf_where_t w = { .file = "acct_gather.conf",
			   .key = "EnergyBMCPasswordFile" };
	bmc_map_ctx_t mc = { .node = "", .hl = &none };
	int rc;

	if (c->password_file && !c->poller &&
	    ((rc = conf_check_secret_file(&w, c->password_file, err,
					  err_len)) ||
	     (rc = _read_password(c, &w, err, err_len))))
		return rc;
	explicit_bzero(c->password, sizeof(c->password));
	c->have_password = false;
	if (!c->map_path)
		return 0;
	return se_conf_map_read(&bmc_map, c->map_path, &mc, err, err_len);
}

SE_CONF_DESC_DEFINE(bmc_conf_desc, bmc_conf, bmc_conf_t, "bmc",
		    "acct_gather.conf", _keys,
		    .check_files = _check_files, .given = _given);
