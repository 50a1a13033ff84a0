/* fuzz_hwloc.c: hwloc XML exports through discover_hwloc_xml: pplan's own
 * check (topology/hwlocxml.c), the 3.x downgrade, libhwloc's importer and
 * the walk.  Seeds: tests/fixtures/hwloc. */
#include <stdlib.h>

#include "discover.h"
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *s = fuzz_strndup(data, size);
	struct host_topo h;
	struct perr e;

	if (discover_hwloc_xml(s, size, "input.xml", &h, &e) == PPLAN_OK)
		fuzz_exercise_host(&h);
	free(s);
	return 0;
}
