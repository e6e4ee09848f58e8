/*
 * rf_json.h - Redfish documents: parsed with json-c within bounds, and the
 * few ways the meter looks into them.
 *
 * A BMC is a peer we do not control: every answer is parsed with a limit
 * on its size (the transport stops reading at RF_JSON_MAX_BYTES) and on its
 * nesting (RF_JSON_MAX_DEPTH, json-c's own tokener limit), and every error
 * names the URI it came from.  No I/O here: the functions work on buffers
 * and json objects, so the unit tests feed them the DMTF's mockups.
 */
#ifndef SE_RF_JSON_H
#define SE_RF_JSON_H

#include <stdbool.h>
#include <stddef.h>

#include <json-c/json.h>

/* Largest answer read (a Sensors collection expanded is about 60 KiB). */
#define RF_JSON_MAX_BYTES	(1024 * 1024)
/* Deepest nesting accepted (Redfish resources nest under 10). */
#define RF_JSON_MAX_DEPTH	32
/* Longest URI kept (an @odata.id). */
#define RF_URI_MAX		256

/*
 * Parse len bytes of buf (the answer to uri) into *out (release with
 * json_object_put).  At most max_depth levels of nesting (0: the default
 * RF_JSON_MAX_DEPTH).  The document must be one JSON object, nothing
 * after it but white space.  Returns 0, -EBADMSG ("URI: not JSON: ..."),
 * -E2BIG (longer than RF_JSON_MAX_BYTES) or -ENOMEM, with msg.
 */
int rf_json_parse(const char *buf, size_t len, const char *uri,
		  int max_depth, json_object **out, char *msg,
		  size_t msg_len);

/*
 * The node at path under doc: path is '/'-separated member names, a
 * number indexes an array ("PowerControl/0/PowerConsumedWatts"); "" is
 * doc itself.  NULL when any part is missing or of the wrong kind.
 */
json_object *rf_json_at(json_object *doc, const char *path);

/*
 * A number at path (a JSON int or double; null or a string is not):
 * true and *value, and (text, if not NULL) the number as the BMC wrote it,
 * for its decimals.
 */
bool rf_json_number(json_object *doc, const char *path, double *value,
		    char *text, size_t text_len);

/* A string at path, or NULL. */
const char *rf_json_string(json_object *doc, const char *path);

/*
 * The "@odata.id" of the link at path ("PowerSubsystem",
 * "Members/3"), copied into uri: true, or false when absent, not a
 * string, longer than RF_URI_MAX - 1 or not an absolute path.
 */
bool rf_json_link(json_object *doc, const char *path, char *uri,
		  size_t uri_len);

/* Number of elements of the array at path (0: none or not an array). */
size_t rf_json_count(json_object *doc, const char *path);

/*
 * Decimals written in a number's text ("325.675" 3, "12" 0, "1.5e-2" 3,
 * "2e3" 0): the finest step the BMC shows.
 */
unsigned rf_json_decimals(const char *text);

#endif
