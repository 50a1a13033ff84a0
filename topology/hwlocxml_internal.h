/*
 * hwlocxml_internal.h: what the two halves of the hwloc XML check share:
 * hwlocxml.c (the scanner, element and attribute syntax) and
 * hwlocxml_rules.c (what each element must say).  Not an API.
 */
#ifndef PPLAN_HWLOCXML_INTERNAL_H
#define PPLAN_HWLOCXML_INTERNAL_H

#include <stdint.h>

#include "hwlocxml.h"

enum kind { K_NORMAL, K_MEMORY, K_IO, K_MISC };

struct objtype {
	const char *name;
	enum kind kind;
	int cache_depth; /* 0: not a cache */
	int icache;
};

enum elem {
	E_DOC, E_TOPOLOGY, E_OBJECT, E_INFO, E_PAGE_TYPE, E_USERDATA, E_DIST,
	E_DISTH, E_INDEXES, E_U64, E_SUPPORT, E_MEMATTR, E_MEMATTR_VALUE,
	E_CPUKIND, E_PCI_LOCALITY, E_COUNT
};
extern const char *const hwlocxml_elem_names[E_COUNT];

enum vkind { V_TEXT, V_NUM, V_SNUM, V_HEX, V_ID, V_SET, V_TYPE, V_BUSID,
	     V_FLOAT, V_BRIDGE_TYPE, V_BRIDGE_PCI, V_PCI_TYPE, V_VERSION };
struct attrspec {
	const char *name;
	enum vkind v;
};

/* A set: w[0] holds bits 0-31; beyond n words, all ones when inf. */
struct bset {
	int inf, n;
	uint32_t w[HWLOCXML_MAX_SET_WORDS];
};

#define MAX_ATTRS 32
struct attr {
	const char *name, *val;
	size_t nlen, vlen;
	const struct attrspec *spec;
};

struct frame {
	enum elem elem;
	const struct objtype *type; /* objects */
	int has_sets;
	struct bset set[4];
	unsigned long nbobjs, nindexes, nvalues; /* distances */
	unsigned long length;                    /* content elements */
	const char *content;
	size_t content_len;
	int nobj_children;
};

struct xml_ctx {
	const char *xml, *p, *end, *name;
	struct perr *e;
	struct frame *stack; /* stack[0] is the document */
	int depth;
	long nobjects;
	int root_done;
};


static inline int hwlocxml_is_hex(char ch)
{
	return (ch >= '0' && ch <= '9') || (ch >= 'a' && ch <= 'f') ||
	       (ch >= 'A' && ch <= 'F');
}

/* One sentence "NAME: malformed hwloc XML at line N: WHAT"; PPLAN_EINPUT. */
enum pplan_status hwlocxml_fail(struct xml_ctx *ctx, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
int hwlocxml_eq(const char *s, size_t n, const char *lit);
const struct attr *hwlocxml_get(const struct attr *as, int n, const char *name);
const struct objtype *hwlocxml_find_type(const char *s, size_t n);
/* Digits only, at most 20; *out saturates.  0 or -1. */
int hwlocxml_parse_num(const char *s, size_t n, unsigned long *out);
/* hwloc's set syntax into *set.  0 or -1. */
int hwlocxml_parse_set(const char *s, size_t n, struct bset *set);

/* The rules: called when element frame opens (with its attributes) and when
 * it closes; parent is the enclosing frame. */
enum pplan_status hwlocxml_open(struct xml_ctx *ctx, struct frame *frame,
				struct frame *parent, const struct attr *as,
				int n);
enum pplan_status hwlocxml_close(struct xml_ctx *ctx, struct frame *frame,
				 struct frame *parent);

#endif
