/*
 * units.h: the units pplan computes in and the ones it shows, in one
 * place.  Inside, times are seconds and sizes bytes; at the edges GB/s
 * is 1e9 B/s and GiB is 2^30 B, and every column header and JSON key
 * says which (`_s`, `_gib`, `_gbps`).  Also the parsing and printing of
 * counts as users write them ("70B", "4M", "4Mi", "15T").
 */
#ifndef PPLAN_UNITS_H
#define PPLAN_UNITS_H

#include <stddef.h>

#define GIB (1024.0 * 1024.0 * 1024.0) /* bytes in a GiB */
#define GB 1e9                           /* bytes in a GB (bandwidths: GB/s) */

/* A positive count with an optional decimal suffix: k/K 1e3, m/M 1e6,
 * b/B/g/G 1e9, t/T 1e12 ("70B", "1.5T", "4096").  Signs, spaces, hex,
 * inf and nan are refused.  0 and *out set, or -1. */
int units_parse_count(const char *s, double *out);

/* The same, also with binary suffixes Ki, Mi, Gi, Ti ("4Mi" = 4194304). */
int units_parse_count_binary(const char *s, double *out);

/* A positive whole number from 1 to 1e15 in either notation. */
int units_parse_whole(const char *s, long *out);

/* A count with a decimal suffix for people: 4194304 -> "4.19 M",
 * 70.55e9 -> "70.55 B". */
void units_format_count(char *buf, size_t len, double v);

#endif
