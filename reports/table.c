/* table.c: nccl-tests style fixed-width tables. */
#include "table.h"

#include <math.h>

static void cell(FILE *f, const struct table_col *c, const char *s, int first)
{
	if (!first)
		fputs("  ", f);
	if (c->left)
		fprintf(f, "%-*s", c->width, s);
	else
		fprintf(f, "%*s", c->width, s);
}

void table_header(FILE *f, const struct table_col *cols, int n)
{
	fputs("#", f);
	for (int i = 0; i < n; i++)
		cell(f, &cols[i], cols[i].name, 0);
	fputs("\n#", f);
	for (int i = 0; i < n; i++)
		cell(f, &cols[i], cols[i].unit, 0);
	fputs("\n", f);
}

void table_row(FILE *f, const struct table_col *cols, int n,
	       const char *const *cells)
{
	fputs(" ", f);
	for (int i = 0; i < n; i++)
		cell(f, &cols[i], cells[i], 0);
	fputs("\n", f);
}

const char *table_num(char *buf, size_t len, const char *fmt, double v)
{
	if (!isfinite(v))
		snprintf(buf, len, "-");
	else
		snprintf(buf, len, fmt, v);
	return buf;
}
