/*
 * fuzz_conf_keys - every key of acct_gather.conf (modbus, bmc, rrd) and
 * ext_sensors.conf, through its back-end's key table (conf_desc.h) and the
 * value parsers of src/common/conf.c, as Slurm's parser hands them over.
 *
 * Input: one byte choosing the table, then lines "Key=Value" (a line
 * without '=' is a key with an empty value).  Invariants:
 *  - a refused value has a message naming the file and the key;
 *  - parse -> print -> parse -> print: a value the printer shows (but a
 *    placeholder such as "(none)") parses again, to the same printed
 *    value, in a fresh configuration given the same keys in the same
 *    order (so model defaults and cross-key rules apply alike);
 *  - the cross-key check passes or explains itself, and freeing is clean.
 */
#include "fuzz_common.h"

#include <errno.h>
#include <strings.h>

#include "bmc_conf.h"
#include "conf_desc.h"
#include "es_conf.h"
#include "modbus_conf.h"
#include "rrd_conf.h"

#define FILE_NAME "fuzz.conf"
#define MAX_SET 64

static const se_conf_desc_t *const descs[] = {
	&modbus_conf_desc, &bmc_conf_desc, &rrd_conf_desc, &es_conf_desc,
};

typedef struct {
	size_t key[MAX_SET];
	size_t n;
} given_t;

/* Set each line's key in conf; remember which keys took their value. */
static void set_lines(const se_conf_desc_t *d, void *conf, char *text,
		      given_t *g)
{
	char *save = NULL, *line, err[1024];

	for (line = strtok_r(text, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		char *eq = strchr(line, '=');
		const char *value = eq ? eq + 1 : "";
		long i;
		int rc;

		if (eq)
			*eq = '\0';
		err[0] = '\0';
		rc = se_conf_set(d, conf, FILE_NAME, line, value, err,
				 sizeof(err));
		if (rc) {
			FUZZ_CHECK(rc < 0 && !strncmp(err, FILE_NAME ": ",
						      strlen(FILE_NAME) + 2),
				   "%s=%s: rc %d, message '%s'", line, value,
				   rc, err);
			if (rc != -ENOENT)
				FUZZ_CHECK(strcasestr(err, line) != NULL,
					   "message '%s' does not name %s",
					   err, line);
			continue;
		}
		i = se_conf_key_index(d, line);
		FUZZ_CHECK(i >= 0, "unknown key %s accepted", line);
		if (g->n < MAX_SET)
			g->key[g->n++] = (size_t) i;
	}
}

static bool placeholder(const char *shown)
{
	return !shown[0] || shown[0] == '(';
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const se_conf_desc_t *d;
	void *a, *b;
	char *text, err[1024], shown[4096], again[4096];
	given_t g = { .n = 0 };

	if (size < 1)
		return 0;
	fuzz_quiet();
	d = descs[data[0] % (sizeof(descs) / sizeof(descs[0]))];
	a = calloc(1, d->size);
	b = calloc(1, d->size);
	text = fuzz_string(data + 1, size - 1);
	if (!a || !b || !text)
		abort();
	d->init(a);
	d->init(b);
	set_lines(d, a, text, &g);

	/* print -> parse -> print, key by key, in the order given */
	for (size_t k = 0; k < g.n; k++) {
		size_t i = g.key[k];
		int rc;

		se_conf_show(d, a, i, shown, sizeof(shown));
		if (placeholder(shown))
			continue;
		rc = se_conf_set_index(d, b, FILE_NAME, i, shown, err,
				       sizeof(err));
		FUZZ_CHECK(rc == 0, "%s: shown as '%s', which is refused: %s",
			   se_conf_key(d, i), shown, err);
	}
	for (size_t k = 0; k < g.n; k++) {
		size_t i = g.key[k];

		se_conf_show(d, a, i, shown, sizeof(shown));
		se_conf_show(d, b, i, again, sizeof(again));
		FUZZ_CHECK(placeholder(shown) || !strcmp(shown, again),
			   "%s: shown as '%s', parsed again it shows '%s'",
			   se_conf_key(d, i), shown, again);
	}

	err[0] = '\0';
	if (se_conf_check(d, a, FILE_NAME, err, sizeof(err)))
		FUZZ_CHECK(err[0] != '\0', "check failed without a message");

	d->free(a);
	d->free(b);
	free(a);
	free(b);
	free(text);
	return 0;
}
