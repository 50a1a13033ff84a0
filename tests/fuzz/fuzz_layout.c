/* fuzz_layout.c: layout strings (--layout) through layout_parse, then
 * completed and checked against two models as predict does, and the rank
 * map walked.  Seeds: tests/fuzz/seeds/layout. */
#include <stdlib.h>

#include "cost.h"
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char *const models[] = {"llama3-8b", "mixtral-8x7b"};
	char *s = fuzz_strndup(data, size);
	struct layout l;
	struct perr e;
	unsigned set = 0;

	if (layout_parse(s, &l, &set, &e) == PPLAN_OK) {
		char buf[256];
		long gpus = layout_gpus(&l);
		struct rank_order o;
		struct rank_coords rc;
		layout_complete(&l, set, gpus);
		layout_format(&l, buf, sizeof buf);
		rank_order_default(&o);
		if (gpus > 0) {
			layout_rank_coords(&l, &o, gpus - 1, &rc);
			(void)layout_coords_rank(&l, &o, &rc);
		}
		for (int i = 0; i < 2; i++) {
			const struct model_spec *m = model_find(models[i]);
			if (!(set & LK_GBS))
				l.gbs = 1024;
			(void)layout_check(&l, m, gpus, NULL, &e);
		}
	}
	(void)rank_order_parse(s, &(struct rank_order){0}, &e);
	free(s);
	return 0;
}
