# se_slurm.m4 - find the Slurm source tree and the installed Slurm, and
# insist that they are the same release.

# SE_SLURM_TREE_VERSION(TREE): set slurm_tree_version to "MAJOR.MINOR.MICRO"
# of a configured tree, from SLURM_VERSION_NUMBER (0x160508 -> 22.05.8).
AC_DEFUN([SE_SLURM_TREE_VERSION], [
se_vn=`sed -n 's/^#define SLURM_VERSION_NUMBER //p' "$1/slurm/slurm_version.h"`
slurm_tree_version=`printf '%d.%02d.%d' $(( (se_vn >> 16) & 255 )) \
	$(( (se_vn >> 8) & 255 )) $(( se_vn & 255 ))`
])

AC_DEFUN([SE_WITH_SLURM], [
AC_ARG_WITH([slurm-src],
	[AS_HELP_STRING([--with-slurm-src=DIR],
		[configured Slurm source tree of the installed version
		 (contribs/get-slurm-source.sh makes one)])],
	[slurm_src="$withval"], [slurm_src=])
AC_ARG_WITH([slurm],
	[AS_HELP_STRING([--with-slurm=PREFIX],
		[prefix of the installed Slurm @<:@/usr@:>@])],
	[slurm_prefix="$withval"], [slurm_prefix=/usr])

AS_IF([test -z "$slurm_src"],
	[AC_MSG_ERROR([--with-slurm-src=DIR is required: a configured Slurm source
tree of the installed version.  contribs/get-slurm-source.sh fetches one
through apt (deb-src) and configures it.])])
slurm_src=`cd "$slurm_src" 2>/dev/null && pwd`
AS_IF([test ! -f "$slurm_src/slurm/slurm_version.h" ||
       test ! -f "$slurm_src/config.h"],
	[AC_MSG_ERROR([$with_slurm_src is not a configured Slurm source tree
(no slurm/slurm_version.h or config.h): run Slurm's ./configure in it first])])

AC_MSG_CHECKING([Slurm source tree version])
SE_SLURM_TREE_VERSION([$slurm_src])
AC_MSG_RESULT([$slurm_tree_version])

AC_MSG_CHECKING([installed slurmd version])
slurmd_bin=
for d in sbin bin; do
	AS_IF([test -x "$slurm_prefix/$d/slurmd"],
		[slurmd_bin="$slurm_prefix/$d/slurmd"; break])
done
AS_IF([test -z "$slurmd_bin"],
	[AC_MSG_ERROR([no slurmd under $slurm_prefix (use --with-slurm=PREFIX)])])
slurm_installed_version=`"$slurmd_bin" -V 2>/dev/null | sed -n 's/^slurm@<:@-a-z@:>@* //p'`
AC_MSG_RESULT([$slurm_installed_version ($slurmd_bin)])

AS_IF([test "$slurm_tree_version" != "$slurm_installed_version"],
	[AC_MSG_ERROR([Slurm version mismatch: source tree $slurm_src is
$slurm_tree_version but the installed slurmd ($slurmd_bin) is
$slurm_installed_version.  Plugins carry the tree's version and slurmd
refuses (or silently replaces) a plugin of another version.  Use the tree of
the installed release: contribs/get-slurm-source.sh])])

dnl Where the installed Slurm keeps its plugins (and libslurmfull.so).
AC_ARG_WITH([slurm-plugindir],
	[AS_HELP_STRING([--with-slurm-plugindir=DIR],
		[the installed Slurm's plugin directory @<:@detected@:>@])],
	[slurm_plugindir="$withval"], [slurm_plugindir=])
AS_IF([test -z "$slurm_plugindir"], [
	for d in "$slurm_prefix"/lib/*/slurm-wlm "$slurm_prefix"/lib/slurm-wlm \
		 "$slurm_prefix"/lib64/slurm "$slurm_prefix"/lib/slurm; do
		AS_IF([test -f "$d/libslurmfull.so"],
			[slurm_plugindir="$d"; break])
	done])
AC_MSG_CHECKING([installed Slurm plugin directory])
AS_IF([test -f "$slurm_plugindir/libslurmfull.so"],
	[AC_MSG_RESULT([$slurm_plugindir])],
	[AC_MSG_ERROR([no libslurmfull.so found; use --with-slurm-plugindir=DIR])])

slurm_version_number=`sed -n 's/^#define SLURM_VERSION_NUMBER //p' \
	"$slurm_src/slurm/slurm_version.h"`
slurm_release=`echo "$slurm_tree_version" | cut -d. -f1,2`

dnl Where this release keeps the plugin-interface headers: src/common/ up to
dnl 22.05, src/interfaces/ from 23.02 on (found by looking, not by number).
AC_MSG_CHECKING([Slurm plugin-interface headers])
AS_IF([test -f "$slurm_src/src/interfaces/acct_gather_energy.h"],
	[slurm_iface_dir=src/interfaces
	 AC_DEFINE([SE_SLURM_HAVE_INTERFACES_DIR], [1],
		[Slurm keeps plugin-interface headers in src/interfaces/ (23.02+)])],
      [test -f "$slurm_src/src/common/slurm_acct_gather_energy.h"],
	[slurm_iface_dir=src/common],
	[AC_MSG_ERROR([$slurm_src has neither src/interfaces/acct_gather_energy.h
nor src/common/slurm_acct_gather_energy.h: not a Slurm tree this suite knows])])
AC_MSG_RESULT([$slurm_iface_dir])

dnl ext_sensors exists up to 23.11 (0x170b00); removed in 24.05.
AS_IF([test $(( slurm_version_number )) -lt $(( 0x180500 ))],
	[slurm_has_ext_sensors=yes], [slurm_has_ext_sensors=no])
AS_IF([test "$slurm_has_ext_sensors" = yes &&
       test ! -f "$slurm_src/src/common/slurm_ext_sensors.h" &&
       test ! -f "$slurm_src/src/interfaces/ext_sensors.h"],
	[slurm_has_ext_sensors=no])

dnl The drop-in gres/gpu and gpu/nvml compile Slurm's own helper sources
dnl from the tree; all three must be there.
AC_MSG_CHECKING([Slurm gres/gpu helper sources in the tree])
slurm_has_gpu_sources=yes
for f in src/plugins/gres/gpu/gres_gpu.c src/plugins/gres/common/gres_common.c \
	 src/plugins/gpu/common/gpu_common.c; do
	AS_IF([test ! -f "$slurm_src/$f"], [slurm_has_gpu_sources=no])
done
AC_MSG_RESULT([$slurm_has_gpu_sources])

dnl ------------------------------------------------------------------------
dnl What differs between releases for our Slurm glue, found by looking at
dnl the configured tree (never by version number alone).  The answers go to
dnl the glue as -D flags in SLURM_CPPFLAGS (the glue includes Slurm's
dnl config.h, not ours: both define PACKAGE_*), read only by
dnl src/common/slurm_compat*.h, and to the Makefile as conditionals that pick
dnl the per-release files of the drop-in gres/gpu and gpu/nvml.
se_slurm_compat_defs=
AS_IF([test "$slurm_iface_dir" = src/interfaces],
	[se_slurm_compat_defs="$se_slurm_compat_defs -DSE_SLURM_IFACE_INTERFACES=1"])

dnl running_in_slurmd() & co: functions in src/common/run_in_daemon.h up to
dnl 24.11, macros over run_in_daemon(IS_SLURMD) there from 25.05 (gone from
dnl libslurmfull's symbols, so a plugin built against an older tree misses
dnl them); either way the header gives them.
AC_MSG_CHECKING([whether Slurm has running_in_slurmd()])
AS_IF([grep -q 'running_in_slurmd *(' "$slurm_src/src/common/run_in_daemon.h" 2>/dev/null],
	[slurm_has_running_in=yes
	 se_slurm_compat_defs="$se_slurm_compat_defs -DSE_SLURM_HAVE_RUNNING_IN=1"],
	[slurm_has_running_in=no])
AC_MSG_RESULT([$slurm_has_running_in (otherwise: the executable's name)])

dnl acct_gather_energy_t gained slurmd_start_time (24.11; packed: a step
dnl tells a restarted slurmd by it).
AC_MSG_CHECKING([whether acct_gather_energy_t has slurmd_start_time])
AS_IF([sed -n '/^typedef struct acct_gather_energy {/,/} acct_gather_energy_t;/p' \
	"$slurm_src/slurm/slurm.h" | grep -q slurmd_start_time],
	[slurm_energy_start_time=yes
	 se_slurm_compat_defs="$se_slurm_compat_defs -DSE_SLURM_ENERGY_START_TIME=1"],
	[slurm_energy_start_time=no])
AC_MSG_RESULT([$slurm_energy_start_time])

dnl job_submit's job_modify() got a fourth argument, char **err_msg (23.02).
AC_MSG_CHECKING([whether job_submit's job_modify takes err_msg])
se_js_src=
for f in src/interfaces/job_submit.c src/slurmctld/job_submit.c; do
	AS_IF([test -f "$slurm_src/$f"], [se_js_src="$slurm_src/$f"; break])
done
AS_IF([test -n "$se_js_src" &&
       sed -n '/(\*modify)/,/;/p' "$se_js_src" | grep -q 'err_msg'],
	[slurm_job_modify_err_msg=yes
	 se_slurm_compat_defs="$se_slurm_compat_defs -DSE_SLURM_JOB_MODIFY_ERR_MSG=1"],
	[slurm_job_modify_err_msg=no])
AC_MSG_RESULT([$slurm_job_modify_err_msg])

dnl The topology header (switch_record_table, for ext_sensors' switches):
dnl src/common/slurm_topology.h (22.05), src/interfaces/topology.h (23.11).
AS_IF([test -f "$slurm_src/src/interfaces/topology.h"],
	[se_slurm_compat_defs="$se_slurm_compat_defs -DSE_SLURM_TOPOLOGY_IFACE=1"])

dnl A plugin's fini() is void in the stock plugins of 25.11+ (int before; Slurm
dnl calls it as void in every release): matters where a stock plugin is
dnl compiled into ours (gres/gpu).
AC_MSG_CHECKING([whether the stock plugins' fini() is void])
AS_IF([grep -q '^extern void fini *(void)' \
	"$slurm_src/src/plugins/gres/gpu/gres_gpu.c" 2>/dev/null],
	[slurm_stock_fini_void=yes
	 se_slurm_compat_defs="$se_slurm_compat_defs -DSE_SLURM_STOCK_FINI_VOID=1"],
	[slurm_stock_fini_void=no])
AC_MSG_RESULT([$slurm_stock_fini_void])

dnl gres_g_get_devices() takes the step record (stepd_step_rec_t *) as its
dnl last argument from 23.02 on, a pid_t before (22.05): SE_GRES_DEVICES_STEP
dnl in slurm_compat_gres.h passes whichever the tree's gres.h declares.
AC_MSG_CHECKING([whether gres_g_get_devices takes the step record])
AS_IF([sed -n '/gres_g_get_devices(/,/;/p' "$slurm_src/$slurm_iface_dir/gres.h" |
	grep -q 'stepd_step_rec_t'],
	[slurm_gres_devices_step=yes
	 se_slurm_compat_defs="$se_slurm_compat_defs -DSE_SLURM_GRES_DEVICES_STEP=1"],
	[slurm_gres_devices_step=no])
AC_MSG_RESULT([$slurm_gres_devices_step])

dnl slurm_load_job() takes a slurm_step_id_t (job id or SLUID) instead of a
dnl uint32_t job id (26.05, slurm/slurm.h).
AC_MSG_CHECKING([whether slurm_load_job takes a slurm_step_id_t])
AS_IF([sed -n '/^extern int slurm_load_job(/,/;/p' "$slurm_src/slurm/slurm.h" |
	grep -q 'slurm_step_id_t'],
	[slurm_load_job_step_id=yes
	 se_slurm_compat_defs="$se_slurm_compat_defs -DSE_SLURM_LOAD_JOB_STEP_ID=1"],
	[slurm_load_job_step_id=no])
AC_MSG_RESULT([$slurm_load_job_step_id])

dnl The gres and gpu plugin APIs: the entry points Slurm looks up (syms[] of
dnl gres.c / gpu.c) decide which per-release file our drop-ins compile.
dnl gres: 2205 = gres_p_epilog_* + gres_p_get_{job,step}_info (22.05);
dnl 2311 = gres_p_prep_* + gres_p_get_{job,step}_info (23.11, 24.05);
dnl 2411 = gres_p_prep_* alone (24.11 .. 26.05).
dnl gpu: 2205 = gpu_p_reconfig (22.05); 2311 = gpu_p_reconfig +
dnl gpu_p_usage_read (23.11); 2411 = gpu_p_usage_read alone (24.05 .. 26.05).
se_gres_c="$slurm_src/$slurm_iface_dir/gres.c"
se_gpu_c="$slurm_src/$slurm_iface_dir/gpu.c"
AC_MSG_CHECKING([gres plugin API of the tree])
AS_IF([grep -q '"gres_p_prep_build_env"' "$se_gres_c" 2>/dev/null &&
       grep -q '"gres_p_get_job_info"' "$se_gres_c"],
	[slurm_gres_api=2311],
      [grep -q '"gres_p_prep_build_env"' "$se_gres_c" 2>/dev/null],
	[slurm_gres_api=2411],
      [grep -q '"gres_p_epilog_build_env"' "$se_gres_c" 2>/dev/null],
	[slurm_gres_api=2205],
	[slurm_gres_api=unknown])
AC_MSG_RESULT([$slurm_gres_api])
AC_MSG_CHECKING([gpu plugin API of the tree])
AS_IF([grep -q '"gpu_p_usage_read"' "$se_gpu_c" 2>/dev/null &&
       grep -q '"gpu_p_reconfig"' "$se_gpu_c"],
	[slurm_gpu_api=2311],
      [grep -q '"gpu_p_usage_read"' "$se_gpu_c" 2>/dev/null],
	[slurm_gpu_api=2411],
      [grep -q '"gpu_p_reconfig"' "$se_gpu_c" 2>/dev/null],
	[slurm_gpu_api=2205],
	[slurm_gpu_api=unknown])
AC_MSG_RESULT([$slurm_gpu_api])
AS_IF([test "$slurm_gres_api" = unknown || test "$slurm_gpu_api" = unknown],
	[slurm_has_gpu_sources=no])
AM_CONDITIONAL([SE_GRES_API_2411], [test "$slurm_gres_api" = 2411])
AM_CONDITIONAL([SE_GRES_API_2311], [test "$slurm_gres_api" = 2311])
AM_CONDITIONAL([SE_GPU_API_2411], [test "$slurm_gpu_api" = 2411])
AM_CONDITIONAL([SE_GPU_API_2311], [test "$slurm_gpu_api" = 2311])

dnl Releases whose Slurm glue is proven (builds, unit tests, the test
dnl cluster's energy within 1 %), and those ported (builds with -Werror and
dnl runs the unit tests; the cluster not yet run); on the others configure
dnl goes on (to show what builds) but says so.  24.11, 25.11 and 26.05: the
dnl release list on their own clusters (doc/releases-survey.md sections 6
dnl and 10; contribs/release/matrix).
se_slurm_proven_releases="22.05 24.11 25.11 26.05"
se_slurm_ported_releases="23.11 24.05 25.05"
slurm_release_state=unknown
for r in $se_slurm_ported_releases; do
	AS_IF([test "$r" = "$slurm_release"], [slurm_release_state=ported])
done
for r in $se_slurm_proven_releases; do
	AS_IF([test "$r" = "$slurm_release"], [slurm_release_state=proven])
done
AS_CASE([$slurm_release_state],
	[proven], [slurm_release_says="supported"],
	[ported], [slurm_release_says="ported: builds with -Werror, make check in doc/releases-survey.md section 10; not yet proven on a cluster"],
	[slurm_release_says="not yet supported: see doc/releases-survey.md"
	 AC_MSG_WARN([Slurm $slurm_release is not yet a supported release of this suite
(proven: $se_slurm_proven_releases; ported: $se_slurm_ported_releases); expect
compile errors in the Slurm glue.  What breaks and the porting plan:
doc/releases-survey.md])])

dnl Slurm's headers are included as system headers: their warnings are not
dnl ours to fix.  Internal headers moved to src/interfaces/ in 23.02 (the
dnl compat -D flags above say where).
SLURM_CPPFLAGS="-isystem $slurm_src -isystem $slurm_src/slurm$se_slurm_compat_defs"
SLURM_PLUGIN_LIBS="-L$slurm_plugindir -lslurmfull -Wl,-rpath,$slurm_plugindir"
AC_SUBST([SLURM_SRC], [$slurm_src])
AC_SUBST([SLURM_CPPFLAGS])
AC_SUBST([SLURM_PLUGIN_LIBS])
AC_SUBST([SLURM_PLUGINDIR], [$slurm_plugindir])
AC_SUBST([SLURM_VERSION], [$slurm_tree_version])
AC_SUBST([SLURM_RELEASE], [$slurm_release])
AC_SUBST([SLURM_IFACE_DIR], [$slurm_iface_dir])
AC_SUBST([SLURM_VERSION_NUMBER], [$slurm_version_number])
AC_SUBST([SLURM_PREFIX], [$slurm_prefix])
AC_DEFINE_UNQUOTED([SE_SLURM_VERSION_STRING], ["$slurm_tree_version"],
	[Slurm release the suite was built against])
AC_DEFINE_UNQUOTED([SE_SLURM_RELEASE_STRING], ["$slurm_release"],
	[Slurm major.minor release the suite was built against])
])
