/*
 * hwlocxml.c: the strict check of hwloc XML exports (hwlocxml.h): the
 * scanner and the syntax of elements and attributes; hwlocxml_rules.c has
 * what each element must say.
 *
 * One pass over the text with a stack of open elements.  What it
 * enforces, and why (hwloc 2.9's topology-xml.c trusts each of these):
 *   - well-formed XML: matched tags, quoted attributes, no duplicate
 *     attribute, no NUL byte, no stray text outside content elements;
 *   - hwloc's elements and attributes only, each where hwloc writes it;
 *   - every normal or memory object carries cpuset, complete_cpuset,
 *     nodeset and complete_nodeset (hwloc dereferences complete_cpuset and
 *     complete_nodeset without checking: NULL reads), I/O and Misc
 *     objects none; sets are nested (child within parent, cpuset within
 *     complete_cpuset) as every export has them;
 *   - object kinds nest as hwloc nests them (no normal object under an
 *     I/O object or a PU, the root is a Machine), caches say their depth;
 *   - distances: nbobjs from 1 to HWLOCXML_MAX_DIST_OBJS (hwloc allocates
 *     nbobjs^2 values from the unchecked number: "-1" asks for 32 GiB),
 *     exactly nbobjs indexes and nbobjs^2 values, content lengths as
 *     stated.
 */
#include "hwlocxml_internal.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

const char *const hwlocxml_elem_names[E_COUNT] = {
	"", "topology", "object", "info", "page_type", "userdata",
	"distances2", "distances2hetero", "indexes", "u64values", "support",
	"memattr", "memattr_value", "cpukind", "pci_locality"};

#define B(x) (1u << (x))
static const unsigned children_of[E_COUNT] = {
	[E_DOC] = B(E_TOPOLOGY),
	[E_TOPOLOGY] = B(E_OBJECT) | B(E_DIST) | B(E_DISTH) | B(E_SUPPORT) |
		       B(E_MEMATTR) | B(E_CPUKIND) | B(E_INFO) |
		       B(E_PCI_LOCALITY),
	[E_OBJECT] = B(E_OBJECT) | B(E_INFO) | B(E_PAGE_TYPE) | B(E_USERDATA),
	[E_DIST] = B(E_INDEXES) | B(E_U64) | B(E_INFO),
	[E_DISTH] = B(E_INDEXES) | B(E_U64) | B(E_INFO),
	[E_MEMATTR] = B(E_MEMATTR_VALUE) | B(E_INFO),
	[E_CPUKIND] = B(E_INFO),
};

static const struct attrspec object_attrs[] = {
	{"type", V_TYPE}, {"os_index", V_NUM}, {"gp_index", V_NUM},
	{"id", V_ID}, {"cpuset", V_SET}, {"complete_cpuset", V_SET},
	{"allowed_cpuset", V_SET}, {"nodeset", V_SET},
	{"complete_nodeset", V_SET}, {"allowed_nodeset", V_SET},
	{"name", V_TEXT}, {"subtype", V_TEXT}, {"cache_size", V_NUM},
	{"cache_linesize", V_NUM}, {"cache_associativity", V_SNUM},
	{"cache_type", V_NUM}, {"local_memory", V_NUM}, {"depth", V_NUM},
	{"kind", V_NUM}, {"subkind", V_NUM}, {"dont_merge", V_NUM},
	{"pci_busid", V_BUSID}, {"pci_type", V_PCI_TYPE},
	{"pci_link_speed", V_FLOAT}, {"bridge_type", V_BRIDGE_TYPE},
	{"bridge_pci", V_BRIDGE_PCI}, {"osdev_type", V_NUM}, {NULL, V_TEXT}};
static const struct attrspec topology_attrs[] = {{"version", V_VERSION},
						 {NULL, V_TEXT}};
static const struct attrspec info_attrs[] = {{"name", V_TEXT},
					     {"value", V_TEXT}, {NULL, V_TEXT}};
static const struct attrspec page_attrs[] = {{"size", V_NUM},
					     {"count", V_NUM}, {NULL, V_TEXT}};
static const struct attrspec userdata_attrs[] = {
	{"name", V_TEXT}, {"length", V_NUM}, {"encoding", V_TEXT},
	{NULL, V_TEXT}};
static const struct attrspec dist_attrs[] = {
	{"type", V_TYPE}, {"nbobjs", V_NUM}, {"kind", V_NUM},
	{"name", V_TEXT}, {"indexing", V_TEXT}, {NULL, V_TEXT}};
static const struct attrspec disth_attrs[] = {
	{"nbobjs", V_NUM}, {"kind", V_NUM}, {"name", V_TEXT}, {NULL, V_TEXT}};
static const struct attrspec length_attrs[] = {{"length", V_NUM},
					       {NULL, V_TEXT}};
static const struct attrspec support_attrs[] = {
	{"name", V_TEXT}, {"value", V_SNUM}, {NULL, V_TEXT}};
static const struct attrspec memattr_attrs[] = {
	{"name", V_TEXT}, {"flags", V_NUM}, {NULL, V_TEXT}};
static const struct attrspec memattr_value_attrs[] = {
	{"target_obj_gp_index", V_NUM}, {"target_obj_type", V_TYPE},
	{"value", V_NUM}, {"initiator_cpuset", V_SET},
	{"initiator_obj_gp_index", V_NUM}, {"initiator_obj_type", V_TYPE},
	{NULL, V_TEXT}};
static const struct attrspec cpukind_attrs[] = {
	{"cpuset", V_SET}, {"forced_efficiency", V_SNUM}, {NULL, V_TEXT}};
static const struct attrspec pci_locality_attrs[] = {
	{"domain", V_HEX}, {"bus_min", V_HEX}, {"bus_max", V_HEX},
	{"cpuset", V_SET}, {NULL, V_TEXT}};
static const struct attrspec *const attrs_of[E_COUNT] = {
	[E_TOPOLOGY] = topology_attrs, [E_OBJECT] = object_attrs,
	[E_INFO] = info_attrs, [E_PAGE_TYPE] = page_attrs,
	[E_USERDATA] = userdata_attrs, [E_DIST] = dist_attrs,
	[E_DISTH] = disth_attrs, [E_INDEXES] = length_attrs,
	[E_U64] = length_attrs, [E_SUPPORT] = support_attrs,
	[E_MEMATTR] = memattr_attrs, [E_MEMATTR_VALUE] = memattr_value_attrs,
	[E_CPUKIND] = cpukind_attrs, [E_PCI_LOCALITY] = pci_locality_attrs};

enum pplan_status hwlocxml_fail(struct xml_ctx *c, const char *fmt, ...)
{
	char what[400];
	int line = 1;
	va_list ap;

	for (const char *q = c->xml; q < c->p && q < c->end; q++)
		line += *q == '\n';
	va_start(ap, fmt);
	vsnprintf(what, sizeof what, fmt, ap);
	va_end(ap);
	return perr_set(c->e, PPLAN_EINPUT,
			"%s: malformed hwloc XML at line %d: %s",
			c->name, line, what);
}

static int is_space(char ch)
{
	return ch == ' ' || ch == '\t' || ch == '\n' || ch == '\r';
}

static int is_name(char ch)
{
	return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
	       (ch >= '0' && ch <= '9') || ch == '_' || ch == '-' || ch == ':';
}

int hwlocxml_eq(const char *s, size_t n, const char *lit)
{
	return strlen(lit) == n && memcmp(s, lit, n) == 0;
}

/* Checks one attribute value against its syntax. */
static int value_ok(const struct attr *a)
{
	const char *s = a->val;
	size_t n = a->vlen;
	unsigned long u;
	struct bset tmp;
	char buf[64];
	unsigned x[7];

	switch (a->spec->v) {
	case V_TEXT:
		return 1;
	case V_NUM:
		return hwlocxml_parse_num(s, n, &u) == 0;
	case V_SNUM:
		return n > 0 && (s[0] == '-' ? hwlocxml_parse_num(s + 1, n - 1, &u) : hwlocxml_parse_num(s, n, &u)) == 0;
	case V_HEX:
		if (n < 3 || n > 18 || s[0] != '0' || s[1] != 'x')
			return 0;
		for (size_t i = 2; i < n; i++)
			if (!hwlocxml_is_hex(s[i]))
				return 0;
		return 1;
	case V_ID:
		return n > 3 && memcmp(s, "obj", 3) == 0 && hwlocxml_parse_num(s + 3, n - 3, &u) == 0;
	case V_SET:
		return hwlocxml_parse_set(s, n, &tmp) == 0;
	case V_TYPE:
		return hwlocxml_find_type(s, n) != NULL;
	case V_VERSION:
		return n >= 3 && (s[0] == '2' || s[0] == '3') && s[1] == '.' &&
		       hwlocxml_parse_num(s + 2, n - 2, &u) == 0;
	default:
		break;
	}
	/* The sscanf formats hwloc reads these with; the text must be
	 * exactly what the format consumes. */
	if (n >= sizeof buf)
		return 0;
	memcpy(buf, s, n);
	buf[n] = '\0';
	for (size_t i = 0; i < n; i++)
		if (!(hwlocxml_is_hex(buf[i]) || strchr(":.-[] ", buf[i])))
			return 0;
	switch (a->spec->v) {
	case V_BUSID:
		return n == 12 && sscanf(buf, "%4x:%2x:%2x.%1x", &x[0], &x[1], &x[2], &x[3]) == 4 &&
		       buf[4] == ':' && buf[7] == ':' && buf[10] == '.';
	case V_PCI_TYPE:
		return sscanf(buf, "%x [%4x:%4x] [%4x:%4x] %2x", &x[0], &x[1], &x[2],
			      &x[3], &x[4], &x[5]) == 6;
	case V_FLOAT:
		return strspn(buf, "0123456789.") == n && strchr(buf, '.') == strrchr(buf, '.');
	case V_BRIDGE_TYPE:
		return n == 3 && buf[0] >= '0' && buf[0] <= '1' && buf[1] == '-' &&
		       buf[2] >= '0' && buf[2] <= '1';
	case V_BRIDGE_PCI:
		return sscanf(buf, "%4x:[%2x-%2x]", &x[0], &x[1], &x[2]) == 3 &&
		       buf[n - 1] == ']';
	default:
		return 0;
	}
}

const struct attr *hwlocxml_get(const struct attr *as, int n, const char *name)
{
	for (int i = 0; i < n; i++)
		if (hwlocxml_eq(as[i].name, as[i].nlen, name))
			return &as[i];
	return NULL;
}

/* ---- the scanner ---------------------------------------------------------- */

static const char *skip_to(struct xml_ctx *c, const char *lit)
{
	const char *q = strstr(c->p, lit);
	return q && q < c->end ? q + strlen(lit) : NULL;
}

/* Well-formed UTF-8 without control characters other than tab, newline
 * and carriage return: libxml2 rejects anything else, printing to stderr
 * and leaking what it had parsed (found by fuzz_hwloc).  The offset of
 * the first bad byte, or -1. */
static long bad_text(const unsigned char *s, size_t n)
{
	for (size_t i = 0; i < n;) {
		unsigned ch = s[i], need, cp, min;
		if (ch < 0x80) {
			if (ch < 0x20 && ch != '\t' && ch != '\n' && ch != '\r')
				return (long)i;
			i++;
			continue;
		}
		if (ch >= 0xc2 && ch <= 0xdf)
			need = 1, cp = ch & 0x1f, min = 0x80;
		else if (ch >= 0xe0 && ch <= 0xef)
			need = 2, cp = ch & 0x0f, min = 0x800;
		else if (ch >= 0xf0 && ch <= 0xf4)
			need = 3, cp = ch & 0x07, min = 0x10000;
		else
			return (long)i;
		for (unsigned k = 1; k <= need; k++) {
			if (i + k >= n || (s[i + k] & 0xc0) != 0x80)
				return (long)i;
			cp = cp << 6 | (s[i + k] & 0x3f);
		}
		if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff) ||
		    cp == 0xfffe || cp == 0xffff)
			return (long)i;
		i += need + 1;
	}
	return -1;
}

/* The prolog hwloc writes: <?xml version="1.0" encoding="UTF-8"?> at
 * the very start, then <!DOCTYPE topology SYSTEM "hwlocN.dtd">; no
 * internal subset (no entities), no other declaration. */
static const char *prolog(struct xml_ctx *c)
{
	const char *p = c->p, *q;
	if (strncmp(p, "<?xml ", 6) == 0) {
		if (p != c->xml || !(q = skip_to(c, "?>")))
			return NULL;
		p += 6;
		if (strncmp(p, "version=\"1.0\"", 13) != 0)
			return NULL;
		p += 13;
		if (strncmp(p, " encoding=\"", 11) == 0) {
			p += 11;
			if (strncasecmp(p, "UTF-8\"", 6) != 0)
				return NULL;
			p += 6;
		}
		if (strncmp(p, " standalone=\"yes\"", 17) == 0)
			p += 17;
		else if (strncmp(p, " standalone=\"no\"", 16) == 0)
			p += 16;
		while (is_space(*p))
			p++;
		return p == q - 2 ? q : NULL;
	}
	if (strncmp(p, "<!DOCTYPE topology SYSTEM \"hwloc", 32) == 0) {
		p += 32;
		while (*p >= '0' && *p <= '9')
			p++;
		return strncmp(p, ".dtd\">", 6) == 0 ? p + 6 : NULL;
	}
	return NULL;
}

/* A comment: the first "--" after "<!--" must be its "-->" (XML allows
 * no "--" inside, so no '-' before the end either). */
static const char *comment(struct xml_ctx *c)
{
	const char *q = strstr(c->p + 4, "--");
	return q && q < c->end && q[2] == '>' ? q + 3 : NULL;
}

/* Attribute values: the five entities XML predefines, no other '&'. */
static int entities_ok(const char *s, size_t n)
{
	static const char *const ents[] = {"&lt;", "&gt;", "&amp;", "&quot;", "&apos;"};
	for (size_t i = 0; i < n; i++) {
		int ok = 0;
		if (s[i] != '&')
			continue;
		for (int k = 0; k < 5 && !ok; k++)
			ok = n - i >= strlen(ents[k]) && memcmp(s + i, ents[k], strlen(ents[k])) == 0;
		if (!ok)
			return 0;
	}
	return 1;
}

/* Reads the attributes up to '>' or "/>"; *empty for the latter. */
static enum pplan_status read_attrs(struct xml_ctx *c, enum elem el,
				    struct attr *as, int *n, int *empty)
{
	const char *p = c->p;
	*n = 0;
	for (;;) {
		const char *name, *before = p;
		char q;
		struct attr *a;
		while (p < c->end && is_space(*p))
			p++;
		c->p = p;
		if (p < c->end && *p == '>') {
			c->p = p + 1;
			*empty = 0;
			return PPLAN_OK;
		}
		if (p + 1 < c->end && p[0] == '/' && p[1] == '>') {
			c->p = p + 2;
			*empty = 1;
			return PPLAN_OK;
		}
		if (p == before) /* XML needs a space before each attribute */
			return hwlocxml_fail(c, "no space before an attribute of <%s>", hwlocxml_elem_names[el]);
		name = p;
		while (p < c->end && is_name(*p))
			p++;
		if (p == name || p >= c->end || *p != '=' || p + 1 >= c->end ||
		    (p[1] != '"' && p[1] != '\''))
			return hwlocxml_fail(c, "malformed attribute in <%s>", hwlocxml_elem_names[el]);
		if (*n == MAX_ATTRS)
			return hwlocxml_fail(c, "more than %d attributes in <%s>", MAX_ATTRS, hwlocxml_elem_names[el]);
		a = &as[*n];
		a->name = name;
		a->nlen = (size_t)(p - name);
		q = p[1];
		a->val = p + 2;
		p = a->val;
		while (p < c->end && *p != q && *p != '<')
			p++;
		if (p >= c->end || *p != q)
			return hwlocxml_fail(c, "unterminated attribute value in <%s>", hwlocxml_elem_names[el]);
		a->vlen = (size_t)(p - a->val);
		p++;
		a->spec = NULL;
		for (const struct attrspec *s = attrs_of[el]; s && s->name; s++)
			if (hwlocxml_eq(a->name, a->nlen, s->name))
				a->spec = s;
		if (!a->spec)
			return hwlocxml_fail(c, "<%s> has an unknown attribute %.*s", hwlocxml_elem_names[el],
				    (int)(a->nlen > 40 ? 40 : a->nlen), a->name);
		for (int i = 0; i < *n; i++)
			if (as[i].spec == a->spec)
				return hwlocxml_fail(c, "<%s> repeats the attribute %s", hwlocxml_elem_names[el],
					    a->spec->name);
		if (!entities_ok(a->val, a->vlen))
			return hwlocxml_fail(c, "<%s> %s has an '&' that is not &lt; &gt; &amp; &quot; or &apos;",
					     hwlocxml_elem_names[el], a->spec->name);
		if (!value_ok(a))
			return hwlocxml_fail(c, "<%s> %s=\"%.*s\" is malformed", hwlocxml_elem_names[el], a->spec->name,
				    (int)(a->vlen > 40 ? 40 : a->vlen), a->val);
		(*n)++;
	}
}

static enum pplan_status scan_tag(struct xml_ctx *c)
{
	struct attr as[MAX_ATTRS];
	struct frame *parent = &c->stack[c->depth], *f;
	const char *name;
	int el, n = 0, empty = 0, closing = c->p[1] == '/';
	enum pplan_status st;

	c->p += closing ? 2 : 1;
	name = c->p;
	while (c->p < c->end && is_name(*c->p))
		c->p++;
	for (el = 1; el < E_COUNT; el++)
		if (hwlocxml_eq(name, (size_t)(c->p - name), hwlocxml_elem_names[el]))
			break;
	if (el == E_COUNT)
		return hwlocxml_fail(c, "unknown element <%.*s>", (int)(c->p - name > 40 ? 40 : c->p - name),
			    name);
	if (closing) {
		while (c->p < c->end && is_space(*c->p))
			c->p++;
		if (c->p >= c->end || *c->p != '>' || parent->elem != (enum elem)el)
			return hwlocxml_fail(c, "</%s> does not close the open <%s>", hwlocxml_elem_names[el],
				    hwlocxml_elem_names[parent->elem]);
		c->p++;
		st = hwlocxml_close(c, parent, &c->stack[c->depth - 1]);
		c->depth--;
		return st;
	}
	if (!(children_of[parent->elem] & B(el)))
		return hwlocxml_fail(c, "<%s> inside <%s>", hwlocxml_elem_names[el],
			    parent->elem == E_DOC ? "the document" : hwlocxml_elem_names[parent->elem]);
	if (parent->elem == E_TOPOLOGY && el != E_OBJECT && !c->root_done)
		return hwlocxml_fail(c, "<%s> before the root object", hwlocxml_elem_names[el]);
	if (c->depth + 1 >= HWLOCXML_MAX_DEPTH)
		return hwlocxml_fail(c, "elements nested more than %d deep", HWLOCXML_MAX_DEPTH);
	if ((st = read_attrs(c, (enum elem)el, as, &n, &empty)) != PPLAN_OK)
		return st;
	f = &c->stack[++c->depth];
	memset(f, 0, sizeof *f);
	f->elem = (enum elem)el;
	if ((st = hwlocxml_open(c, f, parent, as, n)) != PPLAN_OK)
		return st;
	if (empty) {
		st = hwlocxml_close(c, f, parent);
		c->depth--;
	}
	return st;
}

enum pplan_status hwlocxml_check(const char *xml, size_t len,
				 const char *name, struct perr *e)
{
	struct xml_ctx c = {xml, xml, xml + len, name, e, NULL, 0, 0, 0};
	enum pplan_status st = PPLAN_OK;
	long bad;

	if (memchr(xml, '\0', len))
		return perr_set(e, PPLAN_EINPUT, "%s: a NUL byte in an XML file", name);
	if ((bad = bad_text((const unsigned char *)xml, len)) >= 0)
		return perr_set(e, PPLAN_EINPUT,
				"%s: malformed hwloc XML at byte %ld: not UTF-8 text (or a control character)",
				name, bad);
	c.stack = calloc(HWLOCXML_MAX_DEPTH, sizeof *c.stack);
	if (!c.stack)
		return perr_set(e, PPLAN_ENOMEM, "%s: out of memory checking it", name);
	while (st == PPLAN_OK && c.p < c.end) {
		struct frame *top = &c.stack[c.depth];
		const char *q;
		if (*c.p != '<') {
			const char *start = c.p;
			while (c.p < c.end && *c.p != '<')
				c.p++;
			if (top->elem == E_INDEXES || top->elem == E_U64 ||
			    top->elem == E_USERDATA) {
				if (memchr(start, '&', (size_t)(c.p - start)))
					st = hwlocxml_fail(&c, "an '&' in <%s>", hwlocxml_elem_names[top->elem]);
				else if (top->content)
					st = hwlocxml_fail(&c, "content of <%s> in pieces", hwlocxml_elem_names[top->elem]);
				top->content = start;
				top->content_len = (size_t)(c.p - start);
				continue;
			}
			for (q = start; q < c.p; q++)
				if (!is_space(*q)) {
					c.p = q;
					st = hwlocxml_fail(&c, "text where hwloc writes none");
					break;
				}
			continue;
		}
		if (strncmp(c.p, "<!--", 4) == 0)
			q = comment(&c);
		else if (strncmp(c.p, "<?", 2) == 0 || strncmp(c.p, "<!", 2) == 0)
			q = c.depth == 0 && !c.root_done ? prolog(&c) : NULL;
		else {
			st = scan_tag(&c);
			continue;
		}
		if (!q) {
			st = hwlocxml_fail(&c, "a malformed declaration or comment");
			break;
		}
		c.p = q;
	}
	if (st == PPLAN_OK && (c.depth != 0 || !c.root_done))
		st = hwlocxml_fail(&c, c.depth ? "unclosed <%s> at the end (truncated?)" : "no <topology>%s",
			  c.depth ? hwlocxml_elem_names[c.stack[c.depth].elem] : "");
	free(c.stack);
	return st;
}

