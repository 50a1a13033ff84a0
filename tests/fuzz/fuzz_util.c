/* fuzz_util.c: helpers the fuzz targets share (fuzz.h). */
#include "fuzz.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cost.h"
#include "host.h"

static char dir[256];

static void cleanup(void)
{
	char path[512];
	if (!dir[0])
		return;
	/* Only the names this harness writes. */
	snprintf(path, sizeof path, "%s/config.json", dir);
	unlink(path);
	snprintf(path, sizeof path, "%s/input", dir);
	unlink(path);
	snprintf(path, sizeof path, "%s/page.html", dir);
	unlink(path);
	rmdir(dir);
}

static void make_dir(void)
{
	if (!dir[0]) {
		const char *root = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp";
		snprintf(dir, sizeof dir, "%s/pplan-fuzz-XXXXXX", root);
		if (!mkdtemp(dir)) {
			perror("fuzz: mkdtemp");
			abort();
		}
		atexit(cleanup);
	}
}

const char *fuzz_temp_path(const char *base)
{
	static char path[512];
	make_dir();
	snprintf(path, sizeof path, "%s/%s", dir, base);
	return path;
}

const char *fuzz_temp_file(const uint8_t *data, size_t size, const char *base)
{
	static char path[512];
	int fd;

	make_dir();
	snprintf(path, sizeof path, "%s/%s", dir, base);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	if (fd < 0) {
		perror("fuzz: open");
		abort();
	}
	for (size_t off = 0; off < size;) {
		ssize_t w = write(fd, data + off, size - off);
		if (w <= 0) {
			perror("fuzz: write");
			abort();
		}
		off += (size_t)w;
	}
	close(fd);
	return path;
}

char *fuzz_strndup(const uint8_t *data, size_t size)
{
	char *s = malloc(size + 1);
	if (!s)
		abort();
	memcpy(s, data, size);
	s[size] = '\0';
	return s;
}

void fuzz_exercise_model(const struct model_spec *m)
{
	static const char *const layouts[] = {
		"dp=8", "tp=8", "tp=2,pp=4,mbs=1", "pp=8,vp=2,gbs=64",
		"tp=2,cp=2,dp=2", "ep=2,dp=8", "dp=8,zero=3,recompute=full",
	};
	struct cluster c;
	struct train_opts o;
	struct perr e;

	(void)model_params_total(m);
	(void)model_params_active(m);
	if (cluster_preset("dgx-h100", 8, &c, &e) != PPLAN_OK)
		abort();
	train_opts_default(&o, m);
	for (size_t i = 0; i < sizeof layouts / sizeof layouts[0]; i++) {
		struct layout l;
		struct prediction p;
		unsigned set = 0;
		if (layout_parse(layouts[i], &l, &set, &e) != PPLAN_OK)
			abort();
		layout_complete(&l, set, 8);
		if (!(set & LK_GBS))
			l.gbs = 64;
		if (layout_check(&l, m, 8, NULL, &e) != PPLAN_OK)
			continue;
		(void)cost_predict(m, &c, &l, &o, &p, &e);
	}
}

void fuzz_exercise_host(const struct host_topo *h)
{
	struct host_cluster_opts o = {0};
	struct cluster c;
	struct perr e;

	for (int i = 0; i < 2; i++) {
		o.gpu = i ? gpu_find("h100-sxm") : NULL;
		if (host_to_cluster(h, &o, &c, &e) != PPLAN_OK)
			continue;
		for (int g = 2; g <= c.gpus_per_node; g *= 2)
			(void)cluster_group_link(&c, g, 1);
	}
}
