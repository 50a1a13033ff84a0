/*
 * cmd_report.c: `pplan report compare FILE...` (predicted against measured
 * over pplan.report/1 documents, as a table and pplan.comparison/1) and
 * `pplan report html FILE... -o PAGE.html` (one self-contained page).
 * The reports are read as data (reports/run_report.h); nothing here calls
 * the executor.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "compare.h"
#include "html.h"
#include "jsonio.h"

#define MAX_REPORTS 256

static void usage(FILE *f)
{
	fprintf(f,
		"usage: pplan report compare FILE... [--json OUT]\n"
		"       pplan report html FILE... -o PAGE.html\n\n"
		"  compare   predicted against measured for each pplan.report/1 FILE (pplan exec\n"
		"            --report): step time, tokens/s, MFU, bubble fraction, peak memory and\n"
		"            the time of each op class, with the error in percent; over several\n"
		"            reports the mean absolute percentage error and the worst case\n"
		"  --json OUT  also write pplan.comparison/1 to OUT\n"
		"  html      one self-contained page (inline SVG, no script) with a section per FILE:\n"
		"            for a pplan.report/1 the pipeline timeline predicted and measured, memory\n"
		"            per GPU and the errors; for a pplan.search/1 (pplan search --json) step\n"
		"            time against memory for every layout and the best of each family\n"
		"  -o, --out PAGE.html  the page to write (required)\n"
		"  --help      this text\n");
}

/* The command line as one string, for provenance. */
static void command_line(int argc, char **argv, char *buf, size_t len)
{
	size_t used = (size_t)snprintf(buf, len, "pplan");
	for (int i = 0; i < argc && used < len; i++)
		used += (size_t)snprintf(buf + used, len - used, " %s", argv[i]);
}

/* Loads every report; on failure nothing stays allocated. */
static enum pplan_status load_all(char **paths, int n, struct runreport *out,
				  struct perr *e)
{
	for (int i = 0; i < n; i++) {
		enum pplan_status st = runreport_load(paths[i], &out[i], e);
		if (st != PPLAN_OK) {
			while (i-- > 0)
				runreport_free(&out[i]);
			return st;
		}
	}
	return PPLAN_OK;
}

static int report_compare(int argc, char **argv)
{
	char *paths[MAX_REPORTS];
	const char *json = NULL;
	int n = 0, rc = 0;
	struct runreport *reps;
	struct comparison c;
	struct perr e = { { 0 } };
	enum pplan_status st;
	char cmd[2048];

	static const struct option opts[] = {
		{ "help", no_argument, NULL, 'h' },
		{ "json", required_argument, NULL, 'j' },
		{ NULL, 0, NULL, 0 },
	};
	int opt;
	/* "-": the files come back in order, as arguments of code 1, and
	 * argv stays as typed (the command line the outputs record) */
	optind = 1;
	opterr = 0;
	while ((opt = getopt_long(argc, argv, "-:h", opts, NULL)) != -1) {
		if (opt == 'h') {
			usage(stdout);
			return 0;
		} else if (opt == ':') {
			fprintf(stderr, "pplan report compare: --json needs a file name\n");
			return 2;
		} else if (opt == 'j') {
			if (json) {
				fprintf(stderr, "pplan report compare: --json given twice\n");
				return 2;
			}
			json = optarg;
		} else if (opt != 1) {
			fprintf(stderr, "pplan report compare: unknown option '%s' (see pplan report --help)\n",
				argv[optind - 1]);
			return 2;
		} else if (n >= MAX_REPORTS) {
			fprintf(stderr, "pplan report compare: more than %d reports\n",
				MAX_REPORTS);
			return 2;
		} else {
			paths[n++] = optarg;
		}
	}
	if (n == 0) {
		fprintf(stderr, "pplan report compare: no report files given (usage: pplan report compare FILE... [--json OUT])\n");
		return 2;
	}
	if (json && (st = output_check(json, "--json", &e)) != PPLAN_OK)
		return cli_fail(st, &e);
	reps = calloc((size_t)n, sizeof *reps);
	if (!reps)
		return cli_fail(perr_set(&e, PPLAN_ENOMEM, "out of memory"), &e);
	st = load_all(paths, n, reps, &e);
	if (st != PPLAN_OK) {
		free(reps);
		return cli_fail(st, &e);
	}
	st = compare_build(reps, n, &c, &e);
	if (st != PPLAN_OK) {
		rc = cli_fail(st, &e);
		goto out;
	}
	command_line(argc + 1, argv - 1, cmd, sizeof cmd);
	for (int w = 0; w < c.n_warnings; w++)
		fprintf(stderr, "pplan: warning: %s\n", c.warnings[w]);
	if (json) {
		cJSON *doc = compare_json(&c, cmd);
		st = json_write_atomic(json, doc, &e);
		cJSON_Delete(doc);
		if (st != PPLAN_OK) {
			rc = cli_fail(st, &e);
			compare_free(&c);
			goto out;
		}
	}
	compare_print(stdout, &c, cmd);
	compare_free(&c);
out:
	for (int i = 0; i < n; i++)
		runreport_free(&reps[i]);
	free(reps);
	return rc;
}

static int report_html(int argc, char **argv)
{
	char *paths[MAX_REPORTS];
	const char *out = NULL;
	int n = 0;
	struct perr e = { { 0 } };
	enum pplan_status st;
	char cmd[2048];

	static const struct option opts[] = {
		{ "help", no_argument, NULL, 'h' },
		{ "out", required_argument, NULL, 'o' },
		{ NULL, 0, NULL, 0 },
	};
	int c;
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "-:ho:", opts, NULL)) != -1) {
		if (c == 'h') {
			usage(stdout);
			return 0;
		} else if (c == ':') {
			fprintf(stderr, "pplan report html: %s needs a file name\n", argv[optind - 1]);
			return 2;
		} else if (c == 'o') {
			if (out) {
				fprintf(stderr, "pplan report html: -o given twice\n");
				return 2;
			}
			out = optarg;
		} else if (c != 1) {
			fprintf(stderr, "pplan report html: unknown option '%s' (see pplan report --help)\n",
				argv[optind - 1]);
			return 2;
		} else if (n >= MAX_REPORTS) {
			fprintf(stderr, "pplan report html: more than %d files\n", MAX_REPORTS);
			return 2;
		} else {
			paths[n++] = optarg;
		}
	}
	if (n == 0) {
		fprintf(stderr, "pplan report html: no input files given (usage: pplan report html FILE... -o PAGE.html)\n");
		return 2;
	}
	if (!out) {
		fprintf(stderr, "pplan report html: no page to write: give -o PAGE.html\n");
		return 2;
	}
	if ((st = output_check(out, "-o", &e)) != PPLAN_OK)
		return cli_fail(st, &e);
	command_line(argc + 1, argv - 1, cmd, sizeof cmd);
	st = html_write(paths, n, out, cmd, &e);
	if (st != PPLAN_OK)
		return cli_fail(st, &e);
	printf("# pplan report html: wrote %s (%d section%s)\n", out, n, n == 1 ? "" : "s");
	return 0;
}

int cmd_report(int argc, char **argv)
{
	if (argc < 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
		usage(argc < 2 ? stderr : stdout);
		return argc < 2 ? 2 : 0;
	}
	if (!strcmp(argv[1], "compare"))
		return report_compare(argc - 1, argv + 1);
	if (!strcmp(argv[1], "html"))
		return report_html(argc - 1, argv + 1);
	fprintf(stderr, "pplan report: unknown action '%s' (compare or html; see pplan report --help)\n",
		argv[1]);
	return 2;
}
