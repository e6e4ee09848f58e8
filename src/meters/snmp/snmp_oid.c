/*
 * snmp_oid.c - dotted OIDs in and out (snmp_transport.h).
 */
#ifdef HAVE_CONFIG_H
#include "se_config.h"
#endif

#include <ctype.h>
#include <errno.h>
#include <stdio.h>

#include "snmp_transport.h"

int snmp_oid_append(snmp_oid_t *o, const char *dotted)
{
	const char *p = dotted;

	if (*p == '.')
		p++;
	if (!*p)
		return -EINVAL;
	while (*p) {
		uint64_t v = 0;

		if (!isdigit((unsigned char) *p) || o->len >= SNMP_OID_MAX)
			return -EINVAL;
		while (isdigit((unsigned char) *p)) {
			v = v * 10 + (uint64_t) (*p++ - '0');
			if (v > UINT32_MAX)
				return -EINVAL;
		}
		o->sub[o->len++] = (uint32_t) v;
		if (*p == '.' && *++p == '\0')
			return -EINVAL;
		else if (*p && *p != '.' && !isdigit((unsigned char) *p))
			return -EINVAL;
	}
	return 0;
}

void snmp_oid_format(const snmp_oid_t *o, char *buf, size_t len)
{
	size_t n = 0;

	buf[0] = '\0';
	for (size_t i = 0; i < o->len && n < len; i++)
		n += snprintf(buf + n, len - n, "%s%u", i ? "." : "",
			      o->sub[i]);
}
