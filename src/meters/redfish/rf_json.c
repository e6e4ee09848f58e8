/*
 * rf_json.c - bounded parsing of Redfish answers, and paths into them
 * (rf_json.h).
 */
#ifdef HAVE_CONFIG_H
#include "se_config.h"
#endif

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rf_json.h"

/* What a peer sent, for a message: printable, at most 40 bytes. */
static void _excerpt(const char *buf, size_t len, char *out, size_t out_len)
{
	size_t i, n = 0;

	for (i = 0; i < len && i < 40 && n + 2 < out_len; i++)
		out[n++] = isprint((unsigned char) buf[i]) ? buf[i] : '.';
	out[n] = '\0';
}

int rf_json_parse(const char *buf, size_t len, const char *uri,
		  int max_depth, json_object **out, char *msg,
		  size_t msg_len)
{
	struct json_tokener *tok;
	enum json_tokener_error jerr;
	json_object *doc;
	char head[48];
	size_t end;

	*out = NULL;
	if (len > RF_JSON_MAX_BYTES) {
		snprintf(msg, msg_len,
			 "%s: answer of %zu bytes, more than the %d accepted",
			 uri, len, RF_JSON_MAX_BYTES);
		return -E2BIG;
	}
	tok = json_tokener_new_ex(max_depth > 0 ? max_depth :
				  RF_JSON_MAX_DEPTH);
	if (!tok) {
		snprintf(msg, msg_len, "%s: out of memory", uri);
		return -ENOMEM;
	}
	doc = json_tokener_parse_ex(tok, buf, (int) len);
	jerr = json_tokener_get_error(tok);
	end = json_tokener_get_parse_end(tok);
	json_tokener_free(tok);

	_excerpt(buf, len, head, sizeof(head));
	if (!doc || jerr != json_tokener_success) {
		json_object_put(doc);
		snprintf(msg, msg_len, "%s: not JSON (%s) in %zu bytes: \"%s\"",
			 uri, jerr == json_tokener_continue ?
			 "the document ends early" :
			 json_tokener_error_desc(jerr), len, head);
		return -EBADMSG;
	}
	while (end < len && isspace((unsigned char) buf[end]))
		end++;
	if (end < len || !json_object_is_type(doc, json_type_object)) {
		json_object_put(doc);
		snprintf(msg, msg_len,
			 "%s: not one JSON object (%s) in %zu bytes: \"%s\"",
			 uri, end < len ? "more after it" : "another type",
			 len, head);
		return -EBADMSG;
	}
	*out = doc;
	return 0;
}

/* The member or element named by one path component [s, s + n). */
static json_object *_step(json_object *node, const char *s, size_t n)
{
	char name[128], *endp;
	json_object *next = NULL;

	if (n >= sizeof(name))
		return NULL;
	memcpy(name, s, n);
	name[n] = '\0';
	if (json_object_is_type(node, json_type_array)) {
		unsigned long i = strtoul(name, &endp, 10);

		if (!n || *endp || i >= json_object_array_length(node))
			return NULL;
		return json_object_array_get_idx(node, i);
	}
	if (!json_object_is_type(node, json_type_object) ||
	    !json_object_object_get_ex(node, name, &next))
		return NULL;
	return next;
}

json_object *rf_json_at(json_object *doc, const char *path)
{
	json_object *node = doc;
	const char *s = path;

	while (node && *s) {
		size_t n = strcspn(s, "/");

		node = _step(node, s, n);
		s += n;
		if (*s == '/')
			s++;
	}
	return node;
}

bool rf_json_number(json_object *doc, const char *path, double *value,
		    char *text, size_t text_len)
{
	json_object *n = rf_json_at(doc, path);

	if (!n || !(json_object_is_type(n, json_type_double) ||
		    json_object_is_type(n, json_type_int)))
		return false;
	*value = json_object_get_double(n);
	if (text)	/* json-c keeps a parsed number's own text */
		snprintf(text, text_len, "%s", json_object_get_string(n));
	return true;
}

const char *rf_json_string(json_object *doc, const char *path)
{
	json_object *n = rf_json_at(doc, path);

	if (!n || !json_object_is_type(n, json_type_string))
		return NULL;
	return json_object_get_string(n);
}

bool rf_json_link(json_object *doc, const char *path, char *uri,
		  size_t uri_len)
{
	json_object *n = rf_json_at(doc, path);
	const char *id;

	if (!n || !json_object_is_type(n, json_type_object))
		return false;
	id = rf_json_string(n, "@odata.id");
	if (!id || id[0] != '/' || strlen(id) >= uri_len ||
	    strlen(id) >= RF_URI_MAX)
		return false;
	snprintf(uri, uri_len, "%s", id);
	return true;
}

size_t rf_json_count(json_object *doc, const char *path)
{
	json_object *n = rf_json_at(doc, path);

	if (!n || !json_object_is_type(n, json_type_array))
		return 0;
	return json_object_array_length(n);
}

unsigned rf_json_decimals(const char *text)
{
	const char *dot = strchr(text, '.'), *e = strpbrk(text, "eE");
	long frac = 0, exp10 = 0;

	if (dot)
		frac = (long) strspn(dot + 1, "0123456789");
	if (e)
		exp10 = strtol(e + 1, NULL, 10);
	frac -= exp10;
	return frac > 0 ? (unsigned) frac : 0;
}
