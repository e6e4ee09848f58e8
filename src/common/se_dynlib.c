/*
 * se_dynlib.c - a meter's client library, loaded on first use (see
 * se_dynlib.h for why).
 */
#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "se_dynlib.h"

/* dlopen and resolve every entry point; the caller holds lib->lock. */
static int _load(se_dynlib_t *lib)
{
	void *h = dlopen(lib->soname, RTLD_NOW | RTLD_LOCAL);

	if (!h) {
		snprintf(lib->error, sizeof(lib->error),
			 "cannot load %s (the library this plugin was built with): %s",
			 lib->soname, dlerror());
		return -1;
	}
	for (size_t i = 0; i < lib->n_syms; i++) {
		void *f = dlsym(h, lib->syms[i].name);

		if (!f) {
			snprintf(lib->error, sizeof(lib->error),
				 "%s has no %s: not the library this plugin was built with",
				 lib->soname, lib->syms[i].name);
			dlclose(h);
			return -1;
		}
		/* a function pointer stored through its own address */
		memcpy(lib->syms[i].slot, &f, sizeof(f));
	}
	return 0;
}

int se_dynlib_load(se_dynlib_t *lib)
{
	int state;

	/* every wrapped call comes here: no lock once loaded */
	if (__atomic_load_n(&lib->state, __ATOMIC_ACQUIRE) > 0)
		return 0;
	pthread_mutex_lock(&lib->lock);
	if (!(state = lib->state)) {
		state = _load(lib) ? -1 : 1;
		/* the slots are written before the state says so */
		__atomic_store_n(&lib->state, state, __ATOMIC_RELEASE);
	}
	pthread_mutex_unlock(&lib->lock);
	return state > 0 ? 0 : -1;
}

int se_dynlib_require(se_dynlib_t *lib, char *err, size_t err_len)
{
	if (!se_dynlib_load(lib))
		return 0;
	snprintf(err, err_len, "%s", se_dynlib_error(lib));
	return -1;
}

bool se_dynlib_ready(se_dynlib_t *lib)
{
	if (!se_dynlib_load(lib))
		return true;
	errno = ELIBACC;
	return false;
}

const char *se_dynlib_error(se_dynlib_t *lib)
{
	const char *why;

	pthread_mutex_lock(&lib->lock);
	why = lib->state < 0 ? lib->error : "";
	pthread_mutex_unlock(&lib->lock);
	return why;
}
