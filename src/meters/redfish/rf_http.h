/*
 * rf_http.h - HTTP(S) to one Redfish service, for the sampler thread.
 *
 * libcurl (OpenSSL flavour, Debian libcurl4-openssl-dev: the libcurl4
 * package every Debian system with curl already has, and OpenSSL reads
 * the CA files admins and tests make with openssl) on one easy handle kept
 * across reads, so its connection stays open (keep-alive) and a read costs
 * one round trip, not a TCP and TLS handshake.  Every request gets
 * CURLOPT_TIMEOUT_MS from the caller's deadline (at most timeout_ns), and
 * CURLOPT_NOSIGNAL (threads).  Answers are cut at RF_JSON_MAX_BYTES in the
 * write callback and parsed by rf_json_parse().
 *
 * Authentication: a session (POST SessionService/Sessions, then the
 * X-Auth-Token header; a 401 drops the token, logs in again once and
 * retries: a BMC that rebooted forgot it), or HTTP basic on every request
 * when configured (EnergyBMCAuth=basic).  The session is deleted at close
 * (BMCs allow few sessions).  TLS is verified unless tls_verify is false,
 * against ca_file or the system's store.  The password is only ever in
 * the request; no message carries it.
 *
 * Two users: the Redfish meter (GETs, for acct_gather_energy/bmc) and the
 * power cap's redfish knob (src/powercap/pcap_knob_redfish.c: GET and
 * PATCH of a Control).  Messages name the caller's settings (names).
 */
#ifndef SE_RF_HTTP_H
#define SE_RF_HTTP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <json-c/json.h>

typedef enum {
	RF_AUTH_SESSION = 0,
	RF_AUTH_BASIC,
} rf_auth_t;

/* The settings a message names when they are the cause. */
typedef struct {
	const char *credentials;	/* "EnergyBMCUser, EnergyBMCPasswordFile" */
	const char *ca_file;		/* "EnergyBMCCAFile" */
	const char *basic;		/* "EnergyBMCAuth=basic" */
} rf_http_names_t;

typedef struct {
	const char *base;	/* "https://10.0.0.5", "http://127.0.0.1:8000" */
	const char *user;	/* NULL: no authentication */
	const char *password;
	const char *ca_file;	/* NULL: the system's CA store */
	bool tls_verify;
	rf_auth_t auth;
	uint64_t timeout_ns;	/* longest request */
	size_t max_bytes;	/* 0: RF_JSON_MAX_BYTES */
	const rf_http_names_t *names;	/* NULL: acct_gather_energy/bmc's */
} rf_http_conf_t;

typedef struct rf_http rf_http_t;

/* Once per process, before threads use it (curl_global_init): 0 or -EIO. */
int rf_http_global_init(void);

/* A client (conf copied, nothing sent); NULL with errno ENOMEM. */
rf_http_t *rf_http_create(const rf_http_conf_t *conf);

/*
 * GET uri (a path: "/redfish/v1/...") and parse it.  0 and *doc; -ENOENT
 * (404), -EACCES (credentials refused), -EAGAIN (HTTP 5xx or another
 * status, a body that is not JSON or too large: the connection stays
 * usable), -ETIMEDOUT, -EPROTO (TLS: the certificate does not verify),
 * -ECONNREFUSED, -EIO; msg names the URI, and for an HTTP error the
 * service's own words (its Redfish error's message).  Each request ends
 * by deadline_ns and within timeout_ns; a call is at most three requests
 * (a login, the request, the request again after a renewed login).
 */
int rf_http_get(rf_http_t *h, const char *uri, uint64_t deadline_ns,
		json_object **doc, char *msg, size_t msg_len);

/*
 * PATCH uri with json (a JSON object's text), authenticated as a GET is:
 * 0 on any 2xx (the answer's body is not read), else the codes and
 * messages of rf_http_get.
 */
int rf_http_patch(rf_http_t *h, const char *uri, const char *json,
		  uint64_t deadline_ns, char *msg, size_t msg_len);

/* Delete the session (within 0.5 s, best effort) and close the
 * connection; the next get logs in again. */
void rf_http_close(rf_http_t *h);

/* Close and free (wipes the password). */
void rf_http_destroy(rf_http_t *h);

/* Requests made, logins made (for tests and the bench). */
unsigned long rf_http_requests(const rf_http_t *h);
unsigned long rf_http_logins(const rf_http_t *h);

#endif
