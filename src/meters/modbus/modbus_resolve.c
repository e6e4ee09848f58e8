/*
 * modbus_resolve.c - one node's Modbus channel (see modbus_conf.h): its map
 * line (modbus_map.c read it), the share of the channel it is billed, and
 * the meter configuration that follows.  Hostlists are the caller's.
 */
#ifdef HAVE_CONFIG_H
#include "se_config.h"
#endif

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "conf.h"
#include "modbus_conf.h"

/* A Nodes= the caller's hostlist parser refused, named with its value. */
static int _bad_nodes(const char *path, unsigned line, const char *nodes,
		      char *err, size_t len)
{
	snprintf(err, len, "%s:%u: Nodes=%s: not a hostlist expression", path,
		 line, nodes);
	return -EINVAL;
}

static const char *_entry_device(const modbus_conf_t *c,
				 const modbus_map_entry_t *e)
{
	return e->device ? e->device : c->device;
}

static unsigned _entry_unit(const modbus_conf_t *c,
			    const modbus_map_entry_t *e)
{
	return e->has_unit ? e->unit : c->unit;
}

/* Does a device template name the node (a %n escape, not a "%%n")? */
static bool _per_node(const char *tmpl)
{
	for (const char *p = tmpl; (p = strchr(p, '%')); p += 2) {
		if (p[1] == 'n')
			return true;
		if (!p[1])
			break;
	}
	return false;
}

/* Same channel: device (as written), unit and offset. */
static bool _same_channel(const modbus_conf_t *c, const modbus_map_entry_t *a,
			  const modbus_map_entry_t *b)
{
	return !strcmp(_entry_device(c, a), _entry_device(c, b)) &&
	       _entry_unit(c, a) == _entry_unit(c, b) &&
	       a->offset == b->offset;
}

/*
 * The share of an entry: fixed, or what the fixed shares of its channel
 * leave, split among the nodes of its channel with Share=equal.
 */
static int _entry_share(const modbus_conf_t *c, const modbus_map_entry_t *e,
			const modbus_hostlist_ops_t *hl, double *share,
			char *err, size_t len)
{
	const char **equal = NULL;
	double fixed = 0.0;
	size_t i, n_equal = 0;
	long count;
	int rc = 0;

	if (!e->share_equal) {
		*share = e->share;
		return 0;
	}
	/* A per-node device (%n) is a channel of its own; "%%n" is a
	 * literal "%n", one device (tests/fuzz: both nodes of
	 * "Device=tcp://p%%none" were billed the whole channel). */
	if (_per_node(_entry_device(c, e))) {
		*share = 1.0;
		return 0;
	}
	if (!(equal = calloc(c->map_len, sizeof(*equal))))
		return -ENOMEM;
	for (i = 0; i < c->map_len; i++) {
		const modbus_map_entry_t *o = &c->map[i];

		if (!_same_channel(c, e, o))
			continue;
		if (o->share_equal) {
			equal[n_equal++] = o->nodes;
			continue;
		}
		if ((count = hl->count(hl->arg, (const char *const *) &o->nodes,
				       1)) < 0) {
			rc = _bad_nodes(c->map_path, o->line, o->nodes, err,
					len);
			goto out;
		}
		fixed += o->share * (double) count;
	}
	count = hl->count(hl->arg, equal, n_equal);
	if (count <= 0) {
		rc = _bad_nodes(c->map_path, e->line, e->nodes, err, len);
	} else if (fixed >= 1.0 - 1e-9) {
		snprintf(err, len,
			 "%s:%u: fixed Share= on channel %s unit %u offset %u add up to %g: nothing left for Share=equal",
			 c->map_path, e->line, _entry_device(c, e),
			 _entry_unit(c, e), e->offset, fixed);
		rc = -EINVAL;
	} else {
		*share = (1.0 - fixed) / (double) count;
	}
out:
	free(equal);
	return rc;
}

/* The sum of the fixed shares on e's channel must not pass 1. */
static int _check_fixed_total(const modbus_conf_t *c,
			      const modbus_map_entry_t *e,
			      const modbus_hostlist_ops_t *hl, char *err,
			      size_t len)
{
	double fixed = 0.0;
	size_t i;
	long count;

	for (i = 0; i < c->map_len; i++) {
		const modbus_map_entry_t *o = &c->map[i];

		if (o->share_equal || !_same_channel(c, e, o))
			continue;
		count = hl->count(hl->arg, (const char *const *) &o->nodes, 1);
		if (count < 0)
			return _bad_nodes(c->map_path, o->line, o->nodes, err,
					  len);
		fixed += o->share * (double) count;
	}
	if (fixed > 1.0 + 1e-9) {
		snprintf(err, len,
			 "%s:%u: Share= on channel %s unit %u offset %u add up to %g (more than 1)",
			 c->map_path, e->line, _entry_device(c, e),
			 _entry_unit(c, e), e->offset, fixed);
		return -EINVAL;
	}
	return 0;
}

/* The map entry of node: NULL if none; -EINVAL in *rc if twice or bad. */
static const modbus_map_entry_t *_find_entry(const modbus_conf_t *c,
					     const char *node,
					     const modbus_hostlist_ops_t *hl,
					     int *rc, char *err, size_t len)
{
	const modbus_map_entry_t *found = NULL;
	size_t i;
	int in;

	*rc = 0;
	for (i = 0; i < c->map_len; i++) {
		in = hl->contains(hl->arg, c->map[i].nodes, node);
		if (in < 0) {
			*rc = _bad_nodes(c->map_path, c->map[i].line,
					 c->map[i].nodes, err, len);
			return NULL;
		}
		if (!in)
			continue;
		if (found) {
			snprintf(err, len,
				 "%s: node %s is on line %u and on line %u: one channel per node",
				 c->map_path, node, found->line,
				 c->map[i].line);
			*rc = -EINVAL;
			return NULL;
		}
		found = &c->map[i];
	}
	return found;
}

/* A node's meter device, %n expanded (modbus_target_t.device). */
#define DEVICE_LEN sizeof(((modbus_target_t *) 0)->device)

/*
 * The node a per-node template would need to name to expand to device, into
 * name: the %n copies all stand for one name, so its length follows from
 * the device's.  False if no name does (or the template names none).
 */
static bool _template_node(const char *tmpl, const char *device, char *name,
			   size_t name_len)
{
	conf_where_t w = { MODBUS_CONF_FILE, "Device", 0 };
	size_t fixed = 0, copies = 0, first = 0, dev_len = strlen(device);
	size_t len;
	char back[DEVICE_LEN], err[64];

	for (const char *p = tmpl; *p; p++) {
		if (*p == '%' && p[1] == 'n') {
			if (!copies++)
				first = fixed;
			p++;
		} else {
			if (*p == '%' && p[1])
				p++;
			fixed++;
		}
	}
	if (!copies || dev_len <= fixed || (dev_len - fixed) % copies)
		return false;
	len = (dev_len - fixed) / copies;
	if (len >= name_len)
		return false;
	memcpy(name, device + first, len);
	name[len] = '\0';
	return !conf_expand(&w, tmpl, name, back, sizeof(back), err,
			    sizeof(err)) &&
	       !strcmp(back, device);
}

/*
 * Does map line o bill the meter t (device as expanded, unit, offset)
 * through one of the nodes it lists?  1 yes, 0 no, <0 a bad Nodes=.
 */
static int _line_bills(const modbus_conf_t *c, const modbus_map_entry_t *o,
		       const modbus_target_t *t, const modbus_hostlist_ops_t *hl,
		       char *err, size_t len)
{
	const char *dev = _entry_device(c, o);
	char name[256], plain[DEVICE_LEN];
	conf_where_t w = { MODBUS_CONF_FILE, "Device", 0 };
	int in;

	if (!dev || !strcasecmp(dev, "none") || _entry_unit(c, o) != t->unit ||
	    o->offset != t->offset)
		return 0;
	if (!_per_node(dev))
		return !conf_expand(&w, dev, NULL, plain, sizeof(plain), name,
				    sizeof(name)) &&
		       !strcmp(plain, t->device);
	if (!_template_node(dev, t->device, name, sizeof(name)))
		return 0;
	if ((in = hl->contains(hl->arg, o->nodes, name)) < 0)
		return _bad_nodes(c->map_path, o->line, o->nodes, err, len);
	return in;
}

/*
 * A meter's shares are split among the nodes of one channel as written
 * (_entry_share); a node must not reach the same meter another way: through
 * a %n that expands to another line's device, or unmapped onto a channel the
 * map splits.  Both nodes would be billed for it (tests/fuzz: map line
 * "Nodes=n2,n21 Device=tcp://meter-n5:502" with EnergyModbusDevice=
 * tcp://meter-%n:502 billed that meter 1.5 times).  e is node's line, or
 * NULL; lines written on e's channel with no %n share it and are skipped.
 */
static int _check_meter_alone(const modbus_conf_t *c,
			      const modbus_map_entry_t *e, const char *node,
			      const modbus_target_t *t,
			      const modbus_hostlist_ops_t *hl, char *err,
			      size_t len)
{
	bool fixed = e && !_per_node(_entry_device(c, e));
	char where[320];

	for (size_t i = 0; i < c->map_len; i++) {
		const modbus_map_entry_t *o = &c->map[i];
		int rc;

		if (o == e || (fixed && !_per_node(_entry_device(c, o))))
			continue;
		if ((rc = _line_bills(c, o, t, hl, err, len)) <= 0) {
			if (rc < 0)
				return rc;
			continue;
		}
		if (e)
			snprintf(where, sizeof(where), "%s:%u", c->map_path,
				 e->line);
		else
			snprintf(where, sizeof(where), "%s", c->map_path);
		snprintf(err, len,
			 "%s: node %s reads meter %s unit %u offset %u, which line %u (Nodes=%s Device=%s) bills too: it would be billed twice; list %s on line %u or give it a meter of its own",
			 where, node, t->device, t->unit, t->offset, o->line,
			 o->nodes, _entry_device(c, o), node, o->line);
		return -EINVAL;
	}
	return 0;
}

int modbus_conf_resolve(const modbus_conf_t *c, const char *node,
			const modbus_hostlist_ops_t *hl, modbus_target_t *t,
			char *err, size_t err_len)
{
	conf_where_t w = { MODBUS_CONF_FILE, "EnergyModbusDevice", 0 };
	const modbus_map_entry_t *e = NULL;
	const char *tmpl = c->device;
	int rc;

	memset(t, 0, sizeof(*t));
	t->unit = c->unit;
	t->share = 1.0;
	t->max_power_w = c->max_power_w;
	if (c->map_len) {
		e = _find_entry(c, node, hl, &rc, err, err_len);
		if (rc)
			return rc;
		if (!e && !c->device) {
			snprintf(err, err_len,
				 "%s: node %s is not mapped and there is no EnergyModbusDevice",
				 c->map_path, node);
			return -EINVAL;
		}
	}
	if (e) {
		w.file = c->map_path;
		w.key = "Device";
		w.line = e->line;
		tmpl = _entry_device(c, e);
		t->line = e->line;
		t->unit = _entry_unit(c, e);
		t->offset = e->offset;
		t->model = e->model;
		if (e->max_power_w)
			t->max_power_w = e->max_power_w;
		if ((rc = _check_fixed_total(c, e, hl, err, err_len)) ||
		    (rc = _entry_share(c, e, hl, &t->share, err, err_len)))
			return rc;
	}
	if (!tmpl) {
		snprintf(err, err_len, "%s: no EnergyModbusDevice",
			 MODBUS_CONF_FILE);
		return -EINVAL;
	}
	if (!strcasecmp(tmpl, "none")) {
		t->none = true;
		return 0;
	}
	if ((rc = conf_expand(&w, tmpl, node, t->device, sizeof(t->device),
			      err, err_len)))
		return rc;
	return _check_meter_alone(c, e, node, t, hl, err, err_len);
}

int modbus_conf_meter_config(const modbus_conf_t *c, const modbus_target_t *t,
			     modbus_meter_config_t *out, char *err,
			     size_t err_len)
{
	const mb_model_t *m = t->model;
	const mb_point_t *pts[2] = { m ? &m->power : &c->power,
				     m ? &m->energy : &c->energy };
	mb_point_t *dst[2] = { &out->power, &out->energy };
	int i;

	memset(out, 0, sizeof(*out));
	out->device = t->device;
	out->serial = c->serial;
	out->unit = t->unit;
	/* A map line's Model= is these nodes' whole register map. */
	out->kind = m ? m->kind : c->kind;
	out->max_regs_per_read = m && m->max_regs_per_read ?
		m->max_regs_per_read : c->max_regs_per_read;
	out->share = t->share;
	for (i = 0; i < 2; i++) {
		*dst[i] = *pts[i];
		if (!pts[i]->present)
			continue;
		if (pts[i]->address + t->offset + mb_type_words(pts[i]->type) >
		    65536) {
			snprintf(err, err_len,
				 "%s:%u: Offset=%u moves the %s register past 65535",
				 c->map_path ? c->map_path : MODBUS_CONF_FILE,
				 t->line, t->offset, i ? "energy" : "power");
			return -EINVAL;
		}
		dst[i]->address = (uint16_t) (pts[i]->address + t->offset);
	}
	return 0;
}
