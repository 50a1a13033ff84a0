/* fuzz_hf.c: Hugging Face config.json files through model_load, written
 * as .../config.json so that the name comes from the folder as it does
 * for a downloaded model.  Seeds: tests/fixtures/hf. */
#include <stdlib.h>

#include "fuzz.h"
#include "model.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct model_spec m;
	struct perr e;
	const char *path = fuzz_temp_file(data, size, "config.json");

	if (model_load(path, &m, &e) == PPLAN_OK)
		fuzz_exercise_model(&m);
	return 0;
}
