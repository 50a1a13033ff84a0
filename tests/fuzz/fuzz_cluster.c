/* fuzz_cluster.c: pplan.cluster/1 files through cluster_load, as given
 * and resized to 64 GPUs, then the group links a search asks for.
 * Seeds: tests/fuzz/seeds/cluster (written by pplan topo). */
#include <stdlib.h>

#include "cluster.h"
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const long sizes[] = {0, 64};
	struct cluster c;
	struct perr e;
	const char *path = fuzz_temp_file(data, size, "input");

	for (int i = 0; i < 2; i++) {
		if (cluster_load(path, sizes[i], &c, &e) != PPLAN_OK)
			continue;
		(void)cluster_gpus(&c);
		for (int g = 2; g <= 64; g *= 2)
			for (int stride = 1; stride <= 64 / g; stride *= 2)
				(void)cluster_group_link(&c, g, stride);
	}
	return 0;
}
