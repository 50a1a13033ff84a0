/* train_opts.c: a job's training options, defaulted and resolved against
 * its framework (train_opts.h). */
#include "train_opts.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "units.h"

const struct cost_params *train_opts_params(const struct train_opts *o)
{
	return o->params ? o->params : cost_params_default();
}

void train_opts_default(struct train_opts *o, const struct model_spec *m)
{
	memset(o, 0, sizeof *o);
	o->seq = m->seq;
	o->precision = PREC_BF16;
	o->fw = framework_default();
	fw_switches_none(&o->switches);
	o->use_des = 1;
	rank_order_default(&o->order);
	framework_resolve(o->fw, o->precision, NULL, &o->b, NULL);
}

int train_opts_peft_parse(const char *s, int *rank)
{
	long r = LORA_DEFAULT_RANK;
	if (!strcmp(s, "none") || !strcmp(s, "full")) {
		*rank = 0;
		return 0;
	}
	if (strncmp(s, "lora", 4) != 0 || (s[4] && s[4] != ':') ||
	    (s[4] == ':' && (units_parse_whole(s + 5, &r) != 0 || r > 65536)))
		return -1;
	*rank = (int)r;
	return 0;
}

static const char *const target_names[] = {
	"linear_qkv", "linear_proj", "linear_fc1", "linear_fc2", "linear_q_proj",
	"linear_q_down_proj", "linear_q_up_proj", "linear_kv_down_proj", "linear_kv_up_proj",
	"in_proj", "out_proj",
};
#define N_TARGETS (sizeof target_names / sizeof target_names[0])

unsigned train_opts_lora_targets(const struct train_opts *o)
{
	return o->lora_targets ? o->lora_targets : LORA_TARGETS_DEFAULT;
}

const char *lora_target_name(unsigned bit)
{
	for (size_t i = 0; i < N_TARGETS; i++)
		if (bit == 1u << i)
			return target_names[i];
	return "?";
}

int train_opts_bf16_layers_parse(const char *s, int *first, int *last)
{
	long a, b;
	char *end;
	if (!s || !isdigit((unsigned char)*s))
		return -1;
	a = strtol(s, &end, 10);
	if (*end == '\0') {
		b = a;
	} else {
		if (*end != ',' || !isdigit((unsigned char)end[1]))
			return -1;
		b = strtol(end + 1, &end, 10);
		if (*end != '\0')
			return -1;
	}
	if (a < 0 || b < 0 || a > 1024 || b > 1024)
		return -1;
	*first = (int)a;
	*last = (int)b;
	return 0;
}

int lora_targets_parse(const char *s, unsigned *out, char *bad, size_t len)
{
	unsigned t = 0;
	while (*s) {
		char w[32];
		size_t n = strcspn(s, ",+ \t"), i;
		if (n == 0) {
			s++;
			continue;
		}
		snprintf(w, sizeof w, "%.*s", (int)(n < sizeof w ? n : sizeof w - 1), s);
		if (!strcmp(w, "all")) {
			t |= LORA_TARGET_ALL;
		} else {
			for (i = 0; i < N_TARGETS; i++)
				if (!strcmp(w, target_names[i]) ||
				    (!strncmp(target_names[i], "linear_", 7) && !strcmp(w, target_names[i] + 7)))
					break;
			if (i == N_TARGETS || n >= sizeof w) {
				snprintf(bad, len, "%.*s", (int)n, s);
				return -1;
			}
			t |= 1u << i;
		}
		s += n;
	}
	if (!t) {
		snprintf(bad, len, "%s", "(none)");
		return -1;
	}
	*out = t;
	return 0;
}

const char *lora_targets_format(unsigned t, const char *sep, char *buf, size_t len)
{
	size_t at = 0;
	buf[0] = 0;
	for (size_t i = 0; i < N_TARGETS && at < len; i++)
		if (t & (1u << i)) {
			int w = snprintf(buf + at, len - at, "%s%s", at ? sep : "", target_names[i]);
			at += w > 0 ? (size_t)w : 0;
		}
	return buf;
}

enum pplan_status train_opts_resolve(struct train_opts *o, struct perr *e)
{
	return framework_resolve(o->fw, o->precision, &o->switches, &o->b, e);
}

int train_opts_fit_gpu(struct train_opts *o, const struct gpu_spec *g)
{
	if (o->b.attention != FW_ATTN_FLASH || o->switches.flash >= 0 ||
	    o->fw->sdpa_attention || g->arch == ARCH_CPU || g->arch >= ARCH_AMPERE)
		return 0;
	o->b.attention = FW_ATTN_UNFUSED;
	return 1;
}

int train_opts_fit_tp_overlap(struct train_opts *o, const struct gpu_spec *g)
{
	if (o->b.tp_overlap == FW_TPO_NONE || o->switches.tp_overlap >= 0 ||
	    g->arch == ARCH_CPU || g->arch >= ARCH_AMPERE)
		return 0;
	o->b.tp_overlap = FW_TPO_NONE;
	return 1;
}

long train_opts_vocab(const struct train_opts *o, const struct layout *l, long vocab)
{
	long k = o->fw && o->fw->vocab_multiple > 0 ? (long)o->fw->vocab_multiple * l->tp : 0;
	return k > 1 ? (vocab + k - 1) / k * k : vocab;
}

int train_opts_bf16_moments(const struct train_opts *o, const struct layout *l)
{
	return o->b.bf16_moments && l->zero >= 1;
}

/* The master as the 16 bits a bf16 weight lacks (TE's FusedAdam
 * store_param_remainders, on by default from TE 2.1). */
static int master_remainder(const struct train_opts *o, const struct layout *l)
{
	return train_opts_bf16_moments(o, l) && o->precision == PREC_BF16 && !o->b.fp8_weights;
}

double train_opts_optimizer_bytes(const struct train_opts *o, const struct layout *l)
{
	double master = 4.0;
	if ((o->precision == PREC_FP32 && !o->b.fp32_master) ||
	    (l->zero >= 3 && o->b.sharding == FW_SHARD_FSDP))
		master = 0.0; /* the weight is its own master */
	else if (master_remainder(o, l))
		master = 2.0;
	return master + (train_opts_bf16_moments(o, l) ? 4.0 : 8.0);
}

double train_opts_adam_bytes(const struct train_opts *o, const struct layout *l)
{
	return 30.0 - (train_opts_bf16_moments(o, l) ? 8.0 : 0.0) -
	       (master_remainder(o, l) ? 2.0 : 0.0);
}

int train_opts_moe_a2a_overlap(const struct train_opts *o, const struct layout *l)
{
	return o->b.moe_a2a_overlap && l->ep > 1 && l->recompute != RECOMPUTE_FULL &&
	       (l->pp == 1 || l->vp > 1);
}
