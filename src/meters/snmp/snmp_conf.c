/*
 * snmp_conf.c - acct_gather_energy/snmp's keys, map and secrets
 * (snmp_conf.h).
 */
#ifdef HAVE_CONFIG_H
#include "se_config.h"
#endif

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "conf.h"
#include "conf_desc.h"
#include "se_array.h"
#include "snmp_conf.h"
#include "se_time.h"

/* ------------------------------------------------- acct_gather.conf keys */

static const se_conf_key_t keys[] = {
	SE_KEY_PATH("EnergySNMPMap", snmp_conf_t, map_path, NULL, ""),
	SE_KEY_PATH("EnergySNMPSecrets", snmp_conf_t, secrets_path, NULL, ""),
	SE_KEY_SECONDS("EnergySNMPFrequency", snmp_conf_t, period_ns,
		       100 * SE_NS_PER_MS, 3600 * SE_NS_PER_SEC),
	SE_KEY_MILLIS("EnergySNMPTimeout", snmp_conf_t, timeout_ns, 10, 60000),
	SE_KEY_REAL("EnergySNMPMaxPower", snmp_conf_t, max_power_w, 1, 1e6),
	/* HOST:PORT ([V6]:PORT), PORT 1-65535 */
	SE_KEY_STR("EnergySNMPPoller", snmp_conf_t, poller, conf_poller_addr,
		   ""),
};

void snmp_conf_init(snmp_conf_t *c)
{
	memset(c, 0, sizeof(*c));
	c->period_ns = SNMP_DEF_PERIOD_NS;
	c->timeout_ns = SNMP_DEF_TIMEOUT_NS;
	c->max_power_w = SNMP_DEF_MAX_POWER_W;
}

void snmp_conf_free(snmp_conf_t *c)
{
	free(c->map_path);
	free(c->secrets_path);
	free(c->poller);
	if (c->pdus)
		memset(c->pdus, 0, c->n_pdus * sizeof(*c->pdus));
	free(c->pdus);
	for (size_t i = 0; i < c->n_lines; i++) {
		free(c->lines[i].nodes);
		free(c->lines[i].outlets);
	}
	free(c->lines);
	snmp_conf_init(c);
}

int snmp_conf_check(snmp_conf_t *c, const char *file, char *err,
		    size_t err_len)
{
	if (!c->map_path) {
		snprintf(err, err_len, "%s: EnergySNMPMap is required", file);
		return -EINVAL;
	}
	if (!c->secrets_path && !c->poller) {
		snprintf(err, err_len, "%s: EnergySNMPSecrets is required "
			 "(unless EnergySNMPPoller is set)", file);
		return -EINVAL;
	}
	if (c->timeout_ns > c->period_ns) {
		snprintf(err, err_len,
			 "%s: EnergySNMPTimeout=%llu: longer than EnergySNMPFrequency (%gs)",
			 file, (unsigned long long) (c->timeout_ns / SE_NS_PER_MS),
			 (double) c->period_ns / 1e9);
		return -EINVAL;
	}
	return 0;
}

static int _check_files(void *conf, char *err, size_t err_len)
{
	snmp_conf_t *c = conf;

	/* with a poller, a node reads the map only: the poller has the
	 * secrets */
	return c->poller ? snmp_conf_read_map(c, err, err_len) :
			   snmp_conf_read_files(c, err, err_len);
}

SE_CONF_DESC_DEFINE(snmp_conf_desc, snmp_conf, snmp_conf_t, "snmp",
		    SNMP_CONF_FILE, keys, .check_files = _check_files);

/* ------------------------------------------------------------ the map */

static int _fail(const char *path, unsigned line, char *err, size_t len,
		 const char *fmt, ...) __attribute__((format(printf, 5, 6)));

static int _fail(const char *path, unsigned line, char *err, size_t len,
		 const char *fmt, ...)
{
	char why[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(why, sizeof(why), fmt, ap);
	va_end(ap);
	snprintf(err, len, "%s:%u: %s", path, line, why);
	return -EINVAL;
}

static int _copy(char *dst, size_t n, const char *v, const char *path,
		 unsigned line, const char *key, char *err, size_t len)
{
	if (!*v || strlen(v) >= n)
		return _fail(path, line, err, len, "%s=%s: empty or too long",
			     key, v);
	memcpy(dst, v, strlen(v) + 1);
	return 0;
}

/* Model=custom's keys. */
static int _custom_key(snmp_conf_pdu_t *p, const conf_pair_t *kv,
		       const char *path, unsigned line, char *err, size_t len)
{
	conf_where_t w = { path, kv->key, line };
	snmp_oid_t o = { .len = 0 };
	uint64_t u;

	if (!strcasecmp(kv->key, "PowerOID") ||
	    !strcasecmp(kv->key, "EnergyOID")) {
		char *dst = !strcasecmp(kv->key, "PowerOID") ? p->power_oid :
							       p->energy_oid;

		if (snmp_oid_append(&o, kv->value))
			return _fail(path, line, err, len,
				     "%s=%s: not an OID (digits and dots)",
				     kv->key, kv->value);
		return _copy(dst, sizeof(p->power_oid), kv->value, path, line,
			     kv->key, err, len);
	}
	if (!strcasecmp(kv->key, "PowerScale"))
		return conf_double(&w, kv->value, 1e-6, 1e6,
				   &p->custom.power_w, err, len);
	if (!strcasecmp(kv->key, "EnergyScale"))
		return conf_double(&w, kv->value, 1e-6, 1e9,
				   &p->custom.energy_j, err, len);
	if (!strcasecmp(kv->key, "EnergyWidth")) {
		int rc = conf_uint(&w, kv->value, 16, 64, &u, err, len);

		p->custom.energy_width = (unsigned) u;
		return rc;
	}
	return 1;	/* not a custom key */
}

static int _pdu_line(snmp_conf_t *c, const conf_pair_t *pairs, size_t n,
		     const char *path, unsigned line, size_t *cap, char *err,
		     size_t len)
{
	snmp_conf_pdu_t p;
	const char *model = NULL;
	char known[256];
	int rc;

	memset(&p, 0, sizeof(p));
	p.line = line;
	p.custom = (snmp_model_t) { .name = "custom", .mib = "custom map",
				    .power_suffix = "", .energy_suffix = "",
				    .power_w = 1, .energy_j = 3600,
				    .energy_width = 32 };
	for (size_t i = 0; i < n; i++) {
		const conf_pair_t *kv = &pairs[i];

		if (!strcasecmp(kv->key, "PDU"))
			rc = _copy(p.pdu.name, sizeof(p.pdu.name), kv->value,
				   path, line, kv->key, err, len);
		else if (!strcasecmp(kv->key, "Host"))
			rc = _copy(p.pdu.host, sizeof(p.pdu.host), kv->value,
				   path, line, kv->key, err, len);
		else if (!strcasecmp(kv->key, "Context"))
			rc = _copy(p.pdu.context, sizeof(p.pdu.context),
				   kv->value, path, line, kv->key, err, len);
		else if (!strcasecmp(kv->key, "Unit"))
			rc = _copy(p.unit, sizeof(p.unit), kv->value, path,
				   line, kv->key, err, len);
		else if (!strcasecmp(kv->key, "Model"))
			model = kv->value, rc = 0;
		else if ((rc = _custom_key(&p, kv, path, line, err, len)) == 1)
			return _fail(path, line, err, len,
				     "%s=%s: unknown key on a PDU line (known: PDU, Host, Model, Unit, Context, PowerOID, EnergyOID, PowerScale, EnergyScale, EnergyWidth)",
				     kv->key, kv->value);
		if (rc)
			return rc;
	}
	if (!p.pdu.host[0])
		return _fail(path, line, err, len, "PDU=%s: no Host=%s",
			     p.pdu.name, "");
	if (!model)
		return _fail(path, line, err, len, "PDU=%s: no Model=%s",
			     p.pdu.name, "");
	for (size_t i = 0; i < c->n_pdus; i++)
		if (!strcmp(c->pdus[i].pdu.name, p.pdu.name))
			return _fail(path, line, err, len,
				     "PDU=%s: defined twice%s", p.pdu.name, "");
	if (!strcasecmp(model, "custom")) {
		if (!p.power_oid[0])
			return _fail(path, line, err, len,
				     "PDU=%s: Model=custom needs PowerOID=%s",
				     p.pdu.name, "");
	} else if (!(p.model = snmp_model_find(model))) {
		snmp_model_names(known, sizeof(known));
		return _fail(path, line, err, len,
			     "Model=%s: unknown model (known: %s, custom)",
			     model, known);
	} else if (p.power_oid[0] || p.energy_oid[0]) {
		return _fail(path, line, err, len,
			     "Model=%s: PowerOID/EnergyOID are for Model=custom%s",
			     model, "");
	}
	if (!p.unit[0] && p.model && p.model->unit_default)
		snprintf(p.unit, sizeof(p.unit), "%s", p.model->unit_default);
	if (se_array_room(&c->pdus, c->n_pdus, cap, sizeof(*c->pdus), 8))
		return -ENOMEM;
	c->pdus[c->n_pdus++] = p;
	return 0;
}

static int _nodes_line(snmp_conf_t *c, const conf_pair_t *pairs, size_t n,
		       const char *path, unsigned line, size_t *cap,
		       char *err, size_t len)
{
	snmp_conf_nodes_t e = { .line = line, .share_equal = true };
	int rc = 0;

	for (size_t i = 0; i < n && !rc; i++) {
		const conf_pair_t *kv = &pairs[i];
		conf_where_t w = { path, kv->key, line };

		if (!strcasecmp(kv->key, "Nodes"))
			rc = conf_set_str(&e.nodes, kv->value);
		else if (!strcasecmp(kv->key, "Outlets"))
			rc = conf_set_str(&e.outlets, kv->value);
		else if (!strcasecmp(kv->key, "Share")) {
			e.share_equal = !strcasecmp(kv->value, "equal");
			if (!e.share_equal)
				rc = conf_double(&w, kv->value, 1e-6, 1.0,
						 &e.share, err, len);
		} else
			rc = _fail(path, line, err, len,
				   "%s=%s: unknown key on a Nodes line (known: Nodes, Outlets, Share)",
				   kv->key, kv->value);
	}
	if (!rc && (!e.outlets || !*e.outlets))
		rc = _fail(path, line, err, len, "Nodes=%s: no Outlets=%s",
			   e.nodes, "");
	if (!rc && se_array_room(&c->lines, c->n_lines, cap,
				 sizeof(*c->lines), 8))
		rc = -ENOMEM;
	if (rc) {
		free(e.nodes);
		free(e.outlets);
		return rc;
	}
	c->lines[c->n_lines++] = e;
	return 0;
}

typedef struct {
	snmp_conf_t *c;
	size_t pdu_cap, line_cap;
} map_ctx_t;

static int _map_line(void *arg, const char *path, unsigned line,
		     const conf_pair_t *pairs, size_t n, char *err, size_t len)
{
	map_ctx_t *mc = arg;

	if (!n)
		return 0;
	if (!strcasecmp(pairs[0].key, "PDU"))
		return _pdu_line(mc->c, pairs, n, path, line, &mc->pdu_cap,
				 err, len);
	if (!strcasecmp(pairs[0].key, "Nodes"))
		return _nodes_line(mc->c, pairs, n, path, line, &mc->line_cap,
				   err, len);
	return _fail(path, line, err, len,
		     "%s=%s: a line begins with PDU= or Nodes=", pairs[0].key,
		     pairs[0].value);
}

/* -------------------------------------------------------- the secrets */

static snmp_conf_pdu_t *_pdu(const snmp_conf_t *c, const char *name)
{
	for (size_t i = 0; i < c->n_pdus; i++)
		if (!strcmp(c->pdus[i].pdu.name, name))
			return &c->pdus[i];
	return NULL;
}

/* A secrets line's key: never its value in a message. */
static int _secret_key(snmp_secret_t *s, const char *k, const char *v,
		       const char *path, unsigned line, char *err, size_t len)
{
	char *dst = NULL;

	if (!strcasecmp(k, "Community"))
		dst = s->community;
	else if (!strcasecmp(k, "User"))
		dst = s->user, s->version = SNMP_V3;
	else if (!strcasecmp(k, "AuthKey"))
		dst = s->auth_key;
	else if (!strcasecmp(k, "PrivKey"))
		dst = s->priv_key;
	else if (!strcasecmp(k, "AuthProto")) {
		if (!strcasecmp(v, "SHA") || !strcasecmp(v, "SHA1"))
			s->auth = SNMP_AUTH_SHA;
		else if (!strcasecmp(v, "SHA256") || !strcasecmp(v, "SHA-256"))
			s->auth = SNMP_AUTH_SHA256;
		else
			return _fail(path, line, err, len,
				     "AuthProto=%s: must be SHA or SHA256%s", v,
				     "");
		return 0;
	} else if (!strcasecmp(k, "PrivProto")) {
		if (!strcasecmp(v, "AES") || !strcasecmp(v, "AES128"))
			s->priv = SNMP_PRIV_AES;
		else if (!strcasecmp(v, "none"))
			s->priv = SNMP_PRIV_NONE;
		else
			return _fail(path, line, err, len,
				     "PrivProto=%s: must be AES or none%s", v,
				     "");
		return 0;
	} else {
		return _fail(path, line, err, len,
			     "%s: unknown key (known: PDU, Community, User, AuthProto, AuthKey, PrivProto, PrivKey)%s",
			     k, "");
	}
	if (!*v || strlen(v) >= SNMP_SECRET_MAX)
		return _fail(path, line, err, len,
			     "%s: empty or longer than 127 characters%s", k,
			     "");
	memcpy(dst, v, strlen(v) + 1);
	return 0;
}

static int _secret_check(const snmp_secret_t *s, const char *pdu,
			 const char *path, unsigned line, char *err,
			 size_t len)
{
	if (s->version == SNMP_V2C && !s->community[0])
		return _fail(path, line, err, len,
			     "PDU=%s: neither Community= nor User=%s", pdu, "");
	if (s->version == SNMP_V3 && s->community[0])
		return _fail(path, line, err, len,
			     "PDU=%s: Community= and User= both given%s", pdu,
			     "");
	if (s->version == SNMP_V3 && strlen(s->auth_key) < 8)
		return _fail(path, line, err, len,
			     "PDU=%s: AuthKey missing or shorter than 8 characters%s",
			     pdu, "");
	if (s->version == SNMP_V3 && s->priv == SNMP_PRIV_AES &&
	    strlen(s->priv_key) < 8)
		return _fail(path, line, err, len,
			     "PDU=%s: PrivKey missing or shorter than 8 characters (PrivProto=none for authNoPriv)%s",
			     pdu, "");
	return 0;
}

/* One line of the secrets file, split on blanks: "PDU=x Key=v ...". */
static int _secrets_line(snmp_conf_t *c, char *buf, const char *path,
			 unsigned line, char *err, size_t len)
{
	snmp_secret_t s;
	char *save = NULL, *tok, pdu[SNMP_NAME_MAX] = "";
	int rc = 0;

	memset(&s, 0, sizeof(s));
	for (tok = strtok_r(buf, " \t\r\n", &save); tok && !rc;
	     tok = strtok_r(NULL, " \t\r\n", &save)) {
		char *eq = strchr(tok, '=');

		if (*tok == '#')
			break;
		if (!eq || eq == tok) {
			rc = _fail(path, line, err, len,
				   "a word without KEY=VALUE (not shown: it may be a secret)%s%s",
				   "", "");
			break;
		}
		*eq = '\0';
		if (!strcasecmp(tok, "PDU"))
			snprintf(pdu, sizeof(pdu), "%s", eq + 1);
		else
			rc = _secret_key(&s, tok, eq + 1, path, line, err, len);
	}
	if (!rc && (pdu[0] || s.community[0] || s.user[0])) {
		if (!pdu[0])
			rc = _fail(path, line, err, len, "no PDU=%s%s", "", "");
		else if (!(rc = _secret_check(&s, pdu, path, line, err, len)))
			for (size_t i = 0; i < c->n_pdus; i++) {
				snmp_conf_pdu_t *p = &c->pdus[i];

				if (strcmp(pdu, "*") ?
				    strcmp(pdu, p->pdu.name) : p->has_secret)
					continue;
				p->pdu.secret = s;
				p->has_secret = true;
			}
	}
	memset(&s, 0, sizeof(s));
	return rc;
}

static int _read_secrets(snmp_conf_t *c, char *err, size_t len)
{
	conf_where_t w = { SNMP_CONF_FILE, "EnergySNMPSecrets", 0 };
	char buf[2048];
	unsigned line = 0;
	FILE *f;
	int rc;

	if ((rc = conf_check_secret_file(&w, c->secrets_path, err, len)))
		return rc;
	if (!(f = fopen(c->secrets_path, "re"))) {
		rc = -errno;
		snprintf(err, len, "%s: EnergySNMPSecrets=%s: %s",
			 SNMP_CONF_FILE, c->secrets_path, strerror(-rc));
		return rc;
	}
	rc = 0;
	/* named PDUs first, then PDU=* for the rest: two passes */
	for (int pass = 0; pass < 2 && !rc; pass++) {
		rewind(f);
		line = 0;
		while (!rc && fgets(buf, sizeof(buf), f)) {
			bool star;

			line++;
			star = strstr(buf, "PDU=*") != NULL;
			if (star == (pass == 0))
				continue;
			rc = _secrets_line(c, buf, c->secrets_path, line, err,
					   len);
		}
	}
	memset(buf, 0, sizeof(buf));
	fclose(f);
	for (size_t i = 0; !rc && i < c->n_pdus; i++)
		if (!c->pdus[i].has_secret)
			rc = _fail(c->secrets_path, 0, err, len,
				   "no line for PDU=%s (nor PDU=*)%s",
				   c->pdus[i].pdu.name, "");
	return rc;
}

/* A custom model's OIDs are its PDU line's: pointed at once the map is
 * read (c->pdus moves while it grows), not by every resolve. */
static void _custom_oids(snmp_conf_t *c)
{
	for (size_t i = 0; i < c->n_pdus; i++) {
		snmp_conf_pdu_t *p = &c->pdus[i];

		p->custom.power_oid = p->power_oid;
		p->custom.energy_oid = p->energy_oid[0] ? p->energy_oid : NULL;
	}
}

int snmp_conf_read_files(snmp_conf_t *c, char *err, size_t err_len)
{
	int rc = snmp_conf_read_map(c, err, err_len);

	if (rc)
		return rc;
	if (!c->secrets_path) {
		snprintf(err, err_len, "%s: EnergySNMPSecrets is required",
			 SNMP_CONF_FILE);
		return -EINVAL;
	}
	return _read_secrets(c, err, err_len);
}

int snmp_conf_read_map(snmp_conf_t *c, char *err, size_t err_len)
{
	map_ctx_t mc = { c, c->n_pdus, c->n_lines };
	int rc;

	if ((rc = conf_read_pairs_file(c->map_path, _map_line, &mc, err,
				       err_len)))
		return rc;
	if (!c->n_pdus || !c->n_lines) {
		snprintf(err, err_len, "%s: no PDU= line or no Nodes= line",
			 c->map_path);
		return -EINVAL;
	}
	_custom_oids(c);
	/* every outlet names a PDU of the map */
	for (size_t i = 0; i < c->n_lines; i++) {
		char *dup = strdup(c->lines[i].outlets), *save = NULL, *tok;

		if (!dup)
			return -ENOMEM;
		for (tok = strtok_r(dup, ",", &save); tok && !rc;
		     tok = strtok_r(NULL, ",", &save)) {
			char *colon = strchr(tok, ':');
			snmp_oid_t o = { .len = 0 };

			if (!colon || colon == tok || !colon[1] ||
			    snmp_oid_append(&o, colon + 1))
				rc = _fail(c->map_path, c->lines[i].line, err,
					   err_len,
					   "Outlets=%s: '%s' is not PDU:OUTLET",
					   c->lines[i].outlets, tok);
			else if (*colon = '\0', !_pdu(c, tok))
				rc = _fail(c->map_path, c->lines[i].line, err,
					   err_len,
					   "Outlets: PDU %s is not defined by a PDU= line%s",
					   tok, "");
		}
		free(dup);
		if (rc)
			return rc;
	}
	return 0;
}

/* ------------------------------------------------------------ resolve */

/* Does line e list pdu:outlet? */
static bool _lists(const snmp_conf_nodes_t *e, const char *want)
{
	size_t n = strlen(want);
	const char *p = e->outlets;

	while ((p = strstr(p, want))) {
		bool starts = p == e->outlets || p[-1] == ',';
		bool ends = p[n] == '\0' || p[n] == ',';

		if (starts && ends)
			return true;
		p += n;
	}
	return false;
}

/* The node's share of the outlet "pdu:index" (line e names the node). */
static int _share(const snmp_conf_t *c, const snmp_conf_nodes_t *mine,
		  const char *outlet, const snmp_hostlist_ops_t *hl,
		  double *share, char *err, size_t len)
{
	double fixed = 0;
	long equal = 0, k;

	if (!mine->share_equal) {
		*share = mine->share;
		return 0;
	}
	for (size_t i = 0; i < c->n_lines; i++) {
		const snmp_conf_nodes_t *e = &c->lines[i];
		const char *expr = e->nodes;

		if (!_lists(e, outlet))
			continue;
		if ((k = hl->count(hl->arg, &expr, 1)) < 0)
			return _fail(c->map_path, e->line, err, len,
				     "Nodes=%s: not a hostlist%s", e->nodes,
				     "");
		if (e->share_equal)
			equal += k;
		else
			fixed += e->share * (double) k;
	}
	if (equal <= 0 || fixed >= 1.0 - 1e-9)
		return _fail(c->map_path, mine->line, err, len,
			     "outlet %s: the fixed shares leave nothing for Share=equal%s",
			     outlet, "");
	*share = (1.0 - fixed) / (double) equal;
	return 0;
}

static int _add_outlet(const snmp_conf_t *c, const snmp_conf_nodes_t *e,
		       const char *outlet, const snmp_hostlist_ops_t *hl,
		       snmp_target_t *t, char *err, size_t len)
{
	char name[SNMP_NAME_MAX];
	const char *colon = strchr(outlet, ':');
	const snmp_conf_pdu_t *p;
	snmp_outlet_t *o;
	size_t k;
	int rc;

	snprintf(name, sizeof(name), "%.*s", (int) (colon - outlet), outlet);
	p = _pdu(c, name);
	if (t->n_outlets >= SNMP_TARGET_OUTLETS)
		return _fail(c->map_path, e->line, err, len,
			     "more than %d outlets for one node",
			     SNMP_TARGET_OUTLETS);
	for (k = 0; k < t->n_pdus; k++)
		if (!strcmp(t->pdus[k].name, name))
			break;
	if (k == t->n_pdus)
		t->pdus[t->n_pdus++] = p->pdu;
	o = &t->outlets[t->n_outlets];
	memset(o, 0, sizeof(*o));
	o->pdu = k;
	o->model = p->model ? p->model : &p->custom;
	o->max_power_w = c->max_power_w;
	if ((size_t) snprintf(o->index, sizeof(o->index), "%s%s%s", p->unit,
			      p->unit[0] ? "." : "", colon + 1) >=
	    sizeof(o->index))
		return _fail(c->map_path, e->line, err, len,
			     "outlet %s: index too long", outlet);
	if ((rc = _share(c, e, outlet, hl, &o->share, err, len)))
		return rc;
	t->n_outlets++;
	return 0;
}

int snmp_conf_resolve(const snmp_conf_t *c, const char *node,
		      const snmp_hostlist_ops_t *hl, snmp_target_t *t,
		      char *err, size_t err_len)
{
	int rc = 0;

	memset(t, 0, sizeof(*t));
	for (size_t i = 0; i < c->n_lines && !rc; i++) {
		const snmp_conf_nodes_t *e = &c->lines[i];
		char *dup, *save = NULL, *tok;
		int in = hl->contains(hl->arg, e->nodes, node);

		if (in < 0)
			return _fail(c->map_path, e->line, err, err_len,
				     "Nodes=%s: not a hostlist%s", e->nodes,
				     "");
		if (!in)
			continue;
		if (!(dup = strdup(e->outlets)))
			return -ENOMEM;
		for (tok = strtok_r(dup, ",", &save); tok && !rc;
		     tok = strtok_r(NULL, ",", &save))
			rc = _add_outlet(c, e, tok, hl, t, err, err_len);
		free(dup);
	}
	if (!rc && !t->n_outlets) {
		snprintf(err, err_len, "%s: no Nodes= line names %s",
			 c->map_path, node);
		return -ENOENT;
	}
	return rc;
}
