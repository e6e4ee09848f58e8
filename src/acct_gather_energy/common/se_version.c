/*
 * se_version.c - the suite's version strings, for the plugins' load line.
 *
 * Kept apart from the Slurm glue: our se_config.h and Slurm's config.h
 * define the same PACKAGE_* macros, so one file includes only ours.
 */
#include "se_config.h"

#include "se_energy.h"

const char se_energy_version[] = PACKAGE_VERSION;
const char se_energy_slurm_version[] = SE_SLURM_VERSION_STRING;
