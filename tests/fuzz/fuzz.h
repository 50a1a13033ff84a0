/*
 * fuzz.h: what the fuzz targets in tests/fuzz/ share.  Each fuzz_<name>.c
 * defines LLVMFuzzerTestOneInput for one parser; it is linked either with
 * libFuzzer (-DPPLAN_FUZZ=ON, clang) into fuzz_<name>, or with replay.c
 * into replay_<name>, which ctest runs over the seeds and every finding
 * in tests/fuzz/regressions/<name>/ with the normal compiler (RELIABILITY.md).
 */
#ifndef PPLAN_FUZZ_H
#define PPLAN_FUZZ_H

#include <stddef.h>
#include <stdint.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Writes data to a file of this process named `base` in a private
 * temporary directory (tmpfs where there is one) and returns its path,
 * valid until the next call.  Aborts if it cannot (a harness failure). */
const char *fuzz_temp_file(const uint8_t *data, size_t size, const char *base);

/* The path of `base` in that directory (for outputs: "page.html"),
 * valid until the next call. */
const char *fuzz_temp_path(const char *base);

/* A NUL-terminated copy of data (the caller frees). */
char *fuzz_strndup(const uint8_t *data, size_t size);

/* Exercises a loaded model as the subcommands do: the parameter counts,
 * and a prediction of a few layouts on a small default cluster. */
struct model_spec;
void fuzz_exercise_model(const struct model_spec *m);

/* Turns a discovered host into a cluster as pplan topo does (GPU type
 * h100-sxm when the host's cannot be guessed) and asks for group links. */
struct host_topo;
void fuzz_exercise_host(const struct host_topo *h);

#endif
