/*
 * se_array.h - room for one more element at the end of a growable array
 * (its pointer, element count and capacity), doubling the capacity from
 * first_cap.  The tables of the core (jobs and steps of the attribution,
 * cgroup scans, map entries, frequency history) grow this way.
 */
#ifndef SE_ARRAY_H
#define SE_ARRAY_H

#include <errno.h>
#include <stddef.h>
#include <stdlib.h>

/*
 * arrp: the address of the array's pointer (T **); n: its elements; cap:
 * its capacity, updated; size: sizeof(T).  0, or -ENOMEM with the array
 * as it was.
 */
static inline int se_array_room(void *arrp, size_t n, size_t *cap,
				size_t size, size_t first_cap)
{
	void **arr = arrp;
	size_t ncap;
	void *p;

	if (n < *cap)
		return 0;
	ncap = *cap ? 2 * *cap : first_cap;
	if (!(p = realloc(*arr, ncap * size)))
		return -ENOMEM;
	*arr = p;
	*cap = ncap;
	return 0;
}

#endif
