/*
 * defaults.c: the defaults of defaults.h and the published batches they
 * start from.  Each row of the table is the final global batch the
 * model's authors report (after any ramp-up), at their sequence length;
 * sim/MODEL.md, "Defaults", lists the sources in full.
 */
#include "defaults.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

static const struct published_batch published[] = {
	/* Brown et al. 2020, Table 2.1: 0.5M, 1M, 2M and 3.2M tokens. */
	{ "gpt3-125m", 256, 2048, "GPT-3 (Brown et al. 2020), Table 2.1" },
	{ "gpt3-350m", 256, 2048, "GPT-3 (Brown et al. 2020), Table 2.1" },
	{ "gpt3-760m", 256, 2048, "GPT-3 (Brown et al. 2020), Table 2.1" },
	{ "gpt3-1.3b", 512, 2048, "GPT-3 (Brown et al. 2020), Table 2.1" },
	{ "gpt3-2.7b", 512, 2048, "GPT-3 (Brown et al. 2020), Table 2.1" },
	{ "gpt3-6.7b", 1024, 2048, "GPT-3 (Brown et al. 2020), Table 2.1" },
	{ "gpt3-13b", 1024, 2048, "GPT-3 (Brown et al. 2020), Table 2.1" },
	{ "gpt3-175b", 1536, 2048, "GPT-3 (Brown et al. 2020), Table 2.1, as Megatron-LM ran it" },
	/* Narayanan et al. 2021, Table 1 (weak scaling). */
	{ "megatron-1.7b", 512, 2048, "Narayanan et al. 2021, Table 1" },
	{ "megatron-3.6b", 512, 2048, "Narayanan et al. 2021, Table 1" },
	{ "megatron-7.5b", 512, 2048, "Narayanan et al. 2021, Table 1" },
	{ "megatron-18b", 1024, 2048, "Narayanan et al. 2021, Table 1" },
	{ "megatron-39b", 1536, 2048, "Narayanan et al. 2021, Table 1" },
	{ "megatron-76b", 1792, 2048, "Narayanan et al. 2021, Table 1" },
	{ "megatron-145b", 2304, 2048, "Narayanan et al. 2021, Table 1" },
	{ "megatron-310b", 2160, 2048, "Narayanan et al. 2021, Table 1" },
	{ "megatron-530b", 2520, 2048, "Narayanan et al. 2021, Table 1" },
	{ "megatron-1t", 3072, 2048, "Narayanan et al. 2021, Table 1" },
	/* BigScience 2022: 2048 sequences of 2048 after the ramp-up. */
	{ "bloom-176b", 2048, 2048, "BLOOM (BigScience 2022), 3.4" },
	/* Touvron et al. 2023, 2.2: 4M tokens for every size. */
	{ "llama2-7b", 1024, 4096, "Llama 2 (Touvron et al. 2023), 2.2" },
	{ "llama2-13b", 1024, 4096, "Llama 2 (Touvron et al. 2023), 2.2" },
	{ "llama2-70b", 1024, 4096, "Llama 2 (Touvron et al. 2023), 2.2" },
	/* Dubey et al. 2024, 3.4.1: 4M, then 8M, then 16M tokens. */
	{ "llama3.1-405b", 2048, 8192, "Llama 3 (Dubey et al. 2024), 3.4.1" },
	/* Parmar et al. 2024 and NVIDIA 2024: the last step of the ramp. */
	{ "nemotron4-15b", 1152, 4096, "Nemotron-4 15B (Parmar et al. 2024), Table 2" },
	{ "nemotron4-340b", 2304, 4096, "Nemotron-4 340B (NVIDIA 2024), 2.2" },
};

const struct published_batch *defaults_published_batches(int *n)
{
	*n = (int)(sizeof published / sizeof published[0]);
	return published;
}

long defaults_round_sequences(double tokens, long seq, long gpus)
{
	double want = tokens / (double)seq;
	long odd = gpus > 0 ? gpus : 1, lo;
	while (odd % 2 == 0)
		odd /= 2;
	lo = odd;
	if (!(want > (double)odd))
		return odd;
	while ((double)lo * 2 <= want && lo < (1L << 40))
		lo *= 2;
	/* The nearer in ratio: lo or 2*lo. */
	return want / (double)lo <= 2.0 * (double)lo / want ? lo : 2 * lo;
}

static void format_tokens(char *buf, size_t len, double tokens)
{
	if (tokens >= 1e12)
		snprintf(buf, len, "%.2f T", tokens / 1e12);
	else if (tokens >= 1e9)
		snprintf(buf, len, "%.2f B", tokens / 1e9);
	else if (tokens >= 1e6)
		snprintf(buf, len, "%.2f M", tokens / 1e6);
	else
		snprintf(buf, len, "%.0f", tokens);
}

void defaults_global_batch(const struct model_spec *m, long seq, long gpus,
			   struct batch_default *out)
{
	double tokens;
	char a[32];

	for (size_t i = 0; i < sizeof published / sizeof published[0]; i++) {
		const struct published_batch *p = &published[i];
		if (strcmp(p->model, m->name) != 0)
			continue;
		if (p->seq == seq) {
			out->sequences = p->sequences;
			snprintf(out->origin, sizeof out->origin,
				 "default: the published batch of %s, %s", m->name,
				 p->source);
		} else {
			tokens = (double)p->sequences * (double)p->seq;
			out->sequences = defaults_round_sequences(tokens, seq, gpus);
			format_tokens(a, sizeof a, tokens);
			snprintf(out->origin, sizeof out->origin,
				 "default: the published %s tokens of %s (%s), rounded to %ld-token sequences the GPUs divide",
				 a, m->name, p->source, seq);
		}
		return;
	}
	tokens = (double)DEFAULT_TOKENS_PER_GPU * (double)gpus;
	if (tokens < (double)DEFAULT_MIN_BATCH_TOKENS)
		tokens = (double)DEFAULT_MIN_BATCH_TOKENS;
	out->sequences = defaults_round_sequences(tokens, seq, gpus);
	/* the nearest batch the GPUs divide may fall below the floor (384
	 * GPUs at 8192 tokens: 384 sequences, 3.15 M): the next one up keeps
	 * the "at least" that the echo and docs/commands/search.md say */
	if ((double)out->sequences * (double)seq < (double)DEFAULT_MIN_BATCH_TOKENS)
		out->sequences *= 2;
	format_tokens(a, sizeof a, (double)DEFAULT_MIN_BATCH_TOKENS);
	snprintf(out->origin, sizeof out->origin,
		 "default: %ld tokens per GPU, at least %s, rounded to sequences the GPUs divide",
		 DEFAULT_TOKENS_PER_GPU, a);
}

void defaults_finetune_batch(long seq, long gpus, struct batch_default *out)
{
	out->sequences = defaults_round_sequences((double)DEFAULT_FINETUNE_SEQUENCES * (double)seq,
						  seq, gpus);
	snprintf(out->origin, sizeof out->origin,
		 "default for fine-tuning: %ld sequences, NeMo's fine-tuning data modules' batch, rounded to sequences the GPUs divide",
		 DEFAULT_FINETUNE_SEQUENCES);
}

double defaults_memory_cap_gib(const struct gpu_spec *g)
{
	return DEFAULT_MEMORY_FRACTION * g->mem_gib;
}
