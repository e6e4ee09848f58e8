/*
 * rf_source.c - discovery of a Redfish chassis' energy and power, and the
 * reading of them (rf_source.h).
 */
#ifdef HAVE_CONFIG_H
#include "se_config.h"
#endif

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rf_source.h"

#define RF_ROOT		"/redfish/v1"
#define RF_MAX_CHASSIS	16

/* A number in a document: an excerpt or a Sensor (an object whose
 * Reading is the number) or a plain property. */
typedef struct {
	const char *path;
	rf_quantity_t q;
} rf_field_t;

static const rf_field_t _energy_fields[] = {
	{ "EnergyJoules", RF_Q_JOULES },
	{ "EnergykWh", RF_Q_KWH },
};

static const rf_field_t _power_fields[] = {
	{ "PowerWatts", RF_Q_WATTS },
	{ "InputPowerWatts", RF_Q_WATTS },
	{ "PowerControl/0/PowerConsumedWatts", RF_Q_WATTS },
};

/* Sensor ReadingTypes, best first */
static const rf_field_t _sensor_types[] = {
	{ "EnergyJoules", RF_Q_JOULES },
	{ "EnergykWh", RF_Q_KWH },
	{ "EnergyWh", RF_Q_WH },
	{ "Power", RF_Q_WATTS },
};

/* The documents discovery has read, each once. */
typedef struct {
	const rf_fetcher_t *f;
	char *msg;
	size_t msg_len;
	json_object *chassis;
	char chassis_uri[RF_URI_MAX];
	json_object *env;			/* EnvironmentMetrics */
	char env_uri[RF_URI_MAX];
	bool sensors_read;
	json_object *sensors[RF_MAX_MEMBERS];	/* Sensor resources */
	char sensor_uris[RF_MAX_MEMBERS][RF_URI_MAX];
	size_t n_sensors;
	bool psus_read;
	json_object *psus[RF_MAX_PROBES];	/* supplies' Metrics */
	char psu_uris[RF_MAX_PROBES][RF_URI_MAX];
	size_t n_psus;
	bool psus_complete;			/* every supply has Metrics */
	json_object *legacy;			/* Power */
	char legacy_uri[RF_URI_MAX];
} rf_disc_t;

/* ------------------------------------------------------------ helpers */

const char *rf_quantity_name(rf_quantity_t q)
{
	switch (q) {
	case RF_Q_JOULES:
		return "EnergyJoules";
	case RF_Q_WH:
		return "EnergyWh";
	case RF_Q_KWH:
		return "EnergykWh";
	case RF_Q_WATTS:
		return "W";
	}
	return "?";
}

/* Append text to buf (len its size), after sep when buf has some. */
static void _append(char *buf, size_t len, const char *sep,
		    const char *text)
{
	size_t n = strlen(buf), ls = n ? strlen(sep) : 0, lt = strlen(text);

	if (n + ls + lt >= len)
		return;
	memcpy(buf + n, sep, ls);
	memcpy(buf + n + ls, text, lt + 1);
}

static void _note(rf_source_t *s, const char *text)
{
	_append(s->notes, sizeof(s->notes), "; ", text);
}

/* Fetch uri; -ENOENT (absent) leaves *doc NULL and returns 0. */
static int _get(rf_disc_t *d, const char *uri, json_object **doc)
{
	int rc = d->f->fetch(d->f->arg, uri, doc, d->msg, d->msg_len);

	if (rc == -ENOENT) {
		*doc = NULL;
		d->msg[0] = '\0';
		return 0;
	}
	return rc;
}

/* Fetch the resource linked at path in doc (none: *out NULL, 0). */
static int _follow(rf_disc_t *d, json_object *doc, const char *path,
		   char *uri, json_object **out)
{
	*out = NULL;
	if (!doc || !rf_json_link(doc, path, uri, RF_URI_MAX))
		return 0;
	return _get(d, uri, out);
}

/* The number of a field at path: an object's Reading, or the number. */
static bool _field_number(json_object *doc, const char *path, double *v,
			  char *text, size_t text_len)
{
	json_object *n = rf_json_at(doc, path);
	char sub[96];

	if (n && json_object_is_type(n, json_type_object)) {
		snprintf(sub, sizeof(sub), "%s%sReading", path,
			 *path ? "/" : "");
		return rf_json_number(doc, sub, v, text, text_len);
	}
	return rf_json_number(doc, path, v, text, text_len);
}

static void _series_one(rf_series_t *s, const char *what, rf_quantity_t q,
			const char *uri, const char *path)
{
	memset(s, 0, sizeof(*s));
	s->what = what;
	s->q = q;
	snprintf(s->probes[0].uri, RF_URI_MAX, "%s", uri);
	snprintf(s->probes[0].path, sizeof(s->probes[0].path), "%s", path);
	s->n = 1;
}

/* The first of fields that doc has, as a series at uri. */
static bool _doc_series(json_object *doc, const char *uri,
			const rf_field_t *fields, size_t n_fields,
			const char *const whats[], rf_series_t *out)
{
	double v;
	size_t i;

	for (i = 0; doc && i < n_fields; i++)
		if (_field_number(doc, fields[i].path, &v, NULL, 0)) {
			_series_one(out, whats[i], fields[i].q, uri,
				    fields[i].path);
			return true;
		}
	return false;
}

/* ------------------------------------------------------------ chassis */

static int _pick_chassis(rf_disc_t *d, const char *sel)
{
	json_object *root = NULL, *coll = NULL, *one;
	char uri[RF_URI_MAX], cand[RF_URI_MAX] = "", ids[160] = "";
	size_t i, n, outer = 0;
	int rc;

	if (sel && sel[0] == '/') {
		snprintf(d->chassis_uri, RF_URI_MAX, "%s", sel);
		return 0;
	}
	if (sel) {
		snprintf(d->chassis_uri, RF_URI_MAX, RF_ROOT "/Chassis/%s",
			 sel);
		return 0;
	}
	if ((rc = _get(d, RF_ROOT, &root)))
		return rc;
	if (!root || !rf_json_link(root, "Chassis", uri, sizeof(uri)))
		snprintf(uri, sizeof(uri), RF_ROOT "/Chassis");
	json_object_put(root);
	if ((rc = _get(d, uri, &coll)))
		return rc;
	n = coll ? rf_json_count(coll, "Members") : 0;
	for (i = 0; i < n && i < RF_MAX_CHASSIS; i++) {
		char m[RF_URI_MAX], p[32];

		snprintf(p, sizeof(p), "Members/%zu", i);
		if (!rf_json_link(coll, p, m, sizeof(m)))
			continue;
		if (n > 1) {	/* several: the outermost, not contained */
			if ((rc = _get(d, m, &one))) {
				json_object_put(coll);
				return rc;
			}
			if (one && rf_json_at(one, "Links/ContainedBy")) {
				json_object_put(one);
				continue;
			}
			json_object_put(one);
		}
		outer++;
		snprintf(cand, sizeof(cand), "%s", m);
		_append(ids, sizeof(ids), ", ", m);
	}
	json_object_put(coll);
	if (outer == 1) {
		snprintf(d->chassis_uri, RF_URI_MAX, "%s", cand);
		return 0;
	}
	if (!outer)
		snprintf(d->msg, d->msg_len, "%s: no chassis", uri);
	else
		snprintf(d->msg, d->msg_len,
			 "%s: %zu outermost chassis (%s): name one with EnergyBMCRedfishChassis",
			 uri, outer, ids);
	return outer ? -EINVAL : -ENOENT;
}

/* ------------------------------------------------------------ sensors */

/* Keep one Sensor resource (taken over). */
static void _add_sensor(rf_disc_t *d, json_object *doc, const char *uri)
{
	if (d->n_sensors == RF_MAX_MEMBERS) {
		json_object_put(doc);
		return;
	}
	d->sensors[d->n_sensors] = doc;
	snprintf(d->sensor_uris[d->n_sensors], RF_URI_MAX, "%s", uri);
	d->n_sensors++;
}

/*
 * The chassis' Sensors: the collection expanded in one GET where the
 * service expands ($expand=., as public-rackmount1 declares), else each
 * member fetched.
 */
static int _read_sensors(rf_disc_t *d)
{
	json_object *coll = NULL, *m;
	char uri[RF_URI_MAX], q[RF_URI_MAX + 24], mu[RF_URI_MAX], p[32];
	size_t i, n;
	int rc;

	d->sensors_read = true;
	if (!rf_json_link(d->chassis, "Sensors", uri, sizeof(uri)))
		return 0;
	snprintf(q, sizeof(q), "%s?$expand=.($levels=1)", uri);
	rc = _get(d, q, &coll);
	if (rc || !coll) {	/* a service that refuses the query */
		d->msg[0] = '\0';
		if ((rc = _get(d, uri, &coll)) || !coll)
			return rc;
	}
	n = rf_json_count(coll, "Members");
	for (i = 0; i < n && i < RF_MAX_MEMBERS; i++) {
		snprintf(p, sizeof(p), "Members/%zu", i);
		if (!rf_json_link(coll, p, mu, sizeof(mu)))
			continue;
		m = rf_json_at(coll, p);
		if (rf_json_string(m, "ReadingType")) {
			_add_sensor(d, json_object_get(m), mu);
			continue;
		}
		if ((rc = _get(d, mu, &m))) {
			json_object_put(coll);
			return rc;
		}
		if (m)
			_add_sensor(d, m, mu);
	}
	json_object_put(coll);
	return 0;
}

static bool _chassis_level(json_object *s)
{
	const char *pc = rf_json_string(s, "PhysicalContext");

	return !pc || !strcmp(pc, "Chassis");
}

/*
 * The chassis-level sensor of ReadingType type: true and out when there
 * is one (or one of several says ElectricalContext Total); several: a note.
 */
static bool _sensor_series(rf_disc_t *d, const rf_field_t *type,
			   rf_source_t *src, rf_series_t *out)
{
	size_t i, n = 0, total = 0, pick = 0, pick_total = 0;
	double v;

	for (i = 0; i < d->n_sensors; i++) {
		const char *rt = rf_json_string(d->sensors[i], "ReadingType");
		const char *ec;

		if (!rt || strcmp(rt, type->path) ||
		    !_chassis_level(d->sensors[i]) ||
		    !rf_json_number(d->sensors[i], "Reading", &v, NULL, 0))
			continue;
		pick = i;
		n++;
		ec = rf_json_string(d->sensors[i], "ElectricalContext");
		if (ec && !strcmp(ec, "Total")) {
			pick_total = i;
			total++;
		}
	}
	if (n > 1 && total == 1) {
		pick = pick_total;
		n = 1;
	}
	if (n > 1) {
		char note[96];

		snprintf(note, sizeof(note),
			 "several chassis sensors of ReadingType %s",
			 type->path);
		_note(src, note);
	}
	if (n != 1)
		return false;
	_series_one(out, type->q == RF_Q_WATTS ? "Sensor Power" :
			 type->q == RF_Q_JOULES ? "Sensor EnergyJoules" :
			 type->q == RF_Q_KWH ? "Sensor EnergykWh" :
						 "Sensor EnergyWh",
		    type->q, d->sensor_uris[pick], "");
	return true;
}

/* ------------------------------------------------------- power supplies */

static int _read_psus(rf_disc_t *d)
{
	json_object *sub = NULL, *coll = NULL, *psu;
	char uri[RF_URI_MAX], mu[RF_URI_MAX], p[32];
	size_t i, n;
	int rc;

	d->psus_read = true;
	if ((rc = _follow(d, d->chassis, "PowerSubsystem", uri, &sub)) ||
	    !sub)
		return rc;
	rc = _follow(d, sub, "PowerSupplies", uri, &coll);
	json_object_put(sub);
	if (rc || !coll)
		return rc;
	n = rf_json_count(coll, "Members");
	d->psus_complete = n > 0 && n <= RF_MAX_PROBES;
	for (i = 0; !rc && i < n && i < RF_MAX_PROBES; i++) {
		json_object *metrics = NULL;

		snprintf(p, sizeof(p), "Members/%zu", i);
		psu = NULL;
		rc = _follow(d, coll, p, mu, &psu);
		if (!rc)
			rc = _follow(d, psu, "Metrics", mu, &metrics);
		json_object_put(psu);
		if (!metrics) {
			d->psus_complete = false;
			continue;
		}
		d->psus[d->n_psus] = metrics;
		snprintf(d->psu_uris[d->n_psus], RF_URI_MAX, "%s", mu);
		d->n_psus++;
	}
	json_object_put(coll);
	return rc;
}

/* field summed over every supply's Metrics (each must have it). */
static bool _psu_series(rf_disc_t *d, const char *field, rf_quantity_t q,
			const char *what, rf_series_t *out)
{
	double v;
	size_t i;

	if (!d->psus_complete || !d->n_psus)
		return false;
	for (i = 0; i < d->n_psus; i++)
		if (!_field_number(d->psus[i], field, &v, NULL, 0))
			return false;
	memset(out, 0, sizeof(*out));
	out->what = what;
	out->q = q;
	for (i = 0; i < d->n_psus; i++) {
		snprintf(out->probes[i].uri, RF_URI_MAX, "%s", d->psu_uris[i]);
		snprintf(out->probes[i].path, sizeof(out->probes[i].path),
			 "%s", field);
	}
	out->n = d->n_psus;
	return true;
}

/* ------------------------------------------------------------ choice */

static const char *const _env_energy_whats[] = {
	"EnvironmentMetrics EnergyJoules", "EnvironmentMetrics EnergykWh",
};
static const char *const _env_power_whats[] = {
	"EnvironmentMetrics PowerWatts", NULL, NULL,
};

static int _find_energy(rf_disc_t *d, rf_source_t *src)
{
	int rc;
	size_t i;

	if (_doc_series(d->env, d->env_uri, _energy_fields, 2,
			_env_energy_whats, &src->energy))
		return (src->has_energy = true), 0;
	if (!d->sensors_read && (rc = _read_sensors(d)))
		return rc;
	for (i = 0; i < 3; i++)
		if (_sensor_series(d, &_sensor_types[i], src, &src->energy))
			return (src->has_energy = true), 0;
	if (!d->psus_read && (rc = _read_psus(d)))
		return rc;
	src->has_energy = _psu_series(d, "EnergykWh", RF_Q_KWH,
				      "PowerSupplies EnergykWh", &src->energy);
	return 0;
}

/* Power, from the counter's own documents first (no extra GET). */
static int _find_power(rf_disc_t *d, rf_source_t *src)
{
	char uri[RF_URI_MAX];
	int rc;

	if (src->has_energy && src->energy.probes[0].path[0] &&
	    strcmp(src->energy.what, "PowerSupplies EnergykWh") &&
	    _doc_series(d->env, d->env_uri, _power_fields, 1,
			_env_power_whats, &src->power))
		return (src->has_power = true), 0;
	if (src->has_energy &&
	    !strcmp(src->energy.what, "PowerSupplies EnergykWh") &&
	    _psu_series(d, "InputPowerWatts", RF_Q_WATTS,
			"PowerSupplies InputPowerWatts", &src->power))
		return (src->has_power = true), 0;
	if (_doc_series(d->env, d->env_uri, _power_fields, 1,
			_env_power_whats, &src->power))
		return (src->has_power = true), 0;
	if (!d->sensors_read && (rc = _read_sensors(d)))
		return rc;
	if (_sensor_series(d, &_sensor_types[3], src, &src->power))
		return (src->has_power = true), 0;
	if (!d->psus_read && (rc = _read_psus(d)))
		return rc;
	if (_psu_series(d, "InputPowerWatts", RF_Q_WATTS,
			"PowerSupplies InputPowerWatts", &src->power))
		return (src->has_power = true), 0;
	if ((rc = _follow(d, d->chassis, "Power", uri, &d->legacy)))
		return rc;
	if (d->legacy &&
	    _field_number(d->legacy, _power_fields[2].path, &(double){ 0 },
			  NULL, 0)) {
		_series_one(&src->power, "legacy Power PowerConsumedWatts",
			    RF_Q_WATTS, uri, _power_fields[2].path);
		src->has_power = true;
	}
	return 0;
}

/* ------------------------------------------------------ named resources */

#define RF_EXPAND_ONE	"?$expand=.($levels=1)"

/* Length of a URL's service part ("https://pdu2:443"), 0 for a path. */
static size_t _service_len(const char *uri)
{
	const char *p = strstr(uri, "://");

	if (!p)
		return 0;
	p = strchr(p + 3, '/');
	return p ? (size_t) (p - uri) : strlen(uri);
}

const char *rf_uri_path(const char *uri)
{
	return uri + _service_len(uri);
}

/* The batch GET that would read uri: its collection with $expand, on its
 * service ("" when uri has no parent). */
static void _batch_uri(const char *uri, char *out, size_t len)
{
	const char *slash = strrchr(rf_uri_path(uri), '/');

	if (!slash || slash == rf_uri_path(uri)) {
		out[0] = '\0';
		return;
	}
	snprintf(out, len, "%.*s" RF_EXPAND_ONE, (int) (slash - uri), uri);
}

/* a: b's value at path the same (both absent, or equal numbers or
 * strings)? */
static bool _same_at(json_object *a, json_object *b, const char *path)
{
	double x, y;
	const char *sx, *sy;
	bool nx = rf_json_number(a, path, &x, NULL, 0);
	bool ny = rf_json_number(b, path, &y, NULL, 0);

	if (nx || ny)
		return nx && ny && x == y;
	sx = rf_json_string(a, path);
	sy = rf_json_string(b, path);
	return (!sx && !sy) || (sx && sy && !strcmp(sx, sy));
}

/* The readings of one resource the same in a and b: every field a
 * source reads (its Reading, a counter's SensorResetTime), or a Sensor's
 * own. */
static bool _resource_same(json_object *a, json_object *b)
{
	static const char *const paths[] = {
		"EnergyJoules/Reading", "EnergykWh/Reading",
		"EnergykWh/SensorResetTime", "EnergyJoules/SensorResetTime",
		"PowerWatts/Reading", "InputPowerWatts/Reading",
		"PowerControl/0/PowerConsumedWatts", "Reading",
		"SensorResetTime",
	};

	for (size_t i = 0; i < sizeof(paths) / sizeof(paths[0]); i++)
		if (!_same_at(a, b, paths[i]))
			return false;
	return true;
}

bool rf_readings_same(json_object *a, json_object *b)
{
	size_t n = rf_json_count(a, "Members");
	char p[32];

	if (!a || !b)
		return false;
	if (n != rf_json_count(b, "Members") || !_resource_same(a, b))
		return false;
	for (size_t i = 0; i < n; i++) {
		snprintf(p, sizeof(p), "Members/%zu", i);
		if (!_resource_same(rf_json_at(a, p), rf_json_at(b, p)))
			return false;
	}
	return true;
}

void rf_batch_uri(const char *uri, char *out, size_t len)
{
	_batch_uri(uri, out, len);
}

int rf_source_batch_of(const rf_source_t *s, const char *uri)
{
	char q[RF_URI_MAX + 24];
	size_t i;

	if (!s->n_batches)
		return -1;
	_batch_uri(uri, q, sizeof(q));
	for (i = 0; i < s->n_batches; i++)
		if (!strcmp(s->batches[i].uri, q))
			return (int) i;
	return -1;
}

json_object *rf_batch_member(json_object *coll, const char *uri)
{
	const char *path = rf_uri_path(uri), *id;
	size_t i, n = rf_json_count(coll, "Members");
	char p[32];

	for (i = 0; i < n; i++) {
		json_object *m;

		snprintf(p, sizeof(p), "Members/%zu", i);
		m = rf_json_at(coll, p);
		if (!m || !json_object_is_type(m, json_type_object))
			continue;
		/* expanded: the resource (Id is required of every one),
		 * not its bare link */
		id = rf_json_string(m, "@odata.id");
		if (id && !strcmp(id, path) && rf_json_string(m, "Id"))
			return m;
	}
	return NULL;
}

size_t rf_uri_list_split(const char *list, char items[][RF_URI_MAX])
{
	size_t n = 0, len;
	const char *p = list, *comma;

	for (;;) {
		comma = strchr(p, ',');
		len = comma ? (size_t) (comma - p) : strlen(p);
		if (!len || len >= RF_URI_MAX || n == RF_MAX_PROBES)
			return 0;
		memcpy(items[n], p, len);
		items[n++][len] = '\0';
		if (!comma)
			return n;
		p = comma + 1;
	}
}

/* rf_uri_list_split, or 0 with a message. */
static size_t _split_uris(rf_disc_t *d, const char *list,
			  char items[][RF_URI_MAX])
{
	size_t n = rf_uri_list_split(list, items);

	if (!n)
		snprintf(d->msg, d->msg_len,
			 "%s: at most %d resource URIs of up to %d characters, separated by commas (EnergyBMCRedfishSource)",
			 list, RF_MAX_PROBES, RF_URI_MAX - 1);
	return n;
}

/*
 * The named resources that are members of one collection of one service
 * (two outlets of a PDU), read through one GET of the collection with
 * $expand where the service expands it: docs[i] filled for those, the
 * batch kept in src.  A service that refuses the query (or does not
 * expand) leaves them to be fetched one by one.
 */
static int _batch_docs(rf_disc_t *d, char items[][RF_URI_MAX], size_t n,
		       json_object *docs[], rf_source_t *src)
{
	/* each item's batch GET, as rf_batch_t.uri */
	char q[RF_MAX_PROBES][sizeof(((rf_batch_t *) 0)->uri)];
	json_object *coll;
	size_t i, j, members;
	int rc;

	for (i = 0; i < n; i++)
		_batch_uri(items[i], q[i], sizeof(q[i]));
	for (i = 0; i < n; i++) {
		if (docs[i] || !q[i][0] ||
		    rf_source_batch_of(src, items[i]) >= 0)
			continue;
		for (members = 0, j = i; j < n; j++)
			members += !strcmp(q[i], q[j]);
		if (members < 2)
			continue;
		rc = d->f->fetch(d->f->arg, q[i], &coll, d->msg, d->msg_len);
		if (rc == -EACCES || rc == -EPROTO || rc == -ETIMEDOUT ||
		    rc == -ECONNREFUSED || rc == -EIO)
			return rc;
		d->msg[0] = '\0';
		if (rc)
			continue;	/* refused: one by one */
		for (j = i; j < n; j++)
			if (!strcmp(q[i], q[j]) &&
			    !rf_batch_member(coll, items[j]))
				break;
		if (j == n) {	/* every one expanded: the batch holds */
			for (j = i; j < n; j++)
				if (!strcmp(q[i], q[j]))
					docs[j] = json_object_get(
						rf_batch_member(coll, items[j]));
			memcpy(src->batches[src->n_batches].uri, q[i],
			       sizeof(src->batches[0].uri));
			src->batches[src->n_batches++].n = members;
		}
		json_object_put(coll);
	}
	return 0;
}

/* What one named resource gives: an energy and a power series of one
 * probe each (what: "EnergykWh", "Sensor Power", ...). */
static void _one_resource(json_object *doc, const char *uri,
			  rf_series_t *e, bool *has_e, rf_series_t *p,
			  bool *has_p)
{
	static const char *const e_whats[] = { "EnergyJoules", "EnergykWh" };
	static const char *const p_whats[] = {
		"PowerWatts", "InputPowerWatts", "PowerControl PowerConsumedWatts",
	};
	const char *rt;
	size_t i;

	*has_e = *has_p = false;
	if ((rt = rf_json_string(doc, "ReadingType"))) {
		for (i = 0; i < 4; i++)
			if (!strcmp(rt, _sensor_types[i].path))
				break;
		if (i < 4 && _sensor_types[i].q == RF_Q_WATTS) {
			_series_one(p, "Sensor Power", RF_Q_WATTS, uri, "");
			*has_p = true;
		} else if (i < 4) {
			_series_one(e, "Sensor energy", _sensor_types[i].q,
				    uri, "");
			*has_e = true;
		}
		return;
	}
	*has_e = _doc_series(doc, uri, _energy_fields, 2, e_whats, e);
	*has_p = _doc_series(doc, uri, _power_fields, 3, p_whats, p);
}

/* Add probe one (a series of one) to sum; false if its quantity or
 * field differs from the sum's. */
static bool _sum_into(rf_series_t *sum, const rf_series_t *one, bool first)
{
	if (first) {
		*sum = *one;
		return true;
	}
	if (one->q != sum->q || strcmp(one->what, sum->what))
		return false;
	sum->probes[sum->n++] = one->probes[0];
	return true;
}

/*
 * EnergyBMCRedfishSource=URI[,URI...]: what those resources give, summed
 * (a node's outlets on one or two PDUs).  Energy is a counter only when
 * every resource has the same one; power likewise.
 */
static int _from_uris(rf_disc_t *d, const char *list, rf_source_t *src)
{
	char items[RF_MAX_PROBES][RF_URI_MAX];
	json_object *docs[RF_MAX_PROBES] = { NULL };
	bool all_e = true, all_p = true;
	size_t i, n = _split_uris(d, list, items);
	int rc = n ? 0 : -EINVAL;

	if (!rc && n > 1)
		rc = _batch_docs(d, items, n, docs, src);
	for (i = 0; !rc && i < n; i++)
		if (!docs[i])
			rc = d->f->fetch(d->f->arg, items[i], &docs[i], d->msg,
					 d->msg_len);
	for (i = 0; !rc && i < n; i++) {
		rf_series_t e, p;
		bool has_e, has_p;

		_one_resource(docs[i], items[i], &e, &has_e, &p, &has_p);
		all_e = all_e && has_e && _sum_into(&src->energy, &e, !i);
		all_p = all_p && has_p && _sum_into(&src->power, &p, !i);
		if (!has_e && !has_p) {
			snprintf(d->msg, d->msg_len,
				 "%s: no energy or power reading in it (EnergyBMCRedfishSource)",
				 items[i]);
			rc = -ENOENT;
		}
		_append(src->chassis, sizeof(src->chassis), ", ", items[i]);
	}
	for (i = 0; i < n; i++)
		json_object_put(docs[i]);
	if (rc)
		return rc;
	src->has_energy = all_e;
	src->has_power = all_p;
	if (!all_e && !all_p) {
		snprintf(d->msg, d->msg_len,
			 "%s: the resources have no reading in common to sum (EnergyBMCRedfishSource)",
			 list);
		return -ENOENT;
	}
	if (n > 1 && !all_e)
		_note(src, "no energy counter on every resource: power only");
	return 0;
}

static void _disc_free(rf_disc_t *d)
{
	size_t i;

	json_object_put(d->chassis);
	json_object_put(d->env);
	json_object_put(d->legacy);
	for (i = 0; i < d->n_sensors; i++)
		json_object_put(d->sensors[i]);
	for (i = 0; i < d->n_psus; i++)
		json_object_put(d->psus[i]);
}

static int _discover(rf_disc_t *d, const char *chassis_sel, rf_pick_t pick,
		     rf_source_t *out)
{
	int rc;

	if ((rc = _pick_chassis(d, chassis_sel)))
		return rc;
	snprintf(out->chassis, RF_URI_MAX, "%s", d->chassis_uri);
	if ((rc = d->f->fetch(d->f->arg, d->chassis_uri, &d->chassis, d->msg,
			      d->msg_len)))
		return rc;
	if ((rc = _follow(d, d->chassis, "EnvironmentMetrics", d->env_uri,
			  &d->env)))
		return rc;
	if (pick != RF_PICK_POWER && (rc = _find_energy(d, out)))
		return rc;
	if ((rc = _find_power(d, out)))
		return rc;
	if (pick == RF_PICK_ENERGY && !out->has_energy) {
		snprintf(d->msg, d->msg_len,
			 "the chassis %s has no energy counter (EnergyBMCRedfishSource=energy)",
			 d->chassis_uri);
		return -ENOENT;
	}
	if (!out->has_energy && !out->has_power) {
		snprintf(d->msg, d->msg_len,
			 "the chassis %s has none of the sources (EnvironmentMetrics, Sensors, PowerSubsystem, Power)",
			 d->chassis_uri);
		return -ENOENT;
	}
	return 0;
}

int rf_discover(const rf_fetcher_t *f, const char *chassis_sel,
		rf_pick_t pick, const char *uri, rf_source_t *out,
		char *msg, size_t msg_len)
{
	rf_disc_t d = { .f = f, .msg = msg, .msg_len = msg_len };
	int rc;

	memset(out, 0, sizeof(*out));
	msg[0] = '\0';
	if (pick == RF_PICK_URI)
		rc = _from_uris(&d, uri, out);
	else
		rc = _discover(&d, chassis_sel, pick, out);
	_disc_free(&d);
	return rc;
}

/* ------------------------------------------------------------ reading */

void rf_source_describe(const rf_source_t *s, char *buf, size_t len)
{
	int n = 0;

	bool psus = s->has_energy &&
		    !strcmp(s->energy.what, "PowerSupplies EnergykWh");
	size_t i;

	if (s->has_energy)
		n = snprintf(buf, len, "%s (counter%s%s)", s->energy.what,
			     s->energy.n > 1 ? ", summed over " : "",
			     s->energy.n < 2 ? "" : psus ? "the supplies" :
			     "the resources");
	if (s->has_power && n >= 0 && (size_t) n < len)
		n += snprintf(buf + n, len - n, "%s%s%s", n ? " + " : "",
			      s->power.what,
			      s->has_energy ? "" : " (power, integrated)");
	if (n >= 0 && (size_t) n < len)
		n += snprintf(buf + n, len - n, " at %s", s->chassis);
	for (i = 0; i < s->n_batches && n >= 0 && (size_t) n < len; i++)
		n += snprintf(buf + n, len - n, "; %zu of them in one GET of %s",
			      s->batches[i].n, s->batches[i].uri);
}

static size_t _add_uri(const char *uris[], size_t n, size_t max,
		       const char *uri)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (!strcmp(uris[i], uri))
			return n;
	if (n < max)
		uris[n++] = uri;
	return n;
}

size_t rf_source_uris(const rf_source_t *s, const char *uris[], size_t max)
{
	size_t i, n = 0;

	for (i = 0; s->has_energy && i < s->energy.n; i++)
		n = _add_uri(uris, n, max, s->energy.probes[i].uri);
	for (i = 0; s->has_power && i < s->power.n; i++)
		n = _add_uri(uris, n, max, s->power.probes[i].uri);
	return n;
}

static json_object *_doc_of(const char *uri, const char *const uris[],
			    json_object *const docs[], size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (!strcmp(uris[i], uri))
			return docs[i];
	return NULL;
}

int rf_series_read(const rf_series_t *s, const char *const uris[],
		   json_object *const docs[], size_t n_docs, rf_value_t *out,
		   char *msg, size_t msg_len)
{
	size_t i;

	memset(out, 0, sizeof(*out));
	for (i = 0; i < s->n; i++) {
		const rf_probe_t *p = &s->probes[i];
		json_object *doc = _doc_of(p->uri, uris, docs, n_docs);
		char text[64], sub[96];
		const char *rt;
		double v;

		if (!doc || !_field_number(doc, p->path, &v, text,
					   sizeof(text))) {
			snprintf(msg, msg_len, "%s: no number at %s%s", p->uri,
				 p->path[0] ? p->path : "Reading",
				 p->path[0] && rf_json_at(doc, p->path) &&
				 json_object_is_type(rf_json_at(doc, p->path),
						     json_type_object) ?
				 "/Reading" : "");
			return -ENODATA;
		}
		out->value += v;
		if (rf_json_decimals(text) > out->decimals)
			out->decimals = rf_json_decimals(text);
		snprintf(sub, sizeof(sub), "%s%sSensorResetTime", p->path,
			 p->path[0] ? "/" : "");
		/* every probe's: a reset of one of two summed outlets is a
		 * reset of the sum */
		if ((rt = rf_json_string(doc, sub)))
			_append(out->reset_time, sizeof(out->reset_time), " ",
				rt);
	}
	return 0;
}

int rf_counter_raw(rf_quantity_t q, double value, unsigned decimals,
		   uint64_t *raw, counter_spec_t *spec)
{
	unsigned cap = q == RF_Q_KWH ? RF_MAX_DECIMALS_KWH :
		       q == RF_Q_WH ? RF_MAX_DECIMALS_WH : RF_MAX_DECIMALS_J;
	double mj = q == RF_Q_KWH ? 3.6e9 : q == RF_Q_WH ? 3.6e6 : 1e3;
	double scaled;

	if (decimals > cap)
		decimals = cap;
	scaled = value * pow(10.0, decimals);
	/* 2^53: the last integer a double holds exactly */
	if (!isfinite(scaled) || scaled < 0 || scaled > 9007199254740992.0)
		return -ERANGE;
	*raw = (uint64_t) llround(scaled);
	spec->width_bits = 64;
	spec->mj_per_unit = mj / pow(10.0, decimals);
	spec->significand_bits = 0;
	spec->registers = 0;	/* one counter */
	return 0;
}

bool rf_counter_restarted(double prev, const char *prev_reset_time,
			  double cur, const char *cur_reset_time)
{
	if (prev_reset_time[0] && cur_reset_time[0] &&
	    strcmp(prev_reset_time, cur_reset_time))
		return true;
	return cur < prev;
}
