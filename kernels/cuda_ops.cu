/*
 * cuda_ops.cu: the module's three kernel tables (fp32, bf16, fp16
 * storage), made once from each kernel file's part, and the module's
 * sticky kernel error.  The tables are filled at load time by a static
 * constructor of this file, so reading them needs no lock.
 */
#include <stdarg.h>
#include <stdio.h>

#include "cuda_common.cuh"

static struct kern_ops tables[3];
static char kcu_error[256];

static void fill(struct kern_ops *o, enum kern_dtype d)
{
	o->version = PPLAN_KERNELS_VERSION;
	o->dtype = d;
	kcu_fill_norm(o);
	kcu_fill_act(o);
	kcu_fill_layout(o);
	kcu_fill_flash(o);
	kcu_fill_embed(o);
	kcu_fill_optim(o);
}

__attribute__((constructor)) static void tables_init(void)
{
	fill(&tables[KD_F32], KD_F32);
	fill(&tables[KD_BF16], KD_BF16);
	fill(&tables[KD_F16], KD_F16);
}

const struct kern_ops *kcu_kernels(int dtype)
{
	if (dtype < KD_F32 || dtype > KD_F16)
		return NULL;
	return &tables[dtype];
}

void kcu_fail(const char *fmt, ...)
{
	va_list ap;
	if (kcu_error[0])
		return;
	va_start(ap, fmt);
	vsnprintf(kcu_error, sizeof kcu_error, fmt, ap);
	va_end(ap);
}

int kcu_error_take(char *why, size_t len)
{
	if (!kcu_error[0])
		return 0;
	if (why)
		snprintf(why, len, "%s", kcu_error);
	kcu_error[0] = '\0';
	return 1;
}
