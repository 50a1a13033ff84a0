/* fuzz_profile.c: pplan.profile/1 (pplan calibrate / pplan fit) through
 * --profile as the subcommands resolve it (profile_load, the device
 * check, the constants and the measured curves), then a few layouts
 * priced with those curves.  Seeds: tests/fixtures/profile,
 * tests/fixtures/profiles and the published GPU profiles
 * (topology/profiles). */
#include <stdlib.h>

#include "cli_common.h"
#include "cost.h"
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char *const layouts[] = {"tp=8", "tp=2,pp=4", "dp=8,zero=1"};
	const char *path = fuzz_temp_file(data, size, "input");
	struct job in;
	struct perr e;

	job_init(&in);
	in.model_arg = "llama3-8b";
	in.gpus = 8;
	in.profile_arg = path;
	if (job_resolve(&in, 1, &e) != PPLAN_OK)
		return 0;
	for (size_t i = 0; i < sizeof layouts / sizeof layouts[0]; i++) {
		struct layout l;
		struct prediction p;
		if (job_resolve_layout(&in, layouts[i], &l, &e) == PPLAN_OK)
			(void)cost_predict(&in.model, &in.cluster, &l, &in.opts, &p, &e);
	}
	return 0;
}
