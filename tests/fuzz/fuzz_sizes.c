/* fuzz_sizes.c: size and count strings (--params 70B, --gpus, --seq,
 * --global-batch, --tokens-per-step, --max-memory-gib) through the
 * option parser the subcommands share.  Seeds: tests/fuzz/seeds/sizes. */
#include <stdlib.h>

#include "cli_common.h"
#include "fuzz.h"
#include "units.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *s = fuzz_strndup(data, size);
	struct job in;
	struct perr e;
	double v;
	long x;

	(void)units_parse_count(s, &v);
	(void)units_parse_whole(s, &x);
	for (int opt = 1002; opt <= 1009; opt++) {
		if (opt == 1003 || opt == 1004 || opt == 1008)
			continue; /* names, not numbers */
		job_init(&in);
		(void)cli_common_option(&in, opt, s, &e);
	}
	job_init(&in);
	in.params_arg = s;
	in.gpus = 8;
	(void)job_resolve(&in, 1, &e);
	free(s);
	return 0;
}
