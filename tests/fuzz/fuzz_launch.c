/* fuzz_launch.c: launch configurations (predict --from) through the five
 * readers of reports/launch_*.c, without and with a --model.  Seeds:
 * tests/fuzz/seeds/launch (configs --emit writes). */
#include <stdlib.h>

#include "fuzz.h"
#include "launch_read.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *s = fuzz_strndup(data, size);
	const struct model_spec *given = model_find("llama3-8b");
	struct launch_job lj;
	struct perr e;

	for (int f = 0; f < EMIT_COUNT; f++) {
		(void)launch_read_text((enum emit_format)f, s, "fuzz", NULL, &lj, &e);
		(void)launch_read_text((enum emit_format)f, s, "fuzz", given, &lj, &e);
	}
	free(s);
	return 0;
}
