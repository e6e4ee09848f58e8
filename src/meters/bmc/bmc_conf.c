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

static const char *const _method_names[] = {
	[BMC_METHOD_AUTO] = "auto",
	[BMC_METHOD_DCMI] = "dcmi",
	[BMC_METHOD_SENSORS] = "sensors",
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

/* ------------------------------------------------------------ messages */

static int _fail(const conf_where_t *w, const char *value, char *err,
		 size_t err_len, int rc, const char *fmt, ...)
	__attribute__((format(printf, 6, 7)));

static int _fail(const conf_where_t *w, const char *value, char *err,
		 size_t err_len, int rc, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (!err || !err_len)
		return rc;
	n = snprintf(err, err_len, "%s: %s=%s: ", w->file, w->key,
		     value ? value : "");
	if (n >= 0 && (size_t) n < err_len) {
		va_start(ap, fmt);
		vsnprintf(err + n, err_len - n, fmt, ap);
		va_end(ap);
	}
	return rc;
}

/* ------------------------------------------------------------ setters */

static int _replace(char **dst, const char *value)
{
	char *copy = strdup(value);

	if (!copy)
		return -ENOMEM;
	free(*dst);
	*dst = copy;
	return 0;
}

static int _set_method(void *conf, const conf_where_t *w, const char *value,
		       char *err, size_t err_len)
{
	bmc_conf_t *c = conf;
	int i, rc;

	if ((rc = conf_enum(w, value, _method_names, &i, err, err_len)))
		return rc;
	c->method = (bmc_method_t) i;
	return 0;
}

static int _set_privilege(void *conf, const conf_where_t *w, const char *value,
			  char *err, size_t err_len)
{
	bmc_conf_t *c = conf;
	int i, rc;

	if ((rc = conf_enum(w, value, _priv_names, &i, err, err_len)))
		return rc;
	c->privilege = (bmc_priv_t) i;
	return 0;
}

static int _set_protocol(void *conf, const conf_where_t *w, const char *value,
			 char *err, size_t err_len)
{
	bmc_conf_t *c = conf;
	int i, rc;

	if ((rc = conf_enum(w, value, _proto_names, &i, err, err_len)))
		return rc;
	c->protocol = (bmc_proto_t) i;
	return 0;
}

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
		return _fail(w, value, err, err_len, -EINVAL,
			     "empty item in the list");
	if (c->n_sensors == BMC_MAX_SENSORS)
		return _fail(w, value, err, err_len, -ERANGE,
			     "more than %d sensors", BMC_MAX_SENSORS);
	if (_all_digits(item)) {
		s->by_id = true;
		s->record_id = (unsigned) strtoul(item, NULL, 10);
		if (s->record_id > 0xffff)
			return _fail(w, value, err, err_len, -ERANGE,
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

static int _set_host(void *conf, const conf_where_t *w, const char *value,
		     char *err, size_t err_len)
{
	bmc_conf_t *c = conf;

	if (!*value)
		return _fail(w, value, err, err_len, -EINVAL,
			     "empty (leave the key out for in-band)");
	return _replace(&c->host_tmpl, value);
}

static int _set_map(void *conf, const conf_where_t *w, const char *value,
		    char *err, size_t err_len)
{
	bmc_conf_t *c = conf;

	if (value[0] != '/')
		return _fail(w, value, err, err_len, -EINVAL,
			     "must be an absolute path");
	return _replace(&c->map_path, value);
}

static int _set_user(void *conf, const conf_where_t *w, const char *value,
		     char *err, size_t err_len)
{
	bmc_conf_t *c = conf;

	if (strlen(value) > 16)	/* IPMI 2.0 §22.28: 16-byte user names */
		return _fail(w, value, err, err_len, -ERANGE,
			     "longer than 16 characters");
	return _replace(&c->user, value);
}

static int _set_password_file(void *conf, const conf_where_t *w,
			      const char *value, char *err, size_t err_len)
{
	bmc_conf_t *c = conf;

	if (value[0] != '/')
		return _fail(w, value, err, err_len, -EINVAL,
			     "must be an absolute path");
	return _replace(&c->password_file, value);
}

static int _set_cipher_suite(void *conf, const conf_where_t *w,
			     const char *value, char *err, size_t err_len)
{
	bmc_conf_t *c = conf;
	uint64_t id;
	size_t i;
	int rc;

	if ((rc = conf_uint(w, value, 0, 17, &id, err, err_len)))
		return rc;
	for (i = 0; i < sizeof(_cipher_suites) / sizeof(_cipher_suites[0]); i++) {
		if (_cipher_suites[i] == id) {
			c->cipher_suite = (unsigned) id;
			return 0;
		}
	}
	return _fail(w, value, err, err_len, -EINVAL,
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
			rc = _fail(w, value, err, err_len, -EINVAL,
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
	return _replace(&c->workaround_names, value);
}

static int _set_frequency(void *conf, const conf_where_t *w, const char *value,
			  char *err, size_t err_len)
{
	bmc_conf_t *c = conf;

	return conf_seconds_ns(w, value, BMC_PERIOD_MIN_NS, BMC_PERIOD_MAX_NS,
			       &c->period_ns, err, err_len);
}

static int _set_timeout(void *conf, const conf_where_t *w, const char *value,
			char *err, size_t err_len)
{
	bmc_conf_t *c = conf;

	return conf_millis_ns(w, value, BMC_TIMEOUT_MIN_MS, BMC_TIMEOUT_MAX_MS,
			      &c->timeout_ns, err, err_len);
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

static int _set_sdr_cache_dir(void *conf, const conf_where_t *w,
			      const char *value, char *err, size_t err_len)
{
	bmc_conf_t *c = conf;

	if (value[0] != '/')
		return _fail(w, value, err, err_len, -EINVAL,
			     "must be an absolute path");
	return _replace(&c->sdr_cache_dir, value);
}

/* ------------------------------------------------------------ public */

void bmc_conf_init(bmc_conf_t *c)
{
	memset(c, 0, sizeof(*c));
	c->method = BMC_METHOD_AUTO;
	c->privilege = BMC_PRIV_USER;
	c->protocol = BMC_PROTO_2_0;
	c->cipher_suite = 3;	/* HMAC-SHA1, HMAC-SHA1-96, AES-CBC-128 */
	c->period_ns = SE_NS_PER_SEC;
	c->timeout_ns = 2000 * SE_NS_PER_MS;
	c->max_power_mw = 20000ULL * 1000;
}

void bmc_conf_free(bmc_conf_t *c)
{
	_free_sensors(c);
	free(c->host_tmpl);
	free(c->map_path);
	free(c->map_host);
	free(c->user);
	free(c->password_file);
	free(c->workaround_names);
	free(c->sdr_cache_dir);
	free(c->host);
	explicit_bzero(c->password, sizeof(c->password));
	bmc_conf_init(c);
}

/* Read the first line of the (already checked) password file. */
static int _read_password(bmc_conf_t *c, const conf_where_t *w, char *err,
			  size_t err_len)
{
	size_t max = c->protocol == BMC_PROTO_1_5 ? BMC_PASSWORD_MAX_1_5 :
						     BMC_PASSWORD_MAX_2_0;
	char line[128];
	FILE *f;
	size_t n;
	int e;

	if (!(f = fopen(c->password_file, "r"))) {
		e = errno;
		return _fail(w, c->password_file, err, err_len, -e, "%s",
			     strerror(e));
	}
	if (!fgets(line, sizeof(line), f))
		line[0] = '\0';
	fclose(f);
	n = strcspn(line, "\r\n");
	line[n] = '\0';
	if (n > max) {
		explicit_bzero(line, sizeof(line));
		return _fail(w, c->password_file, err, err_len, -ERANGE,
			     "the password is longer than %zu bytes (IPMI %s)",
			     max, _proto_names[c->protocol]);
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
	if (rc)
		return rc;
	return (c->host = strdup(host)) ? 0 : -ENOMEM;
}

/* ------------------------------------------------------------ map file */

/* What bmc_conf_resolve_map() looks for while the map is read. */
typedef struct {
	const char *node;
	const bmc_hostlist_ops_t *hl;
	unsigned lines;		/* entries seen */
	unsigned found_line;	/* 0: node on no line yet */
	char *host;		/* Host= of found_line */
} bmc_map_ctx_t;

static int _map_fail(const char *path, unsigned line, const conf_pair_t *p,
		     const char *why, char *err, size_t err_len)
{
	if (p)
		snprintf(err, err_len, "%s:%u: %s=%s: %s", path, line, p->key,
			 p->value, why);
	else
		snprintf(err, err_len, "%s:%u: %s", path, line, why);
	return -EINVAL;
}

const char *const bmc_map_keys[] = { "Nodes", "Host", NULL };

/* conf_line_fn: one "Nodes=... Host=..." line. */
static int _map_line(void *arg, const char *path, unsigned line,
		     const conf_pair_t *pairs, size_t n, char *err,
		     size_t err_len)
{
	bmc_map_ctx_t *mc = arg;
	const char *nodes = NULL, *host = NULL;
	size_t i;
	int in;

	for (i = 0; i < n; i++) {
		const conf_pair_t *p = &pairs[i];
		/* bmc_map_keys[0], [1] */
		const char **slot = !strcasecmp(p->key, bmc_map_keys[0]) ?
			&nodes : !strcasecmp(p->key, bmc_map_keys[1]) ?
			&host : NULL;

		if (!slot)
			return _map_fail(path, line, p,
					 "unknown key (known: Nodes, Host)",
					 err, err_len);
		if (*slot)
			return _map_fail(path, line, p, "given twice", err,
					 err_len);
		if (!*p->value)
			return _map_fail(path, line, p, "empty", err, err_len);
		*slot = p->value;
	}
	if (!nodes || !host)
		return _map_fail(path, line, NULL, nodes ? "no Host=" :
				 "no Nodes=", err, err_len);
	mc->lines++;
	if ((in = mc->hl->contains(mc->hl->arg, nodes, mc->node)) < 0) {
		snprintf(err, err_len,
			 "%s:%u: Nodes=%s: not a hostlist expression", path,
			 line, nodes);
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
	if (!(mc->host = strdup(host)))
		return -ENOMEM;
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
	c->map_host = NULL;
	c->map_line = 0;
	if (!c->map_path)
		return 0;
	if (!node) {
		snprintf(err, err_len, "%s: no node name to look up",
			 c->map_path);
		return -EINVAL;
	}
	rc = conf_read_pairs_file(c->map_path, _map_line, &mc, err, err_len);
	if (rc && rc != -EINVAL && rc != -ENOMEM)	/* cannot be read */
		snprintf(err, err_len, "acct_gather.conf: EnergyBMCMap=%s: %s",
			 c->map_path, strerror(-rc));
	if (!rc && !mc.lines) {
		snprintf(err, err_len, "%s: no entries", c->map_path);
		rc = -EINVAL;
	} else if (!rc && !mc.found_line && !c->host_tmpl) {
		snprintf(err, err_len,
			 "%s: node %s is on no line, and EnergyBMCHost is not set",
			 c->map_path, node);
		rc = -EINVAL;
	}
	if (rc) {
		free(mc.host);
		return rc;
	}
	c->map_host = mc.host;
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
	return _replace(&c->sdr_cache_dir, dir);
}

int bmc_conf_check(const bmc_conf_t *c, const char *file, char *err,
		   size_t err_len)
{
	conf_where_t w = { .file = file, .key = "EnergyBMCWorkaroundFlags" };

	if (c->protocol == BMC_PROTO_2_0 && c->workarounds_1_5 &&
	    !c->workarounds_2_0)
		return _fail(&w, c->workaround_names, err, err_len, -EINVAL,
			     "only IPMI 1.5 workarounds, but EnergyBMCProtocol is 2.0");
	if (c->protocol == BMC_PROTO_1_5 && c->workarounds_2_0 &&
	    !c->workarounds_1_5)
		return _fail(&w, c->workaround_names, err, err_len, -EINVAL,
			     "only IPMI 2.0 workarounds, but EnergyBMCProtocol is 1.5");
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
	    (rc = _finish_sdr_cache_dir(c, file, node, err, err_len)))
		return rc;
	if (!c->password_file)
		return 0;
	rc = conf_check_secret_file(&w, c->password_file, err, err_len);
	if (rc)
		return rc;
	return _read_password(c, &w, err, err_len);
}

const char *bmc_method_name(bmc_method_t m)
{
	return (unsigned) m <= BMC_METHOD_SENSORS ? _method_names[m] : "?";
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
	rc |= _dup(&dst->user, src->user);
	rc |= _dup(&dst->password_file, src->password_file);
	rc |= _dup(&dst->workaround_names, src->workaround_names);
	rc |= _dup(&dst->sdr_cache_dir, src->sdr_cache_dir);
	rc |= _dup(&dst->host, src->host);
	if (rc) {
		bmc_conf_free(dst);
		return -ENOMEM;
	}
	return 0;
}

/* ------------------------------------------------------------ printers */

static const char *_or(const char *s, const char *dflt)
{
	return s ? s : dflt;
}

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

SE_CONF_SHOW(_show_method, bmc_conf_t, "%s", bmc_method_name(c->method))
SE_CONF_SHOW(_show_host, bmc_conf_t, "%s", _or(c->host_tmpl, "(in-band)"))
SE_CONF_SHOW(_show_map, bmc_conf_t, "%s", _or(c->map_path, "(none)"))
SE_CONF_SHOW(_show_user, bmc_conf_t, "%s", _or(c->user, "(null user)"))
/* the path, never the secret */
SE_CONF_SHOW(_show_password_file, bmc_conf_t,
	     "%s", _or(c->password_file, "(none)"))
SE_CONF_SHOW(_show_privilege, bmc_conf_t, "%s", bmc_priv_name(c->privilege))
SE_CONF_SHOW(_show_protocol, bmc_conf_t, "%s", _proto_names[c->protocol])
SE_CONF_SHOW(_show_cipher_suite, bmc_conf_t, "%u", c->cipher_suite)
SE_CONF_SHOW(_show_workarounds, bmc_conf_t,
	     "%s", _or(c->workaround_names, "(none)"))
SE_CONF_SHOW(_show_frequency, bmc_conf_t,
	     "%g", (double) c->period_ns / SE_NS_PER_SEC)
SE_CONF_SHOW(_show_timeout, bmc_conf_t,
	     "%llu", (unsigned long long) (c->timeout_ns / SE_NS_PER_MS))
SE_CONF_SHOW(_show_max_watts, bmc_conf_t,
	     "%llu", (unsigned long long) (c->max_power_mw / 1000))
SE_CONF_SHOW(_show_sdr_cache_dir, bmc_conf_t,
	     "%s", _or(c->sdr_cache_dir, BMC_SDR_CACHE_DIR_DEFAULT))

/* ------------------------------------------------------------ the keys */

/* The man page documents the keys in this order. */
static const se_conf_key_t _keys[] = {
	SE_KEY_FN("EnergyBMCMethod", _set_method, _show_method),
	SE_KEY_FN("EnergyBMCSensors", _set_sensors, _show_sensors),
	SE_KEY_FN("EnergyBMCHost", _set_host, _show_host),
	SE_KEY_FN("EnergyBMCMap", _set_map, _show_map),
	SE_KEY_FN("EnergyBMCUser", _set_user, _show_user),
	SE_KEY_FN("EnergyBMCPasswordFile", _set_password_file,
		  _show_password_file),
	SE_KEY_FN("EnergyBMCPrivilege", _set_privilege, _show_privilege),
	SE_KEY_FN("EnergyBMCProtocol", _set_protocol, _show_protocol),
	SE_KEY_FN("EnergyBMCCipherSuite", _set_cipher_suite,
		  _show_cipher_suite),
	SE_KEY_FN("EnergyBMCWorkaroundFlags", _set_workarounds,
		  _show_workarounds),
	SE_KEY_FN("EnergyBMCFrequency", _set_frequency, _show_frequency),
	SE_KEY_FN("EnergyBMCTimeout", _set_timeout, _show_timeout),
	SE_KEY_FN("EnergyBMCMaxWatts", _set_max_watts, _show_max_watts),
	SE_KEY_FN("EnergyBMCSdrCacheDir", _set_sdr_cache_dir,
		  _show_sdr_cache_dir),
};

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
 * the password file (owner, mode, length; the secret is wiped at once)
 * and the map's syntax.
 */
static int _check_files(void *conf, char *err, size_t err_len)
{
	static const bmc_hostlist_ops_t none = { _in_no_list, NULL };
	bmc_conf_t *c = conf;
	conf_where_t w = { .file = "acct_gather.conf",
			   .key = "EnergyBMCPasswordFile" };
	bmc_map_ctx_t mc = { .node = "", .hl = &none };
	int rc;

	if (c->password_file &&
	    ((rc = conf_check_secret_file(&w, c->password_file, err,
					  err_len)) ||
	     (rc = _read_password(c, &w, err, err_len))))
		return rc;
	explicit_bzero(c->password, sizeof(c->password));
	c->have_password = false;
	if (!c->map_path)
		return 0;
	rc = conf_read_pairs_file(c->map_path, _map_line, &mc, err, err_len);
	if (rc && rc != -EINVAL && rc != -ENOMEM)
		snprintf(err, err_len, "acct_gather.conf: EnergyBMCMap=%s: %s",
			 c->map_path, strerror(-rc));
	if (!rc && !mc.lines) {
		snprintf(err, err_len, "%s: no entries", c->map_path);
		rc = -EINVAL;
	}
	return rc;
}

SE_CONF_DESC_DEFINE(bmc_conf_desc, bmc_conf, bmc_conf_t, "bmc",
		    "acct_gather.conf", _keys,
		    .check_files = _check_files);
