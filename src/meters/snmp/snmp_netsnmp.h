/*
 * snmp_netsnmp.h - net-snmp's headers, for the two files that use the
 * library's types (snmp_net.c, snmp_dl.c).  net-snmp-config.h defines
 * autoconf's PACKAGE_* again, as its own: ours are dropped first, so the
 * two do not clash (neither file uses them).
 */
#ifndef SE_SNMP_NETSNMP_H
#define SE_SNMP_NETSNMP_H

#undef PACKAGE_BUGREPORT
#undef PACKAGE_NAME
#undef PACKAGE_STRING
#undef PACKAGE_TARNAME
#undef PACKAGE_URL
#undef PACKAGE_VERSION
#include <net-snmp/net-snmp-config.h>
#include <net-snmp/net-snmp-includes.h>

#endif /* SE_SNMP_NETSNMP_H */
