/*
 * snmp_dl.c - the net-snmp entry points snmp_net.c uses, resolved when
 * snmp_dl_load() opens the library (snmp_dl.h).  Before a load that
 * worked, every call fails as the library's own failures do (NULL, an
 * error status) with errno ELIBACC; the calls that take a session or a
 * PDU are only reached once one exists.
 */
#ifdef HAVE_CONFIG_H
#include "se_config.h"
#endif

#include "snmp_netsnmp.h"

#include <string.h>

#include "se_dynlib.h"
#include "snmp_dl.h"

static struct {
	int (*ds_set_boolean)(int, int, int);
	void (*set_mib_directory)(const char *);
	int (*register_callback)(int, int, SNMPCallback *, void *);
	void (*enable_calllog)(void);
	void (*init)(const char *);
	void (*sess_init)(netsnmp_session *);
	int (*gen_ku)(const oid *, u_int, const u_char *, size_t, u_char *,
		      size_t *);
	void *(*sess_open)(netsnmp_session *);
	void (*error)(netsnmp_session *, int *, int *, char **);
	netsnmp_session *(*sess_session)(void *);
	netsnmp_pdu *(*pdu_create)(int);
	netsnmp_variable_list *(*add_null_var)(netsnmp_pdu *, const oid *,
					       size_t);
	int (*synch_response)(void *, netsnmp_pdu *, netsnmp_pdu **);
	void (*sess_error)(void *, int *, int *, char **);
	const char *(*errstring)(int);
	const char *(*api_errstring)(int);
	void (*free_pdu)(netsnmp_pdu *);
	int (*sess_close)(void *);
} ns;

static const se_dynlib_sym_t syms[] = {
	{ "netsnmp_ds_set_boolean", &ns.ds_set_boolean },
	{ "netsnmp_set_mib_directory", &ns.set_mib_directory },
	{ "snmp_register_callback", &ns.register_callback },
	{ "snmp_enable_calllog", &ns.enable_calllog },
	{ "init_snmp", &ns.init },
	{ "snmp_sess_init", &ns.sess_init },
	{ "generate_Ku", &ns.gen_ku },
	{ "snmp_sess_open", &ns.sess_open },
	{ "snmp_error", &ns.error },
	{ "snmp_sess_session", &ns.sess_session },
	{ "snmp_pdu_create", &ns.pdu_create },
	{ "snmp_add_null_var", &ns.add_null_var },
	{ "snmp_sess_synch_response", &ns.synch_response },
	{ "snmp_sess_error", &ns.sess_error },
	{ "snmp_errstring", &ns.errstring },
	{ "snmp_api_errstring", &ns.api_errstring },
	{ "snmp_free_pdu", &ns.free_pdu },
	{ "snmp_sess_close", &ns.sess_close },
};

static se_dynlib_t lib = SE_DYNLIB_INIT(SE_LIBNETSNMP_SONAME, syms);

int snmp_dl_load(char *err, size_t err_len)
{
	return se_dynlib_require(&lib, err, err_len) ? -1 : 0;
}

int netsnmp_ds_set_boolean(int store, int which, int value)
{
	return se_dynlib_ready(&lib) ? ns.ds_set_boolean(store, which, value) :
				       SNMPERR_GENERR;
}

void netsnmp_set_mib_directory(const char *dir)
{
	if (se_dynlib_ready(&lib))
		ns.set_mib_directory(dir);
}

int snmp_register_callback(int major, int minor, SNMPCallback *fn,
			   void *arg)
{
	return se_dynlib_ready(&lib) ?
	       ns.register_callback(major, minor, fn, arg) : SNMPERR_GENERR;
}

void snmp_enable_calllog(void)
{
	if (se_dynlib_ready(&lib))
		ns.enable_calllog();
}

void init_snmp(const char *type)
{
	if (se_dynlib_ready(&lib))
		ns.init(type);
}

void snmp_sess_init(netsnmp_session *s)
{
	memset(s, 0, sizeof(*s));
	if (se_dynlib_ready(&lib))
		ns.sess_init(s);
}

int generate_Ku(const oid *hash, u_int hash_len, const u_char *p,
		size_t pplen, u_char *ku, size_t *kulen)
{
	return se_dynlib_ready(&lib) ?
	       ns.gen_ku(hash, hash_len, p, pplen, ku, kulen) : SNMPERR_GENERR;
}

void *snmp_sess_open(netsnmp_session *s)
{
	return se_dynlib_ready(&lib) ? ns.sess_open(s) : NULL;
}

void snmp_error(netsnmp_session *s, int *clib, int *snmp, char **words)
{
	*clib = 0;
	*snmp = SNMPERR_GENERR;
	*words = NULL;
	if (se_dynlib_ready(&lib))
		ns.error(s, clib, snmp, words);
}

netsnmp_session *snmp_sess_session(void *sess)
{
	return ns.sess_session(sess);
}

netsnmp_pdu *snmp_pdu_create(int type)
{
	return se_dynlib_ready(&lib) ? ns.pdu_create(type) : NULL;
}

netsnmp_variable_list *snmp_add_null_var(netsnmp_pdu *pdu, const oid *name,
					 size_t len)
{
	return ns.add_null_var(pdu, name, len);
}

int snmp_sess_synch_response(void *sess, netsnmp_pdu *pdu,
			     netsnmp_pdu **resp)
{
	return ns.synch_response(sess, pdu, resp);
}

void snmp_sess_error(void *sess, int *clib, int *snmp, char **words)
{
	ns.sess_error(sess, clib, snmp, words);
}

const char *snmp_errstring(int e)
{
	return se_dynlib_ready(&lib) ? ns.errstring(e) : "net-snmp not loaded";
}

const char *snmp_api_errstring(int e)
{
	return se_dynlib_ready(&lib) ? ns.api_errstring(e) :
				       "net-snmp not loaded";
}

void snmp_free_pdu(netsnmp_pdu *pdu)
{
	ns.free_pdu(pdu);
}

int snmp_sess_close(void *sess)
{
	return ns.sess_close(sess);
}
