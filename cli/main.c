/*
 * main.c: the pplan executable.  Dispatches to one subcommand; the only
 * place where a status becomes an exit code is the subcommand's return.
 */
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "suggest.h"
#include "version.h"

static const struct {
	const char *name;
	int (*run)(int argc, char **argv);
	const char *what;
} commands[] = {
	{ "search", cmd_search, "rank every parallel layout of a model on a cluster" },
	{ "predict", cmd_predict, "explain one layout: memory and time, term by term" },
	{ "plan", cmd_plan, "fewest GPUs, days and cost to train N tokens by a deadline; clusters compared" },
	{ "simulate", cmd_simulate, "play one layout's pipeline schedule event by event" },
	{ "calibrate", cmd_calibrate, "measure this machine (mpirun): GEMMs, bandwidth, collectives" },
	{ "exec", cmd_exec, "run one layout for real under mpirun or srun and measure it" },
	{ "tune", cmd_tune, "run the best layouts, refit the profile on them and rank them again" },
	{ "validate", cmd_validate, "predict published training runs and print the error" },
	{ "fit", cmd_fit, "fit the cost model's constants to measured runs; write a profile" },
	{ "topo", cmd_topo, "discover this host's topology and write a cluster file" },
	{ "report", cmd_report, "compare predicted and measured runs; draw them as a page" },
};

static void usage(FILE *f)
{
	fprintf(f, "usage: pplan COMMAND [options]   (pplan COMMAND --help)\n\n");
	for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
		fprintf(f, "  %-9s %s\n", commands[i].name, commands[i].what);
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		usage(stderr);
		return 2;
	}
	if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0 ||
	    strcmp(argv[1], "help") == 0) {
		usage(stdout);
		return 0;
	}
	if (strcmp(argv[1], "--version") == 0) {
		printf("pplan %s (git %s)\n", PPLAN_VERSION, PPLAN_GIT_HASH);
		return 0;
	}
	for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
		if (strcmp(argv[1], commands[i].name) == 0)
			return commands[i].run(argc - 1, argv + 1);
	{
		char dym[96];
		fprintf(stderr, "pplan: unknown command '%s'%s (try pplan --help)\n", argv[1],
			suggest_phrase(dym, sizeof dym,
				       suggest_table(argv[1], commands,
						     sizeof commands / sizeof commands[0],
						     sizeof commands[0], 0)));
	}
	return 2;
}
