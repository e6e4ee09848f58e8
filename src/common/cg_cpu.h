/*
 * cg_cpu.h - CPU time of the jobs and steps on a node, from their cgroups.
 *
 * Slurm-free.  Slurm's cgroup plugins (proctrack/cgroup, task/cgroup,
 * jobacct_gather/cgroup) give every job and step a cgroup; the kernel keeps
 * each one's CPU time, including that of processes already gone, and a
 * parent's includes its children's, also after a child cgroup is removed.
 * Layouts (checked in the sources of Slurm 22.05.8 and 24.11.5, the same in
 * both):
 *
 *  cgroup v1 (src/plugins/cgroup/v1/xcgroup.c)
 *	<cpuacct mount>/<CgroupPrepend>/uid_<uid>/job_<id>/step_<step>
 *	CgroupPrepend is "/slurm", or "/slurm_%n" in a multiple-slurmd build
 *	(Debian's); CPU time: cpuacct.usage (ns).  The cpuacct tree exists
 *	with JobAcctGatherType=jobacct_gather/cgroup; the job's CPUs are in
 *	the cpuset tree at the same relative path (cpuset.cpus), made by
 *	task/cgroup with ConstrainCores=yes.
 *  cgroup v2 (src/plugins/cgroup/v2/cgroup_v2.c)
 *	<mount>/system.slice/[<node>_]slurmstepd.scope/job_<id>/step_<step>
 *	CPU time: "usage_usec" in cpu.stat; CPUs: cpuset.cpus.effective.
 *
 * Slurm 26.05's cgroup v2 names the job directory by the job's SLUID instead
 * (src/plugins/cgroup/v2/cgroup_v2.c: "s" and 13 Crockford base-32
 * characters, e.g. s0KQ4B7RZ1M2N3) unless cgroup.conf has
 * CgroupJobIdPaths=yes.  The SLUID does not contain the job id; the job's
 * slurmstepds do: each step directory has a "slurm" leaf holding the step's
 * slurmstepd (and only it: the tasks are under "user"), whose title is
 * "slurmstepd: [<job>.<step>]".  cg_scan() reads the job id there once per
 * job and remembers it while the directory exists (between two steps of a
 * job without PrologFlags=Contain no slurmstepd may be running).  It counts
 * the SLUID directories (sluid_jobs) and those it could not map
 * (sluid_unread: not read, so that the caller can say why).
 *
 * <step> is a number, "batch", "extern" or "interactive" (a heterogeneous
 * step's component, "0+1", counts as its step).  The root given to
 * cg_scan() is the directory that holds uid_* (v1) or job_* (v2); both
 * layouts are recognised under it, so one reader serves either.
 */
#ifndef SE_CG_CPU_H
#define SE_CG_CPU_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Slurm's step ids for the named steps (slurm.h; the glue checks them). */
#define CG_STEP_PENDING		0xfffffffdu
#define CG_STEP_EXTERN		0xfffffffcu
#define CG_STEP_BATCH		0xfffffffbu
#define CG_STEP_INTERACTIVE	0xfffffffau
/* Not a step: the job's own cgroup (all its steps and anything else). */
#define CG_JOB_LEVEL		0xffffffffu

typedef struct {
	uint32_t job_id;
	uint32_t step_id;	/* CG_JOB_LEVEL for the job's own cgroup */
	uint64_t cpu_ns;	/* CPU time since the cgroup was made */
	uint32_t ncpus;		/* job level: CPUs of its cpuset; 0 unknown */
} cg_entry_t;

typedef struct {
	bool have_root;		/* root_cpu_ns read */
	uint64_t root_cpu_ns;	/* the root's own CPU time (all jobs,
				 * including jobs already gone) */
	uint32_t root_ncpus;	/* CPUs of the root's cpuset, 0 unknown */
	size_t sluid_jobs;	/* job directories named by SLUID */
	size_t sluid_unread;	/* of those, no job id found: not read */
	cg_entry_t *e;		/* jobs and steps, in no particular order */
	size_t n, cap;
	struct {		/* SLUIDs mapped in earlier scans */
		char name[16];
		uint32_t job_id;
		bool seen;	/* in the current scan */
	} sluid[256];
	size_t nsluid;
} cg_scan_t;

/*
 * Read the CPU time of root and of every job and step under it into out
 * (emptied first; cg_scan_free() frees it).  A job or step whose files
 * vanish during the walk (it ended) is left out.  Returns 0, or a
 * negative errno: -ENOENT no such root (no job has run yet: Slurm makes
 * it on first use), -ENOMEM.
 */
int cg_scan(const char *root, cg_scan_t *out);

void cg_scan_free(cg_scan_t *s);

/* "batch", "extern", "interactive", "12", "0+1" into a step id; -EINVAL
 * for anything else. */
int cg_step_id(const char *name, uint32_t *step_id);

/* Whether a directory name is a SLUID ("s" or "S" and 13 characters of
 * Crockford's base 32, as Slurm prints it). */
bool cg_is_sluid(const char *name);

/* The job id in a slurmstepd's process title ("slurmstepd: [1234.0]",
 * "[1234.batch]", "[1234+1.0]"); 0 or -EINVAL. */
int cg_stepd_title_job(const char *title, uint32_t *job);

/* Where cg_scan() reads processes' titles: "/proc", or (tests) a directory
 * laid out like it; NULL restores "/proc". */
void cg_set_proc_dir(const char *dir);

/* CPUs in a cpuset list ("0-3,8,10-11"); -EINVAL for a malformed one. */
int cg_count_cpus(const char *list, uint32_t *n);

/*
 * The cgroup root of node `node` (NULL allowed when tmpl has no %n): tmpl
 * with %n (and %%) expanded, or, for tmpl NULL or "auto", the first
 * existing of (under mount, NULL: /sys/fs/cgroup)
 *   cpuacct/slurm_<node>, cpuacct/slurm, cpu,cpuacct/slurm_<node>,
 *   cpu,cpuacct/slurm
 * or system.slice/<node>_slurmstepd.scope, system.slice/slurmstepd.scope
 * (the v2 pair only, when mount is a unified one: it holds
 * cgroup.controllers), else the first of them (a v1 tree appears with the
 * node's first job).
 * Returns 0, -ENAMETOOLONG, -EINVAL (bad template).
 */
int cg_root_path(const char *tmpl, const char *mount, const char *node,
		 char *buf, size_t len);

#endif
