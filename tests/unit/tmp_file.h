/*
 * tmp_file.h - the files a unit test writes for the code under test to
 * read (configurations, maps, traces, password files), in a directory of
 * the test's own.
 *
 * tmp_file_write() creates or truncates path and writes text;
 * tmp_file_write_mode() then gives it mode (a password file, a file the
 * parser must refuse for its permissions).  Either fails the test when the
 * file cannot be written.
 */
#ifndef SE_TEST_TMP_FILE_H
#define SE_TEST_TMP_FILE_H

#include <check.h>
#include <stdio.h>
#include <sys/stat.h>
#include <sys/types.h>

static inline void tmp_file_write(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	ck_assert_msg(f != NULL, "cannot write %s", path);
	fputs(text, f);
	fclose(f);
}

static inline void tmp_file_write_mode(const char *path, const char *text,
				       mode_t mode)
{
	tmp_file_write(path, text);
	ck_assert_int_eq(chmod(path, mode), 0);
}

#endif
