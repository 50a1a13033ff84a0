/* cudamod.c: loading pplan's CUDA module (cudamod.h). */
#include "cudamod.h"

#include <dlfcn.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* PPLAN_CUDA_MODULE, or libpplan_cuda.so in the executable's directory. */
static int module_path(char *path, size_t plen, char *why, size_t wlen)
{
	const char *env = getenv("PPLAN_CUDA_MODULE");
	char exe[PATH_MAX], *slash;
	ssize_t n;

	if (env && *env) {
		snprintf(path, plen, "%s", env);
		return 0;
	}
	n = readlink("/proc/self/exe", exe, sizeof exe - 1);
	if (n <= 0) {
		snprintf(why, wlen, "cannot locate the pplan executable");
		return -1;
	}
	exe[n] = '\0';
	slash = strrchr(exe, '/');
	if (slash)
		*slash = '\0';
	snprintf(path, plen, "%s/libpplan_cuda.so", exe);
	return 0;
}

const struct pplan_cuda_api *cudamod_load(char *path, size_t plen, char *why,
					  size_t wlen)
{
	char buf[PATH_MAX + 32];
	void *lib, *sym;
	pplan_cuda_get_api_fn get;
	const struct pplan_cuda_api *api;

	if (!path) {
		path = buf;
		plen = sizeof buf;
	}
	if (module_path(path, plen, why, wlen) != 0)
		return NULL;
	/* Kept open for the life of the process: CUDA must not be unloaded. */
	lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (!lib) {
		snprintf(why, wlen, "%s cannot be loaded (pplan was built without CUDA, or the CUDA libraries are missing): %s",
			 path, dlerror());
		return NULL;
	}
	sym = dlsym(lib, PPLAN_CUDA_ENTRY);
	memcpy(&get, &sym, sizeof get); /* object -> function pointer, as POSIX allows */
	api = get ? get(PPLAN_CUDA_API_VERSION) : NULL;
	if (!api) {
		snprintf(why, wlen, "%s has no version-%d interface", path,
			 PPLAN_CUDA_API_VERSION);
		return NULL;
	}
	return api;
}
