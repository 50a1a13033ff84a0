/* fuzz_cases.c: pplan.cases/1 files through cases_load, then every
 * predictable case predicted as pplan validate does.  Seeds:
 * validation/calibration.json and tests/fixtures/bad. */
#include <stdlib.h>

#include "cases.h"
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct vcase *cs = NULL;
	struct perr e;
	int n = 0;
	const char *path = fuzz_temp_file(data, size, "input");

	if (cases_load(path, &cs, &n, &e) != PPLAN_OK)
		return 0;
	for (int i = 0; i < n && i < 8; i++) {
		struct prediction p;
		if (cs[i].predictable)
			(void)cost_predict(&cs[i].model, &cs[i].cluster,
					   &cs[i].layout, &cs[i].opts, &p, &e);
	}
	free(cs);
	return 0;
}
