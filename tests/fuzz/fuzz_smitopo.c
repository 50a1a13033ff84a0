/* fuzz_smitopo.c: `nvidia-smi topo -m` text through smitopo_parse, then
 * the cluster it describes.  Seeds: tests/fixtures/nvidia-smi. */
#include <stdlib.h>

#include "fuzz.h"
#include "smitopo.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *s = fuzz_strndup(data, size);
	struct host_topo h;
	struct perr e;

	if (smitopo_parse(s, "input.txt", &h, &e) == PPLAN_OK)
		fuzz_exercise_host(&h);
	free(s);
	return 0;
}
