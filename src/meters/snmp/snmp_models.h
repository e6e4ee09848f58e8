/*
 * snmp_models.h - the rack PDUs the SNMP meter knows, with their OIDs and
 * units (facts: the vendors' MIBs, ../shared/DESIGN.md section 8), and the
 * custom map an administrator writes for any other.  Slurm-free.
 *
 * An outlet's OID is PREFIX.INDEX[.SUFFIX]: INDEX is the outlet's own
 * index in its table, given in the map as the PDU's unit (Raritan's PDU
 * id, ServerTech's unit.cord, Eaton's strapping index) followed by the
 * outlet number.  Values are integers: value x power_w is watts,
 * value x energy_j joules.
 */
#ifndef SE_SNMP_MODELS_H
#define SE_SNMP_MODELS_H

#include <stdbool.h>
#include <stddef.h>

typedef struct {
	const char *name;		/* "apc-rpdu2": Model= in the map */
	const char *mib;		/* for the load line */
	const char *power_oid;		/* prefix before the index */
	const char *power_suffix;	/* after it ("": none) */
	double power_w;			/* W per unit */
	const char *energy_oid;		/* NULL: no energy counter */
	const char *energy_suffix;
	double energy_j;		/* J per unit */
	unsigned energy_width;		/* bits where the register wraps */
	const char *unit_default;	/* index before the outlet; NULL: the
					 * outlet alone */
	bool negative_is_absent;	/* the MIB says a negative power is
					 * "no reading" (Sentry4's -1, Eaton's
					 * "negative: not available"), not
					 * an idle meter's noise below 0 W */
} snmp_model_t;

/* The built-in model called name (case-insensitive), or NULL. */
const snmp_model_t *snmp_model_find(const char *name);

/* "apc-rpdu2, raritan-px, ..." into buf. */
void snmp_model_names(char *buf, size_t len);

/* The i-th built-in model, NULL past the last (tests, tools). */
const snmp_model_t *snmp_model_at(size_t i);

#endif
