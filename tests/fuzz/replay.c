/*
 * replay.c: runs a fuzz target's entry point over files, as libFuzzer
 * would run them, with whatever compiler built it (the plain and the
 * ASan/UBSan builds run it in ctest).  Arguments are files or folders
 * (every regular file in them).  Exit 0 when every input returned.
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "fuzz.h"

static long replayed;

static int replay_file(const char *path)
{
	FILE *f = fopen(path, "rb");
	uint8_t *buf;
	long n;

	if (!f) {
		fprintf(stderr, "replay: cannot open %s\n", path);
		return -1;
	}
	if (fseek(f, 0, SEEK_END) != 0 || (n = ftell(f)) < 0 ||
	    fseek(f, 0, SEEK_SET) != 0) {
		fclose(f);
		fprintf(stderr, "replay: cannot read %s\n", path);
		return -1;
	}
	buf = malloc((size_t)n + 1);
	if (!buf || fread(buf, 1, (size_t)n, f) != (size_t)n) {
		fclose(f);
		free(buf);
		fprintf(stderr, "replay: cannot read %s\n", path);
		return -1;
	}
	fclose(f);
	LLVMFuzzerTestOneInput(buf, (size_t)n);
	free(buf);
	replayed++;
	return 0;
}

static int cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static int replay_path(const char *path)
{
	struct stat sb;
	struct dirent *d;
	DIR *dir;
	char **names = NULL;
	size_t n = 0, cap = 0;
	int rc = 0;

	if (stat(path, &sb) != 0) {
		fprintf(stderr, "replay: no such file or folder %s\n", path);
		return -1;
	}
	if (!S_ISDIR(sb.st_mode))
		return S_ISREG(sb.st_mode) ? replay_file(path) : 0;
	if (!(dir = opendir(path)))
		return -1;
	while ((d = readdir(dir)) != NULL) {
		char full[4096];
		if (d->d_name[0] == '.')
			continue;
		snprintf(full, sizeof full, "%s/%s", path, d->d_name);
		if (stat(full, &sb) != 0 || !S_ISREG(sb.st_mode))
			continue;
		if (n == cap) {
			cap = cap ? 2 * cap : 64;
			names = realloc(names, cap * sizeof *names);
			if (!names)
				abort();
		}
		names[n++] = strdup(full);
	}
	closedir(dir);
	if (n > 1)
		qsort(names, n, sizeof *names, cmp);
	for (size_t i = 0; i < n; i++) {
		if (replay_file(names[i]) != 0)
			rc = -1;
		free(names[i]);
	}
	free(names);
	return rc;
}

int main(int argc, char **argv)
{
	int rc = 0;
	for (int i = 1; i < argc; i++)
		if (replay_path(argv[i]) != 0)
			rc = 1;
	printf("replayed %ld inputs\n", replayed);
	return rc;
}
