/*
 * snmp_net.c - the SNMP transport over net-snmp's single-session API
 * (snmp_transport.h): one session per PDU, requests synchronous with the
 * session's timeout set from each call's deadline and no retry, so no call
 * returns later than its deadline (plus the library's own few ms).
 *
 * The library is set up once per process without touching files:
 * no snmp.conf read, no persistent engine state loaded or saved (a slurmd
 * writes nothing under /var/lib/snmp), its own logging off (our messages
 * say what failed; measured: 519 lines of MIB warnings on stderr at
 * init without this), no MIB read.  v3 keys are localised from the passphrases here;
 * the passphrases and keys never reach a message.
 */
#ifdef HAVE_CONFIG_H
#include "se_config.h"
#endif

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "snmp_netsnmp.h"
#include "snmp_transport.h"
#include "se_time.h"

/* The protocols' OIDs (SNMP-USM-MIB, RFC 3826, RFC 7860), ours rather
 * than the library's data symbols: the plugin opens the library with
 * dlopen and resolves functions only. */
static oid auth_sha1[] = { 1, 3, 6, 1, 6, 3, 10, 1, 1, 3 };
static oid auth_sha256[] = { 1, 3, 6, 1, 6, 3, 10, 1, 1, 5 };
static oid priv_aes[] = { 1, 3, 6, 1, 6, 3, 10, 1, 2, 4 };
#define OID_LEN(a)	(sizeof(a) / sizeof((a)[0]))

typedef struct {
	void *sess;		/* snmp_sess_open()'s handle */
} net_ctx_t;

static pthread_once_t init_once = PTHREAD_ONCE_INIT;

static int _drop_log(int major, int minor, void *server, void *client)
{
	(void) major;
	(void) minor;
	(void) server;
	(void) client;
	return 0;
}

static void _init_library(void)
{
	netsnmp_ds_set_boolean(NETSNMP_DS_LIBRARY_ID,
			       NETSNMP_DS_LIB_DONT_READ_CONFIGS, 1);
	netsnmp_ds_set_boolean(NETSNMP_DS_LIBRARY_ID,
			       NETSNMP_DS_LIB_DISABLE_PERSISTENT_LOAD, 1);
	netsnmp_ds_set_boolean(NETSNMP_DS_LIBRARY_ID,
			       NETSNMP_DS_LIB_DISABLE_PERSISTENT_SAVE, 1);
	/* OIDs are numeric here: no MIB directory is searched */
	netsnmp_set_mib_directory("");
	/* the library's own messages (MIB parsing, transport chatter) are
	 * dropped, not written to slurmd's stderr: with no handler at all it
	 * falls back to stderr, so one that drops them is registered */
	snmp_register_callback(SNMP_CALLBACK_LIBRARY, SNMP_CALLBACK_LOGGING,
			       _drop_log, NULL);
	snmp_enable_calllog();
	init_snmp("slurm-energy");
}

/* Microseconds left until deadline_ns, at least 1 ms. */
static long _timeout_us(uint64_t deadline_ns)
{
	uint64_t now = se_mono_ns();
	uint64_t us = deadline_ns > now ? (deadline_ns - now) / 1000 : 0;

	return us < 1000 ? 1000 : (long) us;
}

static int _v3_keys(netsnmp_session *s, const snmp_secret_t *sec, char *err,
		    size_t len)
{
	oid *auth = sec->auth == SNMP_AUTH_SHA256 ? auth_sha256 : auth_sha1;
	size_t auth_len = sec->auth == SNMP_AUTH_SHA256 ?
			  OID_LEN(auth_sha256) : OID_LEN(auth_sha1);

	s->securityName = (char *) sec->user;
	s->securityNameLen = strlen(sec->user);
	s->securityLevel = sec->priv == SNMP_PRIV_NONE ?
			   SNMP_SEC_LEVEL_AUTHNOPRIV : SNMP_SEC_LEVEL_AUTHPRIV;
	s->securityAuthProto = auth;
	s->securityAuthProtoLen = auth_len;
	s->securityAuthKeyLen = USM_AUTH_KU_LEN;
	if (generate_Ku(auth, (u_int) auth_len, (const u_char *) sec->auth_key,
			strlen(sec->auth_key), s->securityAuthKey,
			&s->securityAuthKeyLen) != SNMPERR_SUCCESS) {
		snprintf(err, len, "cannot make the v3 authentication key (AuthKey shorter than 8 characters?)");
		return -EINVAL;
	}
	if (sec->priv == SNMP_PRIV_NONE)
		return 0;
	s->securityPrivProto = priv_aes;
	s->securityPrivProtoLen = OID_LEN(priv_aes);
	s->securityPrivKeyLen = USM_PRIV_KU_LEN;
	if (generate_Ku(auth, (u_int) auth_len, (const u_char *) sec->priv_key,
			strlen(sec->priv_key), s->securityPrivKey,
			&s->securityPrivKeyLen) != SNMPERR_SUCCESS) {
		snprintf(err, len, "cannot make the v3 privacy key (PrivKey shorter than 8 characters?)");
		return -EINVAL;
	}
	return 0;
}

/* A library error as -errno and words. */
static int _lib_error(int liberr, const char *what, char *msg, size_t len)
{
	switch (liberr) {
	case SNMPERR_TIMEOUT:
		snprintf(msg, len, "%s: no answer by the deadline (agent down or late, or a v2c community it refuses)",
			 what);
		return -ETIMEDOUT;
	case SNMPERR_AUTHENTICATION_FAILURE:
	case SNMPERR_USM_AUTHENTICATIONFAILURE:
		snprintf(msg, len, "%s: authentication refused (wrong AuthKey or AuthProto for the v3 user)",
			 what);
		return -EACCES;
	case SNMPERR_DECRYPTION_ERR:
	case SNMPERR_USM_DECRYPTIONERROR:
		snprintf(msg, len, "%s: decryption refused (wrong PrivKey or PrivProto for the v3 user)",
			 what);
		return -EACCES;
	case SNMPERR_UNKNOWN_USER_NAME:
	case SNMPERR_USM_UNKNOWNSECURITYNAME:
		snprintf(msg, len, "%s: the agent knows no such v3 user", what);
		return -EACCES;
	case SNMPERR_USM_UNSUPPORTEDSECURITYLEVEL:
		snprintf(msg, len, "%s: the v3 user does not have this security level (authPriv / authNoPriv)",
			 what);
		return -EACCES;
	default:
		snprintf(msg, len, "%s: %s", what, snmp_api_errstring(liberr));
		return -EIO;
	}
}

static int _open(const snmp_peer_t *peer, void **ctx, uint64_t deadline_ns,
		 char *err, size_t len)
{
	const snmp_secret_t *sec = peer->secret;
	netsnmp_session s;
	net_ctx_t *c;
	int rc, liberr = 0, syserr = 0;
	char *words = NULL;

	pthread_once(&init_once, _init_library);
	*ctx = NULL;
	snmp_sess_init(&s);
	s.peername = (char *) peer->host;
	s.retries = 0;
	s.timeout = _timeout_us(deadline_ns);
	if (sec->version == SNMP_V3) {
		s.version = SNMP_VERSION_3;
		if (peer->context && *peer->context) {
			s.contextName = (char *) peer->context;
			s.contextNameLen = strlen(peer->context);
		}
		if ((rc = _v3_keys(&s, sec, err, len)))
			return rc;
	} else {
		s.version = SNMP_VERSION_2c;
		s.community = (u_char *) sec->community;
		s.community_len = strlen(sec->community);
	}
	if (!(c = calloc(1, sizeof(*c))))
		return -ENOMEM;
	/* v3: the engine's id is probed here, within s.timeout */
	if (!(c->sess = snmp_sess_open(&s))) {
		snmp_error(&s, &syserr, &liberr, &words);
		free(words);
		free(c);
		return _lib_error(liberr, "session", err, len);
	}
	*ctx = c;
	return 0;
}

/* One answer's variable into v. */
static void _value(const netsnmp_variable_list *var, snmp_value_t *v)
{
	memset(v, 0, sizeof(*v));
	switch (var->type) {
	case ASN_INTEGER:
		if (*var->val.integer < 0) {
			v->negative = true;
			v->value = (uint64_t) -(*var->val.integer);
		} else {
			v->value = (uint64_t) *var->val.integer;
		}
		break;
	case ASN_GAUGE:
	case ASN_COUNTER:
	case ASN_TIMETICKS:
		v->value = (uint64_t) (uint32_t) *var->val.integer;
		break;
	case ASN_COUNTER64:
		v->value = ((uint64_t) var->val.counter64->high << 32) |
			   (uint32_t) var->val.counter64->low;
		break;
	case SNMP_NOSUCHOBJECT:
	case SNMP_NOSUCHINSTANCE:
	case SNMP_ENDOFMIBVIEW:
		v->status = -ENOENT;
		break;
	default:
		v->status = -EPROTO;
	}
}

static int _get(void *ctx, const snmp_oid_t *oids, size_t n,
		snmp_value_t *out, uint64_t deadline_ns, char *msg, size_t len)
{
	net_ctx_t *c = ctx;
	netsnmp_pdu *req, *resp = NULL;
	netsnmp_variable_list *var;
	oid name[SNMP_OID_MAX];
	int status, liberr = 0, syserr = 0, rc = 0;
	char *words = NULL;
	size_t i;

	snmp_sess_session(c->sess)->timeout = _timeout_us(deadline_ns);
	if (!(req = snmp_pdu_create(SNMP_MSG_GET)))
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		for (size_t k = 0; k < oids[i].len; k++)
			name[k] = oids[i].sub[k];
		snmp_add_null_var(req, name, oids[i].len);
	}
	status = snmp_sess_synch_response(c->sess, req, &resp);
	if (status == STAT_TIMEOUT) {
		rc = _lib_error(SNMPERR_TIMEOUT, "GET", msg, len);
		goto out;
	}
	if (status != STAT_SUCCESS || !resp) {
		snmp_sess_error(c->sess, &syserr, &liberr, &words);
		free(words);
		rc = _lib_error(liberr, "GET", msg, len);
		goto out;
	}
	if (resp->errstat != SNMP_ERR_NOERROR) {
		snprintf(msg, len, "GET: the agent answered %s (variable %ld)",
			 snmp_errstring((int) resp->errstat), resp->errindex);
		rc = resp->errstat == SNMP_ERR_TOOBIG ? -E2BIG : -EAGAIN;
		goto out;
	}
	for (i = 0, var = resp->variables; i < n && var;
	     i++, var = var->next_variable)
		_value(var, &out[i]);
	if (i < n) {
		snprintf(msg, len, "GET: the agent answered %zu of %zu variables",
			 i, n);
		rc = -EAGAIN;
	}
out:
	if (resp)
		snmp_free_pdu(resp);
	return rc;
}

static void _close(void *ctx)
{
	net_ctx_t *c = ctx;

	if (!c)
		return;
	snmp_sess_close(c->sess);
	free(c);
}

const snmp_transport_t snmp_net_transport = {
	.name = "net-snmp",
	.open = _open,
	.get = _get,
	.close = _close,
};
