/*
 * se_lines.h - a line reader over a non-blocking socket: the framing of
 * our messages over TCP (se_munge.h: one MUNGE credential a line).
 * Slurm-free, munge-free.
 */
#ifndef SE_LINES_H
#define SE_LINES_H

#include <stddef.h>

/* A MUNGE credential of a few hundred bytes of payload is well under
 * this. */
#define SE_LINE_MAX	4096

typedef struct {
	char buf[2 * SE_LINE_MAX];
	size_t len;
} se_lines_t;

/* Read what fd has (non-blocking).  1 while open, 0 at EOF, -errno. */
int se_lines_fill(se_lines_t *l, int fd);

/* The next whole line (its newline cut) into line: 1, 0 none yet, or
 * -EMSGSIZE for a line longer than SE_LINE_MAX (the peer is broken). */
int se_lines_next(se_lines_t *l, char *line, size_t len);

#endif /* SE_LINES_H */
