/*
 * suggest.h: "did you mean" for a name that is not one of a list (an
 * unknown key, model, GPU, preset or subcommand): the nearest candidate
 * by edit distance, when it is near enough to be a typo.
 */
#ifndef PPLAN_SUGGEST_H
#define PPLAN_SUGGEST_H

#include <stddef.h>

/* The entry of the NULL-terminated list nearest to word
 * (case-insensitive Levenshtein distance, a swap of two neighbours
 * counting one) if that distance is at most 2 and less than half of
 * word's length; else NULL. */
const char *suggest_list(const char *word, const char *const *list);

/* The same over a table of n structs, stride bytes apart, each starting
 * with its name: a char array when inline_name, else a const char *. */
const char *suggest_table(const char *word, const void *table, size_t n,
			  size_t stride, int inline_name);

/* s lower-cased, keeping its letters, digits and the characters of keep
 * only ("FP8-CS" -> "fp8cs"), into out; 0 when that does not fit len.
 * How names written by people are compared to pplan's tables. */
int name_squeeze(const char *s, const char *keep, char *out, size_t len);

/* " (did you mean NAME?)" in buf, or "" when nearest is NULL; returns buf. */
const char *suggest_phrase(char *buf, size_t len, const char *nearest);

#endif
