/* fuzz_report.c: pplan.report/1 (pplan exec --report) through
 * runreport_load and the comparison, and both documents pplan report
 * html draws (pplan.report/1 and pplan.search/1) through html_write.
 * Seeds: tests/fixtures/reports and tests/fuzz/seeds/report. */
#include <stdio.h>
#include <stdlib.h>

#include "compare.h"
#include "fuzz.h"
#include "html.h"
#include "run_report.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct runreport r;
	struct perr e;
	char *paths[1];
	char page[512];
	const char *path = fuzz_temp_file(data, size, "input");

	if (runreport_load(path, &r, &e) == PPLAN_OK) {
		struct comparison c;
		if (compare_build(&r, 1, &c, &e) == PPLAN_OK) {
			char *buf = NULL;
			size_t len = 0;
			FILE *f = open_memstream(&buf, &len);
			if (f) {
				compare_print(f, &c, "fuzz");
				fclose(f);
			}
			free(buf);
			cJSON_Delete(compare_json(&c, "fuzz"));
			compare_free(&c);
		}
		runreport_free(&r);
	}
	snprintf(page, sizeof page, "%s", fuzz_temp_path("page.html"));
	paths[0] = (char *)path;
	(void)html_write(paths, 1, page, "fuzz", &e);
	return 0;
}
