/*
 * table.h: fixed-width tables in the nccl-tests manner: '#' provenance
 * lines, a names row and a units row, then one row per entry.  Cells are
 * strings the caller formats; a missing number is printed as "-".
 */
#ifndef PPLAN_TABLE_H
#define PPLAN_TABLE_H

#include <stdio.h>

struct table_col {
	const char *name;
	const char *unit;   /* "(s)", "(GiB)", "" */
	int width;
	int left;           /* left-aligned (text) instead of right */
};

void table_header(FILE *f, const struct table_col *cols, int n);
void table_row(FILE *f, const struct table_col *cols, int n,
	       const char *const *cells);

/* Formats v with fmt into buf, or "-" when v is not finite. */
const char *table_num(char *buf, size_t len, const char *fmt, double v);

#endif
