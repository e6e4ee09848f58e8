/*
 * fuzz_power_trace - the power-trace format (src/common/power_trace.c), as
 * every simulator and se-trace read it.
 *
 * Invariants of a trace that loads: every column has a name that finds it
 * again; power is finite and >= 0 at any instant (negative and periodic
 * times included); energy over an interval is finite, >= 0 and additive
 * (E(a,c) = E(a,b) + E(b,c)), both to the rounding of a double at the
 * format's bounds; E(t,t) = 0; E(b,a) = -E(a,b).
 */
#include "fuzz_common.h"

#include <math.h>

#include "power_trace.h"

/* Energies are differences of integrals from the trace's start, each
 * below POWER_TRACE_MAX_W x 2 POWER_TRACE_MAX_S = 2e16 J, where a double's
 * step is 4 J: a few such roundings. */
#define ROUNDING_J	32.0

static const double times[] = {
	-1e6, -37.5, -1, 0, 0.001, 0.5, 1, 2.25, 10, 61, 3600, 86400.5, 1e7,
};
#define N_TIMES (sizeof(times) / sizeof(times[0]))

static void check_column(const power_trace_t *tr, int col)
{
	const char *name = power_trace_column_name(tr, col);

	FUZZ_CHECK(name != NULL, "column %d has no name", col);
	FUZZ_CHECK(power_trace_column(tr, name) == col,
		   "column '%s' found at %d, not %d", name,
		   power_trace_column(tr, name), col);
	for (size_t i = 0; i < N_TIMES; i++) {
		double w = power_trace_watts(tr, col, times[i]);

		FUZZ_CHECK(isfinite(w) && w >= 0, "watts(%g) = %g", times[i],
			   w);
		FUZZ_CHECK(power_trace_joules(tr, col, times[i], times[i]) ==
			   0, "E(t,t) != 0 at %g", times[i]);
	}
	for (size_t i = 0; i + 2 < N_TIMES; i++) {
		double a = times[i], b = times[i + 1], c = times[i + 2];
		double ab = power_trace_joules(tr, col, a, b);
		double bc = power_trace_joules(tr, col, b, c);
		double ac = power_trace_joules(tr, col, a, c);
		double ba = power_trace_joules(tr, col, b, a);

		FUZZ_CHECK(isfinite(ab) && isfinite(bc) && isfinite(ac),
			   "E over [%g, %g] not finite", a, c);
		FUZZ_CHECK(ab >= -ROUNDING_J && bc >= -ROUNDING_J,
			   "negative energy: %g %g", ab, bc);
		FUZZ_CHECK(fabs(ac - (ab + bc)) <= 1e-9 * ac + ROUNDING_J,
			   "E(%g,%g) = %.17g but the parts sum to %.17g", a, c,
			   ac, ab + bc);
		FUZZ_CHECK(ba == -ab, "E(b,a) = %g, E(a,b) = %g", ba, ab);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	power_trace_t *tr = NULL;
	char err[512];
	int rc, n;

	rc = power_trace_load(fuzz_file(data, size), &tr, err, sizeof(err));
	if (rc) {
		FUZZ_CHECK(rc < 0 && !tr && err[0], "rc %d without a message",
			   rc);
		return 0;
	}
	n = power_trace_columns(tr);
	FUZZ_CHECK(n >= 1, "%d columns", n);
	for (int col = 0; col < n; col++)
		check_column(tr, col);
	FUZZ_CHECK(isnan(power_trace_watts(tr, n, 0)), "column past the last");
	FUZZ_CHECK(power_trace_column_name(tr, n) == NULL, "name past the last");
	power_trace_free(tr);
	return 0;
}
