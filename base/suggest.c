/* suggest.c: the nearest name for a typo (suggest.h). */
#include "suggest.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>

#define MAX_NAME 64

/* Optimal string alignment distance: insertions, deletions,
 * substitutions and swaps of neighbours, case-insensitive. */
static int distance(const char *a, const char *b)
{
	int d[MAX_NAME + 1][MAX_NAME + 1];
	size_t n = strlen(a), m = strlen(b);

	if (n > MAX_NAME || m > MAX_NAME)
		return MAX_NAME;
	for (size_t i = 0; i <= n; i++)
		d[i][0] = (int)i;
	for (size_t j = 0; j <= m; j++)
		d[0][j] = (int)j;
	for (size_t i = 1; i <= n; i++)
		for (size_t j = 1; j <= m; j++) {
			int ca = tolower((unsigned char)a[i - 1]);
			int cb = tolower((unsigned char)b[j - 1]);
			int best = d[i - 1][j - 1] + (ca != cb);
			if (d[i - 1][j] + 1 < best)
				best = d[i - 1][j] + 1;
			if (d[i][j - 1] + 1 < best)
				best = d[i][j - 1] + 1;
			if (i > 1 && j > 1 &&
			    ca == tolower((unsigned char)b[j - 2]) &&
			    tolower((unsigned char)a[i - 2]) == cb &&
			    d[i - 2][j - 2] + 1 < best)
				best = d[i - 2][j - 2] + 1;
			d[i][j] = best;
		}
	return d[n][m];
}

static const char *nearest(const char *word, const void *table, size_t n,
			   size_t stride, int inline_name)
{
	const char *best = NULL;
	int best_d = 3;
	size_t len = word ? strlen(word) : 0;

	if (!word || !table || len == 0 || len > MAX_NAME)
		return NULL;
	for (size_t i = 0; n == 0 || i < n; i++) {
		const char *entry = (const char *)table + i * stride;
		const char *c = inline_name ? entry : *(const char *const *)entry;
		int dist;
		if (!c)
			break;
		dist = distance(word, c);
		if (dist < best_d && 2 * (size_t)dist < len) {
			best_d = dist;
			best = c;
		}
	}
	return best;
}

const char *suggest_list(const char *word, const char *const *list)
{
	return nearest(word, list, 0, sizeof *list, 0);
}

const char *suggest_table(const char *word, const void *table, size_t n,
			  size_t stride, int inline_name)
{
	return n ? nearest(word, table, n, stride, inline_name) : NULL;
}

const char *suggest_phrase(char *buf, size_t len, const char *near)
{
	if (near)
		snprintf(buf, len, " (did you mean %s?)", near);
	else if (len)
		buf[0] = '\0';
	return buf;
}

int name_squeeze(const char *s, const char *keep, char *out, size_t len)
{
	size_t n = 0;
	if (len == 0)
		return 0;
	for (; *s; s++) {
		if (!isalnum((unsigned char)*s) && !(keep && *s && strchr(keep, *s)))
			continue;
		if (n + 1 >= len) {
			out[n] = '\0';
			return 0;
		}
		out[n++] = (char)tolower((unsigned char)*s);
	}
	out[n] = '\0';
	return 1;
}
