/*
 * se_lines.c - lines out of a non-blocking socket (se_lines.h).
 */
#ifdef HAVE_CONFIG_H
#include "se_config.h"
#endif

#include <errno.h>
#include <string.h>
#include <unistd.h>

#include "se_lines.h"

int se_lines_fill(se_lines_t *l, int fd)
{
	ssize_t got;

	if (l->len == sizeof(l->buf))
		return -EMSGSIZE;
	got = read(fd, l->buf + l->len, sizeof(l->buf) - l->len);
	if (got < 0)
		return errno == EAGAIN || errno == EINTR ? 1 : -errno;
	if (!got)
		return 0;
	l->len += got;
	return 1;
}

int se_lines_next(se_lines_t *l, char *line, size_t len)
{
	char *nl = memchr(l->buf, '\n', l->len);
	size_t n;

	if (!nl)
		return l->len >= SE_LINE_MAX ? -EMSGSIZE : 0;
	n = nl - l->buf;
	if (n >= len || n >= SE_LINE_MAX)
		return -EMSGSIZE;
	memcpy(line, l->buf, n);
	line[n] = '\0';
	l->len -= n + 1;
	memmove(l->buf, nl + 1, l->len);
	return 1;
}
