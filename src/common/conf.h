/*
 * conf.h - checking configuration values, with errors an admin can act on.
 *
 * Every parser takes the file and key it is checking so that its error names
 * the file, the key and the value, e.g.
 *   acct_gather.conf: EnergyModbusFrequency=abc: not a number of seconds
 * Parsers return 0 or -EINVAL and write the message into err (err_len bytes).
 * Nothing here knows Slurm: the plugin glue hands over the strings Slurm's
 * own parser collected.
 */
#ifndef SE_CONF_H
#define SE_CONF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

typedef struct {
	const char *file;	/* "acct_gather.conf", or a map file's path */
	const char *key;	/* "EnergyModbusFrequency" */
	unsigned line;		/* 0 when not known */
} conf_where_t;

/*
 * "FILE[:LINE]: KEY=VALUE: " and fmt into err; returns rc.  The one
 * message shape of every checker here, for the checks a key table adds.
 */
int conf_fail(const conf_where_t *w, const char *value, char *err,
	      size_t err_len, int rc, const char *fmt, ...)
	__attribute__((format(printf, 6, 7)));

/*
 * Seconds with fractions ("2", "0.5", ".25") into ns, within
 * [min_ns, max_ns].  Parsed exactly in decimal (0.1 is 100000000 ns); more
 * than 9 fraction digits, signs, exponents and units are refused:
 *   "FILE: KEY=VALUE: not a number of seconds"
 *   "FILE: KEY=VALUE: must be between 0.1 and 3600 seconds"
 */
int conf_seconds_ns(const conf_where_t *w, const char *value,
		    uint64_t min_ns, uint64_t max_ns, uint64_t *out,
		    char *err, size_t err_len);

/* Milliseconds (an integer) into ns, within [min_ms, max_ms].
 * "not a whole number of milliseconds", "must be between A and B
 * milliseconds". */
int conf_millis_ns(const conf_where_t *w, const char *value,
		   uint64_t min_ms, uint64_t max_ms, uint64_t *out,
		   char *err, size_t err_len);

/* An unsigned integer (decimal, or 0x hex) within [min, max].  A leading
 * 0 is still decimal ("010" is ten), no sign or spaces.  "not an unsigned
 * integer (decimal, or hex with 0x)", "must be between A and B". */
int conf_uint(const conf_where_t *w, const char *value, uint64_t min,
	      uint64_t max, uint64_t *out, char *err, size_t err_len);

/* A finite real number within [min, max] (strtod syntax).  "not a
 * number", "not a finite number", "must be between %g and %g". */
int conf_double(const conf_where_t *w, const char *value, double min,
		double max, double *out, char *err, size_t err_len);

/* yes/no/true/false/1/0 (case-insensitive).  "not a boolean (yes/no,
 * true/false, 1/0)". */
int conf_bool(const conf_where_t *w, const char *value, bool *out,
	      char *err, size_t err_len);

/* One of a NULL-terminated list of names (case-insensitive); *out = index.
 * The error lists the allowed names: "must be one of: tcp, rtu". */
int conf_enum(const conf_where_t *w, const char *value,
	      const char *const *names, int *out, char *err, size_t err_len);

/* A single word (an address, a host name, a hostlist): not empty, no
 * blank or control character.  "empty", "contains a blank or a control
 * character". */
int conf_word(const conf_where_t *w, const char *value, char *err,
	      size_t err_len);

/* The PDU poller's address (EnergySNMPPoller, EnergyBMCPoller): HOST:PORT
 * or [V6ADDR]:PORT, PORT 1-65535.  "not HOST:PORT (the PDU poller's
 * address)", "bad port (1-65535)". */
int conf_poller_addr(const conf_where_t *w, const char *value, char *err,
		     size_t err_len);

/* A copy of value into *dst, the old string freed: 0 or -ENOMEM (*dst
 * then unchanged).  The one string setter of every key table. */
int conf_set_str(char **dst, const char *value);

/* Is name one of the words of the comma list (exactly)? */
bool conf_in_list(const char *list, const char *name);

/* An absolute path (slurmd's working directory is no base): 0, or -EINVAL
 * and "FILE: KEY=VALUE: must be an absolute path". */
int conf_abs_path(const conf_where_t *w, const char *value, char *err,
		  size_t err_len);

/* Not empty: 0, or -EINVAL and "FILE: KEY=: empty". */
int conf_nonempty(const conf_where_t *w, const char *value, char *err,
		  size_t err_len);

/* A template that expands (conf_expand) with a placeholder node name:
 * bad % escapes are refused at load time, not on the first read. */
int conf_template(const conf_where_t *w, const char *value, char *err,
		  size_t err_len);

/*
 * Expand %n (node name) and %% in a template into out (out_len bytes).
 * Returns 0, or -ENAMETOOLONG / -EINVAL (unknown % escape, named in err;
 * a trailing lone %; %n with node NULL).  out is a (possibly partial)
 * NUL-terminated string even on error.
 */
int conf_expand(const conf_where_t *w, const char *tmpl, const char *node,
		char *out, size_t out_len, char *err, size_t err_len);

/*
 * Read a "key=value key=value ..." line file (e.g. a per-node map): for each
 * non-blank, non-comment line, call fn with the line number and the parsed
 * pairs.  Pairs are separated by blanks; a '#' where a pair would start
 * begins a comment (so Color=#fff is a value).  A value may be empty
 * (Key=) or "double quoted", with \" and \\ inside; keys are never empty.
 * The pairs point into a line buffer valid only during the call.
 * Returns 0, the first non-zero fn result (fn writes err itself), -EINVAL
 * for a malformed line ("map:4: 'junk': expected key=value"), or -errno
 * for an unreadable file ("map: No such file or directory").
 */
typedef struct {
	char *key;
	char *value;
} conf_pair_t;

typedef int (*conf_line_fn)(void *arg, const char *path, unsigned line,
			    const conf_pair_t *pairs, size_t n_pairs,
			    char *err, size_t err_len);

int conf_read_pairs_file(const char *path, conf_line_fn fn, void *arg,
			 char *err, size_t err_len);

/* path opened for reading, err cleared; or NULL with *rc the negative
 * errno and err "PATH: reason" (err may be NULL).  The readers of files
 * named in a configuration (maps, power traces) say a missing one alike. */
FILE *conf_open_read(const char *path, int *rc, char *err, size_t err_len);

/* Check a secret file: a regular file (symlinks followed) owned by the
 * caller's effective uid, no group/other access.  Returns 0, -EPERM (owner
 * or mode, e.g. "mode 0640 lets group or others access it; chmod 600 it"),
 * -EINVAL (not a regular file) or -errno from stat(2). */
int conf_check_secret_file(const conf_where_t *w, const char *path,
			   char *err, size_t err_len);

#endif
