/* fuzz_model.c: pplan.model/1 files through model_load (and whatever a
 * loaded model then meets in the cost model).  Seeds: tests/fixtures/models. */
#include <stdlib.h>

#include "fuzz.h"
#include "model.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct model_spec m;
	struct perr e;
	const char *path = fuzz_temp_file(data, size, "input");

	if (model_load(path, &m, &e) == PPLAN_OK)
		fuzz_exercise_model(&m);
	return 0;
}
