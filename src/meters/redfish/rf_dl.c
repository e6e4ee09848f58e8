/*
 * rf_dl.c - the libcurl and json-c entry points the Redfish meter uses,
 * opened on first call (rf_dl.h).  Before a successful load the calls
 * fail as the libraries' own failures do (NULL, an error code), with
 * errno ELIBACC; the functions that take a handle or an object are only
 * reached once one exists, after a load that worked.
 */
#ifdef HAVE_CONFIG_H
#include "se_config.h"
#endif

#include <stdarg.h>

/* our curl_easy_setopt() is a function: no type-checking macro over it */
#define CURL_DISABLE_TYPECHECK 1
#include <curl/curl.h>
#include <json-c/json.h>

#include "rf_dl.h"
#include "se_dynlib.h"

/* ------------------------------------------------------------ libcurl */

static struct {
	CURLcode (*global_init)(long);
	CURL *(*easy_init)(void);
	void (*easy_cleanup)(CURL *);
	CURLcode (*easy_setopt)(CURL *, CURLoption, ...);
	CURLcode (*easy_perform)(CURL *);
	CURLcode (*easy_getinfo)(CURL *, CURLINFO, ...);
	const char *(*easy_strerror)(CURLcode);
	struct curl_slist *(*slist_append)(struct curl_slist *, const char *);
	void (*slist_free_all)(struct curl_slist *);
} cu;

static const se_dynlib_sym_t curl_syms[] = {
	{ "curl_global_init", &cu.global_init },
	{ "curl_easy_init", &cu.easy_init },
	{ "curl_easy_cleanup", &cu.easy_cleanup },
	{ "curl_easy_setopt", &cu.easy_setopt },
	{ "curl_easy_perform", &cu.easy_perform },
	{ "curl_easy_getinfo", &cu.easy_getinfo },
	{ "curl_easy_strerror", &cu.easy_strerror },
	{ "curl_slist_append", &cu.slist_append },
	{ "curl_slist_free_all", &cu.slist_free_all },
};

static se_dynlib_t curl_lib = SE_DYNLIB_INIT(SE_LIBCURL_SONAME, curl_syms);

/* ------------------------------------------------------------ json-c */

static struct {
	struct json_tokener *(*tokener_new_ex)(int);
	void (*tokener_free)(struct json_tokener *);
	json_object *(*tokener_parse_ex)(struct json_tokener *, const char *,
					 int);
	enum json_tokener_error (*tokener_get_error)(struct json_tokener *);
	const char *(*tokener_error_desc)(enum json_tokener_error);
	size_t (*tokener_get_parse_end)(struct json_tokener *);
	json_object *(*get)(json_object *);
	int (*put)(json_object *);
	int (*is_type)(const json_object *, json_type);
	json_bool (*object_get_ex)(const json_object *, const char *,
				   json_object **);
	json_object *(*object_get)(const json_object *, const char *);
	int (*object_add)(json_object *, const char *, json_object *);
	size_t (*array_length)(const json_object *);
	json_object *(*array_get_idx)(const json_object *, size_t);
	double (*get_double)(const json_object *);
	const char *(*get_string)(json_object *);
	json_object *(*new_object)(void);
	json_object *(*new_string)(const char *);
	const char *(*to_json_string_ext)(json_object *, int);
} js;

static const se_dynlib_sym_t json_syms[] = {
	{ "json_tokener_new_ex", &js.tokener_new_ex },
	{ "json_tokener_free", &js.tokener_free },
	{ "json_tokener_parse_ex", &js.tokener_parse_ex },
	{ "json_tokener_get_error", &js.tokener_get_error },
	{ "json_tokener_error_desc", &js.tokener_error_desc },
	{ "json_tokener_get_parse_end", &js.tokener_get_parse_end },
	{ "json_object_get", &js.get },
	{ "json_object_put", &js.put },
	{ "json_object_is_type", &js.is_type },
	{ "json_object_object_get_ex", &js.object_get_ex },
	{ "json_object_object_get", &js.object_get },
	{ "json_object_object_add", &js.object_add },
	{ "json_object_array_length", &js.array_length },
	{ "json_object_array_get_idx", &js.array_get_idx },
	{ "json_object_get_double", &js.get_double },
	{ "json_object_get_string", &js.get_string },
	{ "json_object_new_object", &js.new_object },
	{ "json_object_new_string", &js.new_string },
	{ "json_object_to_json_string_ext", &js.to_json_string_ext },
};

static se_dynlib_t json_lib = SE_DYNLIB_INIT(SE_LIBJSONC_SONAME, json_syms);

/* ------------------------------------------------------------ loading */

int rf_dl_load(char *err, size_t err_len)
{
	if (se_dynlib_require(&json_lib, err, err_len) ||
	    se_dynlib_require(&curl_lib, err, err_len))
		return -1;
	return 0;
}

/* ------------------------------------------------- libcurl wrappers */

CURLcode curl_global_init(long flags)
{
	return se_dynlib_ready(&curl_lib) ? cu.global_init(flags) :
					    CURLE_FAILED_INIT;
}

CURL *curl_easy_init(void)
{
	return se_dynlib_ready(&curl_lib) ? cu.easy_init() : NULL;
}

void curl_easy_cleanup(CURL *h)
{
	if (h)
		cu.easy_cleanup(h);
}

/* The option's number says the type of its one argument (curl.h's
 * CURLOPTTYPE_* ranges); pass it on as that type. */
CURLcode curl_easy_setopt(CURL *h, CURLoption opt, ...)
{
	CURLcode rc;
	va_list ap;

	va_start(ap, opt);
	if (opt < CURLOPTTYPE_OBJECTPOINT)
		rc = cu.easy_setopt(h, opt, va_arg(ap, long));
	else if (opt < CURLOPTTYPE_OFF_T)	/* data or function pointer */
		rc = cu.easy_setopt(h, opt, va_arg(ap, void *));
	else if (opt < CURLOPTTYPE_BLOB)
		rc = cu.easy_setopt(h, opt, va_arg(ap, curl_off_t));
	else
		rc = cu.easy_setopt(h, opt, va_arg(ap, void *));
	va_end(ap);
	return rc;
}

CURLcode curl_easy_perform(CURL *h)
{
	return cu.easy_perform(h);
}

/* Every CURLINFO takes one pointer. */
CURLcode curl_easy_getinfo(CURL *h, CURLINFO info, ...)
{
	CURLcode rc;
	va_list ap;

	va_start(ap, info);
	rc = cu.easy_getinfo(h, info, va_arg(ap, void *));
	va_end(ap);
	return rc;
}

const char *curl_easy_strerror(CURLcode cc)
{
	return se_dynlib_ready(&curl_lib) ? cu.easy_strerror(cc) :
	       se_dynlib_error(&curl_lib);
}

struct curl_slist *curl_slist_append(struct curl_slist *l, const char *s)
{
	return se_dynlib_ready(&curl_lib) ? cu.slist_append(l, s) : NULL;
}

void curl_slist_free_all(struct curl_slist *l)
{
	if (l)
		cu.slist_free_all(l);
}

/* -------------------------------------------------- json-c wrappers */

struct json_tokener *json_tokener_new_ex(int depth)
{
	return se_dynlib_ready(&json_lib) ? js.tokener_new_ex(depth) : NULL;
}

void json_tokener_free(struct json_tokener *tok)
{
	if (tok)
		js.tokener_free(tok);
}

json_object *json_tokener_parse_ex(struct json_tokener *tok, const char *s,
				   int len)
{
	return js.tokener_parse_ex(tok, s, len);
}

enum json_tokener_error json_tokener_get_error(struct json_tokener *tok)
{
	return js.tokener_get_error(tok);
}

const char *json_tokener_error_desc(enum json_tokener_error jerr)
{
	return js.tokener_error_desc(jerr);
}

size_t json_tokener_get_parse_end(struct json_tokener *tok)
{
	return js.tokener_get_parse_end(tok);
}

json_object *json_object_get(json_object *o)
{
	return o ? js.get(o) : NULL;
}

int json_object_put(json_object *o)
{
	return o ? js.put(o) : 0;
}

int json_object_is_type(const json_object *o, json_type type)
{
	return se_dynlib_ready(&json_lib) ? js.is_type(o, type) : 0;
}

json_bool json_object_object_get_ex(const json_object *o, const char *key,
				    json_object **value)
{
	return js.object_get_ex(o, key, value);
}

json_object *json_object_object_get(const json_object *o, const char *key)
{
	return js.object_get(o, key);
}

int json_object_object_add(json_object *o, const char *key,
			   json_object *value)
{
	return js.object_add(o, key, value);
}

size_t json_object_array_length(const json_object *o)
{
	return js.array_length(o);
}

json_object *json_object_array_get_idx(const json_object *o, size_t i)
{
	return js.array_get_idx(o, i);
}

double json_object_get_double(const json_object *o)
{
	return js.get_double(o);
}

const char *json_object_get_string(json_object *o)
{
	return js.get_string(o);
}

json_object *json_object_new_object(void)
{
	return se_dynlib_ready(&json_lib) ? js.new_object() : NULL;
}

json_object *json_object_new_string(const char *s)
{
	return se_dynlib_ready(&json_lib) ? js.new_string(s) : NULL;
}

const char *json_object_to_json_string_ext(json_object *o, int flags)
{
	return js.to_json_string_ext(o, flags);
}
