/*
 * freq_history.h - the history store the min_energy/min_time policies read.
 *
 * A text file, one completed run per line, fields separated by blanks:
 *
 *   # se-cpufreq-history 1
 *   # key                 khz      elapsed_s  energy_j  [jobid]
 *   alice/lulesh          2400000  100.0      30000     1234
 *
 * key is USER/APP: APP is the job's --energy-tag, else its job name (no
 * blanks; the writer replaces them with '_').  Lines starting with '#' and
 * blank lines are ignored; a malformed line is skipped and counted (one bad
 * line never hides the rest).  The file is written by tools outside the
 * submission path (se-cpufreq-history from sacct, se-cpufreq-sweep) by
 * writing a temporary file and renaming it, so readers never see half a
 * file.  Reading at submission never touches the database.
 */
#ifndef SE_FREQ_HISTORY_H
#define SE_FREQ_HISTORY_H

#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "freq_model.h"

typedef struct {
	char *key;
	freq_run_t run;
} freq_hist_entry_t;

typedef struct {
	char *path;
	time_t mtime;		/* of the file when loaded */
	off_t size;
	freq_hist_entry_t *e;
	size_t n, cap;
	unsigned bad_lines;
} freq_history_t;

void freq_history_init(freq_history_t *h);
void freq_history_free(freq_history_t *h);

/* Load path into h (replacing its contents).  Returns 0 or -errno (err
 * says "PATH: reason"). */
int freq_history_load(freq_history_t *h, const char *path, char *err,
		      size_t err_len);

/* Is path a valid history file?  freq_history_load()'s answer, nothing
 * kept (se-conf-check). */
int freq_history_check_file(const char *path, char *err, size_t err_len);

/* Reload only when the file's mtime or size changed since the last load.
 * Returns 1 when reloaded, 0 when unchanged, -errno on error (h kept). */
int freq_history_refresh(freq_history_t *h, const char *path, char *err,
			 size_t err_len);

/* Append a run in memory (key copied).  0 or -ENOMEM. */
int freq_history_add(freq_history_t *h, const char *key,
		     const freq_run_t *run);

/* Copy the runs of key into out (at most max); returns how many matched. */
size_t freq_history_runs(const freq_history_t *h, const char *key,
			 freq_run_t *out, size_t max);

/* The key for a user and an application (tag if non-empty, else job
 * name): "user/app" with blanks and '/' in app replaced by '_'. */
void freq_history_key(const char *user, const char *tag, const char *job_name,
		      char *out, size_t out_len);

#endif
