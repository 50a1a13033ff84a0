/*
 * testutil.h: helpers the Criterion tests share (tests/testutil.c is
 * linked into every test executable).
 */
#ifndef PPLAN_TESTUTIL_H
#define PPLAN_TESTUTIL_H

/* Runs $PPLAN_BIN (set by ctest) with argv (argv[0] included, NULL
 * terminated), output discarded; returns its exit status, -1 if it did
 * not exit.  Skips the calling test when run outside ctest. */
int run_pplan(char *const argv[]);

/* The same with stdout written to out_path and stderr to err_path (NULL:
 * discarded). */
int run_pplan_to(char *const argv[], const char *out_path, const char *err_path);

/* Reads a whole file into a NUL-terminated buffer the caller frees. */
char *slurp(const char *path);

struct train_opts;
/* Runs o under framework `name` (its row for `year`, 0 the newest) and
 * resolves it; a failed lookup or resolution fails the test. */
void use_framework(struct train_opts *o, const char *name, int year);

#endif
