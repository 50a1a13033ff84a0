/*
 * units.c: counts as users write them and as pplan prints them (units.h).
 */
#include "units.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int units_parse_count(const char *s, double *out)
{
	char *end;
	double v, scale = 1.0;

	if (!s || !(isdigit((unsigned char)s[0]) || s[0] == '.') ||
	    strpbrk(s, "xXpP"))
		return -1; /* signs, spaces, "inf", "nan", hex floats */
	v = strtod(s, &end);
	if (end == s)
		return -1;
	switch (*end) {
	case 'k': case 'K': scale = 1e3; end++; break;
	case 'm': case 'M': scale = 1e6; end++; break;
	case 'b': case 'B': case 'g': case 'G': scale = 1e9; end++; break;
	case 't': case 'T': scale = 1e12; end++; break;
	default: break;
	}
	v *= scale;
	if (*end != '\0' || !isfinite(v) || !(v > 0))
		return -1;
	*out = v;
	return 0;
}

int units_parse_count_binary(const char *s, double *out)
{
	char buf[64];
	size_t n = s ? strlen(s) : 0;
	double v, scale = 0;

	/* Binary suffixes: Ki, Mi, Gi, Ti. */
	if (n >= 3 && n < sizeof buf && s[n - 1] == 'i') {
		switch (s[n - 2]) {
		case 'K': scale = 1024.0; break;
		case 'M': scale = 1048576.0; break;
		case 'G': scale = 1073741824.0; break;
		case 'T': scale = 1099511627776.0; break;
		default: return -1;
		}
		memcpy(buf, s, n - 2);
		buf[n - 2] = '\0';
		if (units_parse_count(buf, &v) != 0 || !isdigit((unsigned char)buf[n - 3]))
			return -1;
		*out = v * scale;
		return 0;
	}
	return units_parse_count(s, out);
}

int units_parse_whole(const char *s, long *out)
{
	double v;
	if (units_parse_count_binary(s, &v) != 0 || v != floor(v) || v < 1 || v > 1e15)
		return -1;
	*out = (long)v;
	return 0;
}

void units_format_count(char *buf, size_t len, double v)
{
	if (v >= 1e12)
		snprintf(buf, len, "%.2f T", v / 1e12);
	else if (v >= 1e9)
		snprintf(buf, len, "%.2f B", v / 1e9);
	else if (v >= 1e6)
		snprintf(buf, len, "%.2f M", v / 1e6);
	else if (v >= 1e4)
		snprintf(buf, len, "%.1f k", v / 1e3);
	else
		snprintf(buf, len, "%.0f", v);
}
