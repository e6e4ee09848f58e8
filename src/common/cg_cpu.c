/*
 * cg_cpu.c - CPU time of the jobs and steps on a node, from their cgroups.
 *
 * See cg_cpu.h for the layouts.  Each file is read whole with one read(2)
 * (cgroup files are small and generated at open), so a scan of a node with
 * 128 steps costs a few hundred small reads.
 */
#ifdef HAVE_CONFIG_H
#include "se_config.h"
#endif

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cg_cpu.h"
#include "se_array.h"

#define CG_DEFAULT_MOUNT	"/sys/fs/cgroup"

/* ------------------------------------------------------------ helpers */

/* File dir/name into buf (NUL-terminated); bytes read or -errno. */
static ssize_t _read_file(const char *dir, const char *name, char *buf,
			  size_t len)
{
	char path[PATH_MAX];
	ssize_t n;
	int fd;

	if (snprintf(path, sizeof(path), "%s/%s", dir, name) >=
	    (int) sizeof(path))
		return -ENAMETOOLONG;
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
		return -errno;
	n = read(fd, buf, len - 1);
	if (n < 0)
		n = -errno;
	else
		buf[n] = '\0';
	close(fd);
	return n;
}

static int _parse_u64(const char *s, uint64_t *out)
{
	char *end;

	errno = 0;
	if (*s < '0' || *s > '9')
		return -EINVAL;
	*out = strtoull(s, &end, 10);
	if (errno || (*end && *end != '\n' && *end != ' '))
		return -EINVAL;
	return 0;
}

/*
 * CPU time of the cgroup at dir: cpuacct.usage (v1, ns) or cpu.stat's
 * usage_usec (v2).  0 or -errno (-ENOENT: neither file).
 */
static int _cpu_ns(const char *dir, uint64_t *ns)
{
	char buf[1024], *p;
	ssize_t n;

	n = _read_file(dir, "cpuacct.usage", buf, sizeof(buf));
	if (n >= 0)
		return _parse_u64(buf, ns);
	if (n != -ENOENT)
		return (int) n;
	n = _read_file(dir, "cpu.stat", buf, sizeof(buf));
	if (n < 0)
		return (int) n;
	for (p = buf; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL) {
		uint64_t us;

		if (strncmp(p, "usage_usec ", 11))
			continue;
		if (_parse_u64(p + 11, &us))
			return -EINVAL;
		*ns = us * 1000;
		return 0;
	}
	return -EINVAL;
}

/* Where a v1 cpuacct directory's cpuset twin is, or "" when not v1. */
static void _cpuset_twin(const char *dir, char *buf, size_t len)
{
	static const char *const ctl[] = { "/cpuacct/", "/cpu,cpuacct/",
					   "/cpuacct,cpu/" };
	const char *p = NULL;
	size_t i;

	buf[0] = '\0';
	for (i = 0; i < sizeof(ctl) / sizeof(ctl[0]) && !p; i++)
		if ((p = strstr(dir, ctl[i])))
			break;
	if (!p)
		return;
	if (snprintf(buf, len, "%.*s/cpuset/%s", (int) (p - dir), dir,
		     p + strlen(ctl[i])) >= (int) len)
		buf[0] = '\0';
}

/* CPUs of the cgroup at dir (v2 file, else the v1 cpuset twin); 0 unknown. */
static uint32_t _ncpus(const char *dir)
{
	char buf[4096], twin[PATH_MAX];
	uint32_t n = 0;

	if (_read_file(dir, "cpuset.cpus.effective", buf, sizeof(buf)) > 0 &&
	    !cg_count_cpus(buf, &n))
		return n;
	_cpuset_twin(dir, twin, sizeof(twin));
	if (twin[0] && _read_file(twin, "cpuset.cpus", buf, sizeof(buf)) > 0 &&
	    !cg_count_cpus(buf, &n))
		return n;
	return 0;
}

static int _add(cg_scan_t *s, uint32_t job, uint32_t step, uint64_t cpu_ns,
		uint32_t ncpus)
{
	if (se_array_room(&s->e, s->n, &s->cap, sizeof(s->e[0]), 64))
		return -ENOMEM;
	s->e[s->n++] = (cg_entry_t) { .job_id = job, .step_id = step,
				      .cpu_ns = cpu_ns, .ncpus = ncpus };
	return 0;
}

/* "job_<n>" (prefix "job_") etc. into n; false when name is not one. */
static bool _named_id(const char *name, const char *prefix, uint32_t *id)
{
	size_t len = strlen(prefix);
	uint64_t v;

	if (strncmp(name, prefix, len) || _parse_u64(name + len, &v) ||
	    v > UINT32_MAX)
		return false;
	*id = (uint32_t) v;
	return true;
}

static int _join(char *buf, size_t len, const char *dir, const char *name)
{
	return snprintf(buf, len, "%s/%s", dir, name) >= (int) len ?
	       -ENAMETOOLONG : 0;
}

/* Steps under job directory dir. */
static int _scan_job(cg_scan_t *s, const char *dir, uint32_t job)
{
	char path[PATH_MAX];
	struct dirent *d;
	uint64_t ns;
	DIR *dp;
	int rc = 0;

	if (_cpu_ns(dir, &ns))
		return 0;		/* ended during the walk */
	if ((rc = _add(s, job, CG_JOB_LEVEL, ns, _ncpus(dir))))
		return rc;
	if (!(dp = opendir(dir)))
		return 0;
	while (!rc && (d = readdir(dp))) {
		uint32_t step;

		if (strncmp(d->d_name, "step_", 5) ||
		    cg_step_id(d->d_name + 5, &step) ||
		    _join(path, sizeof(path), dir, d->d_name) ||
		    _cpu_ns(path, &ns))
			continue;
		rc = _add(s, job, step, ns, 0);
	}
	closedir(dp);
	return rc;
}

/* ------------------------------------------------------------ SLUIDs */

static const char *cg_proc = "/proc";

void cg_set_proc_dir(const char *dir)
{
	cg_proc = dir ? dir : "/proc";
}

/*
 * The job id in a slurmstepd's title, "slurmstepd: [1234.0]" (also
 * "[1234.batch]", "[1234.0 stepmgr]", a heterogeneous component's
 * "[1234+1.0]"): slurmstepd sets it from the step's id as it starts
 * (slurmstepd.c, _set_job_log_prefix()).  0 or -EINVAL.
 */
int cg_stepd_title_job(const char *title, uint32_t *job)
{
	const char *p = strstr(title, "[");
	uint64_t v = 0;
	int digits = 0;

	if (!p || strncmp(title, "slurmstepd:", 11))
		return -EINVAL;
	for (p++; *p >= '0' && *p <= '9' && digits < 11; p++, digits++)
		v = v * 10 + (uint64_t) (*p - '0');
	if (!digits || digits > 10 || v == 0 || v > UINT32_MAX ||
	    (*p != '.' && *p != '+'))
		return -EINVAL;
	*job = (uint32_t) v;
	return 0;
}

/* The job id from the slurmstepd in step directory step (v2: its "slurm"
 * leaf holds the step's slurmstepd and nothing else). */
static int _stepd_job(const char *step, uint32_t *job)
{
	char path[PATH_MAX], buf[256];
	ssize_t n;
	long pid;

	if (_join(path, sizeof(path), step, "slurm") ||
	    _read_file(path, "cgroup.procs", buf, sizeof(buf)) <= 0)
		return -ENOENT;
	pid = strtol(buf, NULL, 10);
	if (pid <= 0 || snprintf(path, sizeof(path), "%s/%ld", cg_proc, pid) >=
			(int) sizeof(path))
		return -ENOENT;
	if ((n = _read_file(path, "cmdline", buf, sizeof(buf))) <= 0)
		return -ENOENT;
	/* setproctitle() may leave NULs between what it wrote and argv's end */
	for (ssize_t i = 0; i < n; i++)
		if (!buf[i])
			buf[i] = ' ';
	return cg_stepd_title_job(buf, job);
}

/* A SLUID-named job directory's job id: remembered from an earlier scan,
 * or from any of its steps' slurmstepd (between steps of a job without
 * PrologFlags=Contain there may be none: then remembered, or not read). */
static int _sluid_job(cg_scan_t *s, const char *dir, const char *sluid,
		      uint32_t *job)
{
	struct dirent *d;
	DIR *dp;
	int rc = -ENOENT;

	for (size_t i = 0; i < s->nsluid; i++)
		if (!strcmp(s->sluid[i].name, sluid)) {
			*job = s->sluid[i].job_id;
			s->sluid[i].seen = true;
			return 0;
		}
	if (!(dp = opendir(dir)))
		return -ENOENT;
	while (rc && (d = readdir(dp))) {
		char path[PATH_MAX];

		if (!strncmp(d->d_name, "step_", 5) &&
		    !_join(path, sizeof(path), dir, d->d_name))
			rc = _stepd_job(path, job);
	}
	closedir(dp);
	/* remembered while there is room (a SLUID is 14 characters) */
	if (rc || s->nsluid == sizeof(s->sluid) / sizeof(s->sluid[0]) ||
	    strlen(sluid) >= sizeof(s->sluid[0].name))
		return rc;
	memcpy(s->sluid[s->nsluid].name, sluid, strlen(sluid) + 1);
	s->sluid[s->nsluid].job_id = *job;
	s->sluid[s->nsluid++].seen = true;
	return 0;
}

/* Forget the SLUIDs of jobs gone since the last scan. */
static void _sluid_prune(cg_scan_t *s)
{
	size_t kept = 0;

	for (size_t i = 0; i < s->nsluid; i++)
		if (s->sluid[i].seen) {
			s->sluid[kept] = s->sluid[i];
			s->sluid[kept++].seen = false;
		}
	s->nsluid = kept;
}

/* job_* under dir; with descend, also under uid_* (v1). */
static int _scan_dir(cg_scan_t *s, const char *dir, bool descend)
{
	char path[PATH_MAX];
	struct dirent *d;
	DIR *dp;
	int rc = 0;

	if (!(dp = opendir(dir)))
		return -errno;
	while (!rc && (d = readdir(dp))) {
		uint32_t id;

		if (d->d_name[0] == '.' ||
		    _join(path, sizeof(path), dir, d->d_name))
			continue;
		if (_named_id(d->d_name, "job_", &id))
			rc = _scan_job(s, path, id);
		else if (cg_is_sluid(d->d_name)) {
			s->sluid_jobs++;
			if (!_sluid_job(s, path, d->d_name, &id))
				rc = _scan_job(s, path, id);
			else
				s->sluid_unread++;
		}
		else if (descend && _named_id(d->d_name, "uid_", &id))
			rc = _scan_dir(s, path, false);
	}
	closedir(dp);
	/* a uid_ directory removed under us is not an error */
	return (rc == -ENOENT && !descend) ? 0 : rc;
}

/* ------------------------------------------------------------ public */

int cg_step_id(const char *name, uint32_t *step_id)
{
	static const struct {
		const char *name;
		uint32_t id;
	} named[] = {
		{ "batch", CG_STEP_BATCH },
		{ "extern", CG_STEP_EXTERN },
		{ "interactive", CG_STEP_INTERACTIVE },
	};
	char *end;
	unsigned long v;

	for (size_t i = 0; i < sizeof(named) / sizeof(named[0]); i++)
		if (!strcmp(name, named[i].name)) {
			*step_id = named[i].id;
			return 0;
		}
	if (*name < '0' || *name > '9')
		return -EINVAL;
	errno = 0;
	v = strtoul(name, &end, 10);
	/* "0+1": component 1 of heterogeneous step 0 */
	if (errno || v >= CG_STEP_INTERACTIVE ||
	    (*end && (*end != '+' || end[1] < '0' || end[1] > '9')))
		return -EINVAL;
	*step_id = (uint32_t) v;
	return 0;
}

bool cg_is_sluid(const char *name)
{
	/* Crockford's base 32 as Slurm's sluid.c prints it (no I, L, O, U) */
	static const char cb32[] = "0123456789ABCDEFGHJKMNPQRSTVWXYZ";

	if ((name[0] != 's' && name[0] != 'S') || strlen(name) != 14)
		return false;
	for (int i = 1; i < 14; i++) {
		char c = name[i];

		if (c >= 'a' && c <= 'z')
			c = (char) (c - 'a' + 'A');
		if (!strchr(cb32, c))
			return false;
	}
	return true;
}

int cg_count_cpus(const char *list, uint32_t *n)
{
	const char *p = list;
	uint32_t count = 0;

	while (*p && *p != '\n') {
		char *end;
		unsigned long a, b;

		if (*p < '0' || *p > '9')
			return -EINVAL;
		a = b = strtoul(p, &end, 10);
		if (*end == '-') {
			if (end[1] < '0' || end[1] > '9')
				return -EINVAL;
			b = strtoul(end + 1, &end, 10);
		}
		if (b < a || b - a >= 1u << 20)
			return -EINVAL;
		count += (uint32_t) (b - a + 1);
		p = end;
		if (*p == ',')
			p++;
		else if (*p && *p != '\n')
			return -EINVAL;
	}
	*n = count;
	return 0;
}

int cg_scan(const char *root, cg_scan_t *out)
{
	uint64_t ns;
	int rc;

	out->n = 0;
	out->sluid_jobs = 0;
	out->sluid_unread = 0;
	out->have_root = false;
	out->root_cpu_ns = 0;
	out->root_ncpus = 0;
	rc = _scan_dir(out, root, true);
	_sluid_prune(out);
	if (rc)
		return rc;
	if (!_cpu_ns(root, &ns)) {
		out->have_root = true;
		out->root_cpu_ns = ns;
	}
	out->root_ncpus = _ncpus(root);
	return 0;
}

void cg_scan_free(cg_scan_t *s)
{
	free(s->e);
	s->e = NULL;
	s->n = s->cap = 0;
	s->nsluid = 0;
}

/* "<mount>/<rel>" with %n of rel expanded; false when it does not fit. */
static bool _candidate(const char *mount, const char *rel, const char *node,
		       char *buf, size_t len)
{
	int n;

	if (strstr(rel, "%n")) {
		const char *at = strstr(rel, "%n");

		if (!node)
			return false;
		n = snprintf(buf, len, "%s/%.*s%s%s", mount, (int) (at - rel),
			     rel, node, at + 2);
	} else {
		n = snprintf(buf, len, "%s/%s", mount, rel);
	}
	return n >= 0 && (size_t) n < len;
}

int cg_root_path(const char *tmpl, const char *mount, const char *node,
		 char *buf, size_t len)
{
	static const char *const v1[] = {
		"cpuacct/slurm_%n", "cpuacct/slurm", "cpu,cpuacct/slurm_%n",
		"cpu,cpuacct/slurm",
	};
	static const char *const v2[] = {
		"system.slice/%n_slurmstepd.scope",
		"system.slice/slurmstepd.scope",
	};
	const char *const *list;
	char probe[PATH_MAX];
	struct stat sb;
	size_t n, i;

	if (!len)
		return -EINVAL;
	if (tmpl && *tmpl && strcmp(tmpl, "auto")) {
		const char *p = tmpl;
		size_t o = 0;

		for (; *p; p++) {
			const char *add = NULL;
			char one[2] = { *p, 0 };

			if (*p == '%') {
				if (p[1] == 'n' && node)
					add = node;
				else if (p[1] == '%')
					add = "%";
				else
					return -EINVAL;
				p++;
			} else {
				add = one;
			}
			if (o + strlen(add) >= len)
				return -ENAMETOOLONG;
			strcpy(buf + o, add);
			o += strlen(add);
		}
		buf[o] = '\0';
		return 0;
	}
	if (!mount)
		mount = CG_DEFAULT_MOUNT;
	/* A unified (v2-only) mount has cgroup.controllers at its top. */
	if (snprintf(probe, sizeof(probe), "%s/cgroup.controllers", mount) <
	    (int) sizeof(probe) && !stat(probe, &sb)) {
		list = v2;
		n = sizeof(v2) / sizeof(v2[0]);
	} else {
		list = v1;
		n = sizeof(v1) / sizeof(v1[0]);
	}
	for (i = 0; i < n; i++)
		if (_candidate(mount, list[i], node, buf, len) &&
		    !stat(buf, &sb))
			return 0;
	for (i = 0; i < n; i++)
		if (_candidate(mount, list[i], node, buf, len))
			return 0;
	return -ENAMETOOLONG;
}
