/*
 * hwlocxml_rules.c: what each element of an hwloc XML export must say
 * (hwlocxml.c has the scanner and the reasons): object types, kinds and
 * their nesting, the four sets and their nesting, cache depths, and the
 * sizes of distances matrices.
 */
#include "hwlocxml_internal.h"

#include <limits.h>
#include <string.h>

static const struct objtype types[] = {
	{"Machine", K_NORMAL, 0, 0}, {"Package", K_NORMAL, 0, 0},
	{"Die", K_NORMAL, 0, 0}, {"Core", K_NORMAL, 0, 0},
	{"PU", K_NORMAL, 0, 0}, {"Group", K_NORMAL, 0, 0},
	{"L1Cache", K_NORMAL, 1, 0}, {"L2Cache", K_NORMAL, 2, 0},
	{"L3Cache", K_NORMAL, 3, 0}, {"L4Cache", K_NORMAL, 4, 0},
	{"L5Cache", K_NORMAL, 5, 0}, {"L1iCache", K_NORMAL, 1, 1},
	{"L2iCache", K_NORMAL, 2, 1}, {"L3iCache", K_NORMAL, 3, 1},
	{"NUMANode", K_MEMORY, 0, 0}, {"MemCache", K_MEMORY, 0, 0},
	{"Bridge", K_IO, 0, 0}, {"PCIDev", K_IO, 0, 0},
	{"OSDev", K_IO, 0, 0}, {"Misc", K_MISC, 0, 0},
};
#define NTYPES ((int)(sizeof types / sizeof types[0]))

#define SET_CPU 0
#define SET_CCPU 1
#define SET_NODE 2
#define SET_CNODE 3
static const char *const set_names[4] = {"cpuset", "complete_cpuset",
					 "nodeset", "complete_nodeset"};

const struct objtype *hwlocxml_find_type(const char *s, size_t n)
{
	for (int i = 0; i < NTYPES; i++)
		if (hwlocxml_eq(s, n, types[i].name))
			return &types[i];
	return NULL;
}

/* Digits only, at most 20 of them; *out the value (saturated). */
int hwlocxml_parse_num(const char *s, size_t n, unsigned long *out)
{
	unsigned long v = 0;
	if (n == 0 || n > 20)
		return -1;
	for (size_t i = 0; i < n; i++) {
		if (s[i] < '0' || s[i] > '9')
			return -1;
		v = v > (ULONG_MAX - 9) / 10 ? ULONG_MAX : v * 10 + (unsigned long)(s[i] - '0');
	}
	*out = v;
	return 0;
}

/* hwloc's set syntax: comma-separated 32-bit groups, most significant
 * first, each "0x" and 1-8 hex digits, or empty (zero) between two
 * others; a leading "0xf...f" group means every higher bit is set. */
int hwlocxml_parse_set(const char *s, size_t n, struct bset *b)
{
	size_t groups = 1, i = 0;
	int k;

	memset(b, 0, sizeof *b);
	if (n == 0)
		return -1;
	for (size_t j = 0; j < n; j++)
		groups += s[j] == ',';
	if (n >= 7 && memcmp(s, "0xf...f", 7) == 0) {
		b->inf = 1;
		groups--;
		i = 7;
		if (i < n && s[i++] != ',')
			return -1;
	}
	if (groups > HWLOCXML_MAX_SET_WORDS)
		return -1;
	b->n = (int)groups;
	for (k = (int)groups - 1; k >= 0; k--) {
		size_t start = i;
		uint32_t v = 0;
		while (i < n && s[i] != ',')
			i++;
		/* Empty groups only between others: hwloc asserts on a
		 * leading one (fuzzing found it: bitmap.c:395). */
		if (i == start && (k == (int)groups - 1 || k == 0))
			return -1;
		if (i > start) {
			if (i - start < 3 || i - start > 10 || s[start] != '0' ||
			    s[start + 1] != 'x')
				return -1;
			for (size_t j = start + 2; j < i; j++) {
				if (!hwlocxml_is_hex(s[j]))
					return -1;
				v = v * 16 + (uint32_t)(s[j] <= '9' ? s[j] - '0' :
						      (s[j] | 0x20) - 'a' + 10);
			}
		}
		b->w[k] = v;
		i++; /* the comma */
	}
	return 0;
}

static uint32_t set_word(const struct bset *b, int i)
{
	return i < b->n ? b->w[i] : b->inf ? 0xffffffffu : 0;
}

static int set_within(const struct bset *a, const struct bset *b)
{
	int n = a->n > b->n ? a->n : b->n;
	if (a->inf && !b->inf)
		return 0;
	for (int i = 0; i < n; i++)
		if (set_word(a, i) & ~set_word(b, i))
			return 0;
	return 1;
}

static int set_empty(const struct bset *b)
{
	if (b->inf)
		return 0;
	for (int i = 0; i < b->n; i++)
		if (b->w[i])
			return 0;
	return 1;
}

/* ---- element rules ------------------------------------------------------- */

static enum pplan_status open_object(struct xml_ctx *c, struct frame *f,
				     struct frame *parent,
				     const struct attr *as, int n)
{
	const struct attr *a = hwlocxml_get(as, n, "type");
	const struct objtype *t;
	const struct frame *pobj = parent->elem == E_OBJECT ? parent : NULL;
	int is_root = parent->elem == E_TOPOLOGY;
	unsigned long u;

	if (!a || a != &as[0])
		return hwlocxml_fail(c, "an <object> must start with its type attribute");
	t = f->type = hwlocxml_find_type(a->val, a->vlen);
	if (++c->nobjects > HWLOCXML_MAX_OBJECTS)
		return hwlocxml_fail(c, "more than %d objects", HWLOCXML_MAX_OBJECTS);
	if (is_root) {
		if (c->root_done || parent->nobj_children > 0)
			return hwlocxml_fail(c, "a second root object");
		if (strcmp(t->name, "Machine") != 0)
			return hwlocxml_fail(c, "the root object is a %s, not a Machine", t->name);
	} else if (t->kind == K_NORMAL && (pobj->type->kind != K_NORMAL ||
					   strcmp(pobj->type->name, "PU") == 0)) {
		return hwlocxml_fail(c, "a %s inside a %s", t->name, pobj->type->name);
	} else if (t->kind == K_MEMORY && pobj->type->kind != K_NORMAL &&
		   pobj->type->kind != K_MEMORY) {
		return hwlocxml_fail(c, "a %s inside a %s", t->name, pobj->type->name);
	} else if (t->kind == K_IO && pobj->type->kind != K_NORMAL &&
		   pobj->type->kind != K_IO) {
		return hwlocxml_fail(c, "a %s inside a %s", t->name, pobj->type->name);
	} else if (pobj->type->kind == K_MISC && t->kind != K_MISC) {
		return hwlocxml_fail(c, "a %s inside a Misc object", t->name);
	}
	parent->nobj_children++;

	f->has_sets = t->kind == K_NORMAL || t->kind == K_MEMORY;
	for (int s = 0; s < 4; s++) {
		a = hwlocxml_get(as, n, set_names[s]);
		if (f->has_sets && !a)
			return hwlocxml_fail(c, "the %s object has no %s", t->name, set_names[s]);
		if (!f->has_sets && a)
			return hwlocxml_fail(c, "the %s object has a %s (I/O and Misc objects have none)",
				    t->name, set_names[s]);
		if (a)
			hwlocxml_parse_set(a->val, a->vlen, &f->set[s]);
	}
	if (!is_root && (hwlocxml_get(as, n, "allowed_cpuset") || hwlocxml_get(as, n, "allowed_nodeset")))
		return hwlocxml_fail(c, "allowed sets on an object that is not the root");
	if (f->has_sets) {
		if (!set_within(&f->set[SET_CPU], &f->set[SET_CCPU]) ||
		    !set_within(&f->set[SET_NODE], &f->set[SET_CNODE]))
			return hwlocxml_fail(c, "the %s object's sets are larger than its complete sets", t->name);
		for (int s = 0; pobj && pobj->has_sets && s < 4; s++)
			if (!set_within(&f->set[s], &pobj->set[s]))
				return hwlocxml_fail(c, "the %s object's %s is not within its parent's",
					    t->name, set_names[s]);
		if (is_root && set_empty(&f->set[SET_NODE]))
			return hwlocxml_fail(c, "the root object's nodeset is empty");
	}
	if (t->cache_depth) {
		a = hwlocxml_get(as, n, "depth");
		if (!a || hwlocxml_parse_num(a->val, a->vlen, &u) != 0 ||
		    u != (unsigned long)t->cache_depth)
			return hwlocxml_fail(c, "the %s object needs depth=\"%d\"", t->name, t->cache_depth);
		a = hwlocxml_get(as, n, "cache_type");
		if (a && (hwlocxml_parse_num(a->val, a->vlen, &u) != 0 ||
			  (t->icache ? u != 2 : u > 1)))
			return hwlocxml_fail(c, "the %s object's cache_type does not match it", t->name);
	}
	return PPLAN_OK;
}

enum pplan_status hwlocxml_open(struct xml_ctx *c, struct frame *f,
				      struct frame *parent,
				      const struct attr *as, int n)
{
	const struct attr *a;
	unsigned long u;

	switch (f->elem) {
	case E_TOPOLOGY:
		if (!hwlocxml_get(as, n, "version"))
			return hwlocxml_fail(c, "<topology> has no version");
		return PPLAN_OK;
	case E_OBJECT:
		return open_object(c, f, parent, as, n);
	case E_PAGE_TYPE:
		if (!parent->type || (strcmp(parent->type->name, "NUMANode") != 0 &&
				      strcmp(parent->type->name, "Machine") != 0))
			return hwlocxml_fail(c, "<page_type> outside a NUMANode");
		return PPLAN_OK;
	case E_DIST:
	case E_DISTH:
		a = hwlocxml_get(as, n, "nbobjs");
		if (!a || hwlocxml_parse_num(a->val, a->vlen, &u) != 0 || u < 1 ||
		    u > HWLOCXML_MAX_DIST_OBJS)
			return hwlocxml_fail(c, "<%s> needs nbobjs from 1 to %d", hwlocxml_elem_names[f->elem],
				    HWLOCXML_MAX_DIST_OBJS);
		f->nbobjs = u;
		a = hwlocxml_get(as, n, "kind");
		if (!a || hwlocxml_parse_num(a->val, a->vlen, &u) != 0 || u == 0)
			return hwlocxml_fail(c, "<%s> needs a kind", hwlocxml_elem_names[f->elem]);
		if (f->elem == E_DIST) {
			a = hwlocxml_get(as, n, "indexing");
			if (!hwlocxml_get(as, n, "type") || !a ||
			    !(hwlocxml_eq(a->val, a->vlen, "os") || hwlocxml_eq(a->val, a->vlen, "gp")))
				return hwlocxml_fail(c, "<distances2> needs a type and indexing os or gp");
		}
		return PPLAN_OK;
	case E_INDEXES:
	case E_U64:
	case E_USERDATA:
		a = hwlocxml_get(as, n, "length");
		if (!a || hwlocxml_parse_num(a->val, a->vlen, &f->length) != 0) {
			if (f->elem != E_USERDATA || a)
				return hwlocxml_fail(c, "<%s> needs a length", hwlocxml_elem_names[f->elem]);
			f->length = 0;
		}
		if (f->elem == E_USERDATA && (a = hwlocxml_get(as, n, "encoding")) &&
		    hwlocxml_eq(a->val, a->vlen, "base64"))
			f->length = 4 * ((f->length + 2) / 3);
		return PPLAN_OK;
	case E_INFO:
		if (!hwlocxml_get(as, n, "name") || !hwlocxml_get(as, n, "value"))
			return hwlocxml_fail(c, "<info> needs a name and a value");
		return PPLAN_OK;
	case E_SUPPORT:
		if (!hwlocxml_get(as, n, "name"))
			return hwlocxml_fail(c, "<support> needs a name");
		return PPLAN_OK;
	case E_MEMATTR:
		if (!hwlocxml_get(as, n, "name") || !hwlocxml_get(as, n, "flags"))
			return hwlocxml_fail(c, "<memattr> needs a name and flags");
		return PPLAN_OK;
	case E_MEMATTR_VALUE:
		if (!hwlocxml_get(as, n, "target_obj_type") || !hwlocxml_get(as, n, "target_obj_gp_index") ||
		    !hwlocxml_get(as, n, "value"))
			return hwlocxml_fail(c, "<memattr_value> needs a target and a value");
		return PPLAN_OK;
	case E_CPUKIND:
		if (!hwlocxml_get(as, n, "cpuset"))
			return hwlocxml_fail(c, "<cpukind> needs a cpuset");
		return PPLAN_OK;
	default:
		return PPLAN_OK;
	}
}

/* Counts the space-separated tokens of a distances child, each a decimal
 * number (after "Type:" in a heterogeneous matrix's indexes). */
static long count_tokens(const char *s, size_t n, int typed)
{
	long count = 0;
	size_t i = 0;
	unsigned long u;

	while (i < n) {
		size_t start = i, colon;
		while (i < n && s[i] != ' ')
			i++;
		colon = start;
		if (typed) {
			while (colon < i && s[colon] != ':')
				colon++;
			if (colon == i || !hwlocxml_find_type(s + start, colon - start))
				return -1;
			colon++;
		}
		if (hwlocxml_parse_num(s + colon, i - colon, &u) != 0)
			return -1;
		count++;
		i++; /* one space; hwloc writes a trailing one */
	}
	return count;
}

enum pplan_status hwlocxml_close(struct xml_ctx *c, struct frame *f,
				       struct frame *parent)
{
	long k;

	switch (f->elem) {
	case E_INDEXES:
	case E_U64:
	case E_USERDATA:
		if (f->content_len != f->length)
			return hwlocxml_fail(c, "<%s> says length %lu but holds %zu bytes",
				    hwlocxml_elem_names[f->elem], f->length, f->content_len);
		if (f->elem == E_USERDATA)
			return PPLAN_OK;
		k = count_tokens(f->content, f->content_len,
				 f->elem == E_INDEXES && parent->elem == E_DISTH);
		if (k < 0)
			return hwlocxml_fail(c, "<%s> holds something other than numbers", hwlocxml_elem_names[f->elem]);
		if (f->elem == E_INDEXES)
			parent->nindexes += (unsigned long)k;
		else
			parent->nvalues += (unsigned long)k;
		return PPLAN_OK;
	case E_DIST:
	case E_DISTH:
		if (f->nindexes != f->nbobjs || f->nvalues != f->nbobjs * f->nbobjs)
			return hwlocxml_fail(c, "<%s> of %lu objects has %lu indexes and %lu values (want %lu and %lu)",
				    hwlocxml_elem_names[f->elem], f->nbobjs, f->nindexes, f->nvalues,
				    f->nbobjs, f->nbobjs * f->nbobjs);
		return PPLAN_OK;
	case E_OBJECT:
		if (parent->elem == E_TOPOLOGY)
			c->root_done = 1;
		return PPLAN_OK;
	case E_TOPOLOGY:
		if (!c->root_done)
			return hwlocxml_fail(c, "<topology> has no root object");
		return PPLAN_OK;
	default:
		return PPLAN_OK;
	}
}

