/*
 * hung_dns.h - a resolver that never answers, for the tests of lookups
 * bounded by a deadline (included by the test programs that need it).
 *
 * hung_dns_setup(), called in main() before any thread or lookup, moves
 * the process into a mount namespace of its own (root only) and
 * bind-mounts over /etc/nsswitch.conf ("hosts: files dns"), /etc/hosts (the
 * names in HUNG_DNS_HOSTS_NAMES at 127.0.0.1) and /etc/resolv.conf (one
 * server, HUNG_DNS_ADDR, where a UDP socket is bound that never replies: a
 * port nobody listens on would be refused at once).  Every other name then
 * hangs in the resolver for its timeout (1 s, 1 attempt).  Only loopback
 * traffic; the host's files are untouched (the namespace dies with us).
 */
#ifndef SE_TEST_HUNG_DNS_H
#define SE_TEST_HUNG_DNS_H

#ifndef _GNU_SOURCE
#define _GNU_SOURCE	/* unshare */
#endif

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <sched.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <unistd.h>

#define HUNG_DNS_ADDR		"127.83.0.53"
#define HUNG_DNS_HOSTS_NAME	"meter.hosts.test"
#define HUNG_DNS_HOSTS_NAMES	HUNG_DNS_HOSTS_NAME " bmc.hosts.test"
#define HUNG_DNS_HUNG_NAME	"meter.hung.test"
/* How long the resolver takes to give up a hung lookup (resolv.conf) */
#define HUNG_DNS_RESOLVER_S	1

static char hung_dns_dir[64];

/* Write one file of the fake /etc into hung_dns_dir. */
static int _hung_dns_file(const char *name, const char *text, char *path,
			  size_t len)
{
	FILE *f;

	snprintf(path, len, "%s/%s", hung_dns_dir, name);
	if (!(f = fopen(path, "w")))
		return -1;
	fputs(text, f);
	return fclose(f) ? -1 : 0;
}

/* Bind-mount a file of hung_dns_dir over /etc/<name>. */
static int _hung_dns_over(const char *name, const char *text, char *why,
			  size_t why_len)
{
	char src[128], dst[128];

	snprintf(dst, sizeof(dst), "/etc/%s", name);
	if (_hung_dns_file(name, text, src, sizeof(src)) ||
	    mount(src, dst, "none", MS_BIND, NULL)) {
		snprintf(why, why_len, "bind-mount over %s: %s", dst,
			 strerror(errno));
		return -1;
	}
	return 0;
}

/* A UDP socket on HUNG_DNS_ADDR:53 that is never read (kept open). */
static int _hung_dns_socket(char *why, size_t why_len)
{
	struct sockaddr_in sa = { .sin_family = AF_INET,
				  .sin_port = htons(53) };
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);

	inet_pton(AF_INET, HUNG_DNS_ADDR, &sa.sin_addr);
	if (fd < 0 || bind(fd, (struct sockaddr *) &sa, sizeof(sa))) {
		snprintf(why, why_len, "bind %s:53: %s", HUNG_DNS_ADDR,
			 strerror(errno));
		if (fd >= 0)
			close(fd);
		return -1;
	}
	return 0;
}

/* Set it up; false (reason in why) when it cannot be: skip those tests. */
static bool hung_dns_setup(char *why, size_t why_len)
{
	if (geteuid() != 0) {
		snprintf(why, why_len,
			 "not root: a private /etc/resolv.conf needs a mount namespace");
		return false;
	}
	snprintf(hung_dns_dir, sizeof(hung_dns_dir), "/tmp/se-hung-dns.XXXXXX");
	if (!mkdtemp(hung_dns_dir)) {
		snprintf(why, why_len, "mkdtemp: %s", strerror(errno));
		return false;
	}
	if (unshare(CLONE_NEWNS) ||
	    mount("none", "/", "none", MS_REC | MS_PRIVATE, NULL)) {
		snprintf(why, why_len, "private mount namespace: %s",
			 strerror(errno));
		return false;
	}
	return _hung_dns_socket(why, why_len) == 0 &&
	       _hung_dns_over("nsswitch.conf", "hosts: files dns\n", why,
			      why_len) == 0 &&
	       _hung_dns_over("hosts",
			      "127.0.0.1 localhost " HUNG_DNS_HOSTS_NAMES "\n"
			      "::1 ip6-localhost\n", why, why_len) == 0 &&
	       _hung_dns_over("resolv.conf",
			      "nameserver " HUNG_DNS_ADDR "\n"
			      "options timeout:1 attempts:1\n", why,
			      why_len) == 0;
}

/* Remove the files (the mounts go with the namespace at exit). */
static void hung_dns_cleanup(void)
{
	static const char *const names[] = { "nsswitch.conf", "hosts",
					     "resolv.conf" };
	char path[128];
	size_t i;

	if (!*hung_dns_dir)
		return;
	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		snprintf(path, sizeof(path), "%s/%s", hung_dns_dir, names[i]);
		unlink(path);
	}
	rmdir(hung_dns_dir);
}

#endif
