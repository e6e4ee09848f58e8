/*
 * pcap_state.c - the cluster power cap's state file (pcap_state.h).
 */
#ifdef HAVE_CONFIG_H
#include "se_config.h"
#endif

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "pcap_state.h"

#define FUTURE_SLACK_S	60	/* a file written later than now + this: a
				 * clock gone wrong, ignored */

int pcap_state_format(const pcap_state_t *s, char *buf, size_t len)
{
	int n = snprintf(buf, len,
			 PCAP_STATE_MAGIC "\n"
			 "time=%" PRId64 "\nvalid_until=%" PRId64 "\n"
			 "capping=%s\nsince=%" PRId64 "\n"
			 "cap_w=%.1f\npower_w=%.1f\n"
			 "nodes=%u\ncapped_nodes=%u\n",
			 s->time_s, s->valid_until_s,
			 s->capping ? "yes" : "no", s->since_s,
			 s->cap_w, s->power_w, s->nodes, s->capped_nodes);

	return n < 0 || (size_t)n >= len ? -ENOSPC : n;
}

static int _int(const char *v, int64_t *out)
{
	char *end;

	errno = 0;
	*out = strtoll(v, &end, 10);
	return errno || end == v || *end || *out < 0 ? -EINVAL : 0;
}

static int _real(const char *v, double *out)
{
	char *end;

	errno = 0;
	*out = strtod(v, &end);
	return errno || end == v || *end || !(*out >= 0) ? -EINVAL : 0;
}

/* One key=value line into s: 0, or -EINVAL. */
static int _pair(pcap_state_t *s, const char *k, const char *v)
{
	int64_t x;
	int rv = 0;

	if (!strcmp(k, "time"))
		rv = _int(v, &s->time_s);
	else if (!strcmp(k, "valid_until"))
		rv = _int(v, &s->valid_until_s);
	else if (!strcmp(k, "since"))
		rv = _int(v, &s->since_s);
	else if (!strcmp(k, "capping")) {
		if (strcmp(v, "yes") && strcmp(v, "no"))
			return -EINVAL;
		s->capping = !strcmp(v, "yes");
	} else if (!strcmp(k, "cap_w"))
		rv = _real(v, &s->cap_w);
	else if (!strcmp(k, "power_w"))
		rv = _real(v, &s->power_w);
	else if (!strcmp(k, "nodes") || !strcmp(k, "capped_nodes")) {
		if ((rv = _int(v, &x)) || x > UINT32_MAX)
			return -EINVAL;
		*(k[0] == 'n' ? &s->nodes : &s->capped_nodes) = (unsigned)x;
	}
	return rv;
}

int pcap_state_parse(const char *text, size_t len, pcap_state_t *s,
		     char *err, size_t err_len)
{
	char buf[PCAP_STATE_MAX_LEN + 1], *line, *save = NULL;
	size_t magic = strlen(PCAP_STATE_MAGIC);

	memset(s, 0, sizeof(*s));
	if (len > PCAP_STATE_MAX_LEN || len <= magic ||
	    memcmp(text, PCAP_STATE_MAGIC "\n", magic + 1)) {
		snprintf(err, err_len, "not a state file (\"%s\" expected on "
			 "the first line, at most %d bytes)", PCAP_STATE_MAGIC,
			 PCAP_STATE_MAX_LEN);
		return -EINVAL;
	}
	memcpy(buf, text, len);
	buf[len] = '\0';
	for (line = strtok_r(buf + magic + 1, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		char *eq = strchr(line, '=');

		if (!eq) {
			snprintf(err, err_len, "'%s': key=value expected",
				 line);
			return -EINVAL;
		}
		*eq = '\0';
		if (_pair(s, line, eq + 1)) {
			snprintf(err, err_len, "%s=%s: bad value", line,
				 eq + 1);
			return -EINVAL;
		}
	}
	if (!s->time_s || !s->valid_until_s) {
		snprintf(err, err_len, "time and valid_until are required");
		return -EINVAL;
	}
	return 0;
}

int pcap_state_write(const char *path, const pcap_state_t *s, char *err,
		     size_t err_len)
{
	char text[PCAP_STATE_MAX_LEN], tmp[4096];
	int fd, n = pcap_state_format(s, text, sizeof(text)), rv = 0;

	if (n < 0 || snprintf(tmp, sizeof(tmp), "%s.tmp", path) >=
		     (int)sizeof(tmp)) {
		snprintf(err, err_len, "%s: path too long", path);
		return -ENAMETOOLONG;
	}
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW,
		  0644);
	if (fd < 0 || write(fd, text, (size_t)n) != n || fchmod(fd, 0644))
		rv = errno ? -errno : -EIO;
	if (fd >= 0 && close(fd) && !rv)
		rv = -errno;
	if (!rv && rename(tmp, path))
		rv = -errno;
	if (rv) {
		snprintf(err, err_len, "cannot write %s: %s",
			 fd < 0 ? tmp : path, strerror(-rv));
		if (fd >= 0)
			unlink(tmp);
	}
	return rv;
}

/* In the child: the file's first bytes to the pipe, then _exit.  Only
 * async-signal-safe calls (the caller may have threads). */
static void _child(const char *path, int out)
{
	char buf[PCAP_STATE_MAX_LEN + 1];
	ssize_t n = 0, r;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0) {
		int e = errno;

		(void)!write(out, "E", 1);
		(void)!write(out, &e, sizeof(e));
		_exit(1);
	}
	while (n < (ssize_t)sizeof(buf) &&
	       (r = read(fd, buf + n, sizeof(buf) - (size_t)n)) > 0)
		n += r;
	(void)!write(out, "D", 1);
	(void)!write(out, buf, (size_t)n);
	_exit(0);
}

/* Read what the child sent until EOF or the deadline: the byte count, or
 * -ETIMEDOUT. */
static ssize_t _drain(int fd, char *buf, size_t len, int timeout_ms)
{
	struct timespec t0, t;
	size_t n = 0;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (;;) {
		int left;
		ssize_t r;
		struct pollfd p = { .fd = fd, .events = POLLIN };

		clock_gettime(CLOCK_MONOTONIC, &t);
		left = timeout_ms - (int)((t.tv_sec - t0.tv_sec) * 1000 +
					  (t.tv_nsec - t0.tv_nsec) / 1000000);
		if (left <= 0 || poll(&p, 1, left) == 0)
			return -ETIMEDOUT;
		r = read(fd, buf + n, len - n);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0 || (n += (size_t)r) == len)
			return (ssize_t)n;
	}
}

int pcap_state_read_bounded(const char *path, int timeout_ms,
			    pcap_state_t *s, char *err, size_t err_len)
{
	char buf[PCAP_STATE_MAX_LEN + 2];
	int p[2], e;
	ssize_t n;
	pid_t pid;

	if (pipe(p)) {
		snprintf(err, err_len, "%s: pipe: %s", path, strerror(errno));
		return -errno;
	}
	if ((pid = fork()) < 0) {
		e = errno;
		close(p[0]);
		close(p[1]);
		snprintf(err, err_len, "%s: fork: %s", path, strerror(e));
		return -e;
	}
	if (!pid) {
		close(p[0]);
		_child(path, p[1]);
	}
	close(p[1]);
	n = _drain(p[0], buf, sizeof(buf), timeout_ms);
	close(p[0]);
	if (n == -ETIMEDOUT) {
		/* a child blocked in the kernel (a dead NFS server) dies when
		 * its read returns; it is left, not waited for */
		kill(pid, SIGKILL);
		waitpid(pid, NULL, WNOHANG);
		snprintf(err, err_len, "%s: no answer within %d ms", path,
			 timeout_ms);
		return -ETIMEDOUT;
	}
	waitpid(pid, NULL, 0);	/* it has written and closed: exiting */
	if (n >= 1 + (ssize_t)sizeof(e) && buf[0] == 'E') {
		memcpy(&e, buf + 1, sizeof(e));
		snprintf(err, err_len, "%s: %s", path, strerror(e));
		return -e;
	}
	if (n < 1 || buf[0] != 'D') {
		snprintf(err, err_len, "%s: the reader failed", path);
		return -EIO;
	}
	{
		char why[160];

		if (pcap_state_parse(buf + 1, (size_t)n - 1, s, why,
				     sizeof(why))) {
			snprintf(err, err_len, "%s: %s", path, why);
			return -EINVAL;
		}
	}
	return 0;
}

int pcap_state_notice(const pcap_state_t *s, int64_t now_s, char *buf,
		      size_t len)
{
	int64_t for_s = s->since_s && now_s > s->since_s ?
			now_s - s->since_s : 0;
	char dur[32];
	int n;

	if (!s->capping || now_s > s->valid_until_s ||
	    s->time_s > now_s + FUTURE_SLACK_S)
		return 0;
	if (for_s >= 3600)
		snprintf(dur, sizeof(dur), "%" PRId64 " h %" PRId64 " min",
			 for_s / 3600, for_s % 3600 / 60);
	else if (for_s >= 60)
		snprintf(dur, sizeof(dur), "%" PRId64 " min", for_s / 60);
	else
		snprintf(dur, sizeof(dur), "%" PRId64 " s", for_s);
	n = snprintf(buf, len, "the cluster is power-capped (for %s: drawing "
		     "%.0f W of its %.0f W cap, %u of %u nodes capped); jobs "
		     "may run slower than usual", dur, s->power_w, s->cap_w,
		     s->capped_nodes, s->nodes);
	return n < 0 ? 0 : (size_t)n >= len ? (int)len - 1 : n;
}

int pcap_state_conf_path(const char *conf, char *path, size_t len)
{
	static const char key[] = "PowerCapStateFile";
	char line[4096];
	int rv = -ENOENT;
	FILE *f = fopen(conf, "re");

	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		char *p = line + strspn(line, " \t"), *v, *end;

		if (strncasecmp(p, key, sizeof(key) - 1))
			continue;
		p += sizeof(key) - 1;
		p += strspn(p, " \t");
		if (*p != '=')
			continue;
		v = p + 1 + strspn(p + 1, " \t");
		end = v + strcspn(v, " \t\r\n#");
		*end = '\0';
		if (*v != '/' || snprintf(path, len, "%s", v) >= (int)len) {
			rv = -EINVAL;
			continue;
		}
		rv = 0;
	}
	fclose(f);
	return rv;
}
