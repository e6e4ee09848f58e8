# se_libs.m4 - optional libraries and the plugins that need them.

# SE_CHECK_LIB(VAR, PKG-CONFIG-MODULES, DEBIAN-PACKAGE)
# Sets have_VAR=yes|no, VAR_CFLAGS, VAR_LIBS; never fails.
AC_DEFUN([SE_CHECK_LIB], [
PKG_CHECK_MODULES([$1], [$2], [have_$1=yes], [have_$1=no])
AS_IF([test "$have_$1" = no],
	[se_missing_pkgs="$se_missing_pkgs $3"])
])

# SE_PLUGIN(ID, DISPLAY-NAME, CONDITION, WHY-NOT)
# Defines AM_CONDITIONAL BUILD_<ID> and records a line for the summary.
AC_DEFUN([SE_PLUGIN], [
AC_ARG_ENABLE([$1],
	[AS_HELP_STRING([--disable-$1], [do not build $2])],
	[], [enable_$1=auto])
AS_IF([test "$enable_$1" = no], [build_$1=no; why_$1="disabled"],
      [$3], [build_$1=yes; why_$1=],
      [build_$1=no; why_$1="$4"])
AS_IF([test "$enable_$1" = yes && test "$build_$1" = no],
	[AC_MSG_ERROR([--enable-$1 given but $why_$1])])
AM_CONDITIONAL(m4_toupper([BUILD_$1]), [test "$build_$1" = yes])
se_summary="$se_summary
  m4_format([%-28s], [$2]) $build_$1${why_$1:+ ($why_$1)}"
])

AC_DEFUN([SE_SUMMARY], [
cat <<SE_EOF

slurm-energy-plugins $PACKAGE_VERSION for Slurm $SLURM_VERSION
  Slurm release:               $SLURM_RELEASE (SLURM_VERSION_NUMBER $SLURM_VERSION_NUMBER, $slurm_release_says)
  plugin-interface headers:    $SLURM_IFACE_DIR
  gres / gpu plugin API:       $slurm_gres_api / $slurm_gpu_api (src/gres_gpu/*_$slurm_gres_api.c, *_$slurm_gpu_api.c)
  daemon role from:            `test "$slurm_has_running_in" = yes && echo "running_in_slurmd()/running_in_slurmstepd()" || echo "the executable's name (/proc/self/exe)"`
  Slurm source tree:           $SLURM_SRC
  installed plugin dir:        $SLURM_PLUGINDIR
  our plugin dir:              `eval eval echo $plugindir`
  unit tests (Check):          $have_CHECK
Plugins:$se_summary
SE_EOF
AS_IF([test -n "$se_missing_pkgs"],
	[echo "Missing Debian packages for the rest:$se_missing_pkgs"])
])

# AX_PTHREAD_SIMPLE: Linux/glibc only; -pthread is all we need.
AC_DEFUN([AX_PTHREAD_SIMPLE], [
PTHREAD_CFLAGS=-pthread
PTHREAD_LIBS=-pthread
AC_SUBST([PTHREAD_CFLAGS])
AC_SUBST([PTHREAD_LIBS])
])

# SE_LIB_SONAME(VAR, LIBS, FUNCTION, FILE-PREFIX)
# The file name (SONAME) under which the run-time linker finds the library
# that LIBS links FUNCTION from (e.g. libmodbus.so.5), as SE_<VAR>_SONAME in
# se_config.h: the plugins open it on first use (src/common/se_dynlib.h)
# instead of linking it, and must ask for the very library they were built
# against.  Read from a test program's NEEDED entry, so it follows what the
# build machine has (Debian 13's t64 packages keep the same file names).
AC_DEFUN([SE_LIB_SONAME], [
AC_REQUIRE([SE_PROG_READELF])
AC_CACHE_CHECK([the file name of $4], [se_cv_soname_$1], [
se_save_LIBS=$LIBS
LIBS="$2 $LIBS"
se_cv_soname_$1=
AC_LINK_IFELSE([AC_LANG_CALL([], [$3])], [
	se_cv_soname_$1=`$READELF -d conftest$EXEEXT 2>/dev/null |
		sed -n 's/.*Shared library: \@<:@\($4\.so@<:@^@:>@@:>@*\)@:>@.*/\1/p' |
		sed -n 1p`])
LIBS=$se_save_LIBS])
AS_IF([test -z "$se_cv_soname_$1"],
	[AC_MSG_ERROR([cannot tell the file name of $4 (readelf -d of a program linked with $2)])])
AC_DEFINE_UNQUOTED([SE_$1_SONAME], ["$se_cv_soname_$1"],
	[file name of $4, opened on first use by the plugins])
dnl also for slurm-energy-check, which checks that it loads
AC_SUBST([SE_$1_SONAME], [$se_cv_soname_$1])
])

AC_DEFUN([SE_PROG_READELF], [
AC_CHECK_TOOL([READELF], [readelf])
AS_IF([test -z "$READELF"],
	[AC_MSG_ERROR([readelf not found (binutils)])])
])
