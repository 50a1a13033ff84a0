/*
 * cli.h: the subcommands of the pplan executable.  Each takes argc/argv
 * with argv[0] the subcommand name, prints its own usage, and returns an
 * exit status: 0 done, 2 bad input, 1 failure of the machine or the run.
 */
#ifndef PPLAN_CLI_H
#define PPLAN_CLI_H

int cmd_search(int argc, char **argv);
int cmd_predict(int argc, char **argv);
int cmd_plan(int argc, char **argv);
int cmd_validate(int argc, char **argv);
int cmd_fit(int argc, char **argv);
int cmd_simulate(int argc, char **argv);
int cmd_topo(int argc, char **argv);
int cmd_report(int argc, char **argv);
int cmd_exec(int argc, char **argv);
int cmd_calibrate(int argc, char **argv);
int cmd_tune(int argc, char **argv);

/* Prints "pplan: MSG" on stderr and returns the exit code for st. */
#include "status.h"
int cli_fail(enum pplan_status st, const struct perr *err);

#endif
