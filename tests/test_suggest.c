/*
 * test_suggest.c: "did you mean" (topology/suggest.c).  Distances worked
 * by hand: "num_layer" -> "num_layers" is one insertion, "tpp" -> "tp"
 * one deletion, "h100sxm" -> "h100-sxm" one insertion, "serach" ->
 * "search" one swap of neighbours; "frobnicate" is 7 or more edits from
 * every subcommand, so nothing is suggested.
 */
#include <criterion/criterion.h>
#include <string.h>

#include "suggest.h"

static const char *const keys[] = {"num_layers", "hidden_size", "num_kv_heads",
				   "seq_length", NULL};
static const char *const cmds[] = {"search", "predict", "simulate", "validate",
				   "topo", "report", NULL};

Test(suggest, typos_find_their_word)
{
	cr_assert_str_eq(suggest_list("num_layer", keys), "num_layers");
	cr_assert_str_eq(suggest_list("num_kv_head", keys), "num_kv_heads");
	cr_assert_str_eq(suggest_list("Hidden_Size", keys), "hidden_size");
	cr_assert_str_eq(suggest_list("serach", cmds), "search");
	cr_assert_str_eq(suggest_list("simulat", cmds), "simulate");
}

Test(suggest, far_or_short_words_find_nothing)
{
	cr_assert_null(suggest_list("frobnicate", cmds));
	cr_assert_null(suggest_list("x", cmds));        /* 1 edit is half of 1 */
	cr_assert_null(suggest_list("tpx", cmds));      /* "topo" is 2 of 3 */
	cr_assert_null(suggest_list("", cmds));
	cr_assert_null(suggest_list(NULL, cmds));
}

struct named {
	char name[16];
	int value;
};

Test(suggest, tables_and_phrase)
{
	static const struct named t[] = {{"h100-sxm", 1}, {"a100-80gb", 2}};
	static const struct { const char *key; unsigned bit; } k[] = {{"tp", 1}, {"pp", 2}, {"mbs", 4}};
	char buf[64];
	cr_assert_str_eq(suggest_table("h100sxm", t, 2, sizeof t[0], 1), "h100-sxm");
	cr_assert_str_eq(suggest_table("mbss", k, 3, sizeof k[0], 0), "mbs");
	cr_assert_null(suggest_table("h100", t, 0, sizeof t[0], 1));
	cr_assert_str_eq(suggest_phrase(buf, sizeof buf, "tp"), " (did you mean tp?)");
	cr_assert_str_eq(suggest_phrase(buf, sizeof buf, NULL), "");
}
