/*
 * test_hwlocxml.c: the check pplan makes before libhwloc reads an XML
 * export (topology/hwlocxml.c).  One minimal export that hwloc 2.9 loads,
 * and variants of it, each breaking one rule hwloc itself does not check
 * (RELIABILITY.md "hwloc" says what hwloc does with each): every variant
 * is refused with one sentence naming the file, the line and the rule.
 * The crash cases were found by fuzzing (tests/fixtures/fuzz-findings,
 * F01 and F06-F08).
 */
#include <criterion/criterion.h>
#include <criterion/parameterized.h>
#include <stdio.h>
#include <string.h>

#include "discover.h"
#include "hwlocxml.h"

#define SETS(c, n) "cpuset=\"" c "\" complete_cpuset=\"" c "\" nodeset=\"" n "\" complete_nodeset=\"" n "\""
#define HEAD "<?xml version=\"1.0\"?>\n<!DOCTYPE topology SYSTEM \"hwloc2.dtd\">\n<topology version=\"2.0\">\n"
#define MACHINE "<object type=\"Machine\" os_index=\"0\" " SETS("0x00000003", "0x1") ">\n"
#define NUMA "<object type=\"NUMANode\" os_index=\"0\" " SETS("0x00000003", "0x1") " local_memory=\"1024\"/>\n"
#define PU(i, c) "<object type=\"PU\" os_index=\"" i "\" " SETS(c, "0x1") "/>\n"
#define TAIL "</object>\n</topology>\n"
#define GOOD HEAD MACHINE NUMA PU("0", "0x00000001") PU("1", "0x00000002") TAIL

static enum pplan_status check(const char *xml, struct perr *e)
{
	e->msg[0] = '\0';
	return hwlocxml_check(xml, strlen(xml), "x.xml", e);
}

Test(hwlocxml, minimal_export_passes_and_hwloc_loads_it)
{
	struct perr e;
	struct host_topo h;
	cr_assert_eq(check(GOOD, &e), PPLAN_OK, "%s", e.msg);
	cr_assert_eq(discover_hwloc_xml(GOOD, strlen(GOOD), "x.xml", &h, &e),
		     PPLAN_OK, "%s", e.msg);
	cr_assert_eq(h.pus, 2);
	cr_assert_eq(h.numa_nodes, 1);
}

struct bad { /* inline arrays: Criterion copies parameters by value */
	char xml[640];
	char needle[64];
};

ParameterizedTestParameters(hwlocxml, refused)
{
	static struct bad cases[] = {
		/* hwloc 2.9 dereferences a NULL complete_cpuset (F06). */
		{HEAD "<object type=\"Machine\" cpuset=\"0x1\" nodeset=\"0x1\" complete_nodeset=\"0x1\">" NUMA TAIL,
		 "the Machine object has no complete_cpuset"},
		/* ... and a NULL complete_nodeset of a NUMA node. */
		{HEAD MACHINE "<object type=\"NUMANode\" cpuset=\"0x3\" complete_cpuset=\"0x3\" nodeset=\"0x1\"/>" TAIL,
		 "the NUMANode object has no complete_nodeset"},
		{HEAD MACHINE NUMA PU("0", "0x00000004") TAIL,
		 "cpuset is not within its parent's"},
		{HEAD MACHINE NUMA "<object type=\"PU\" cpuset=\"0x1\" complete_cpuset=\"0x1\" nodeset=\"0x3\" complete_nodeset=\"0x3\"/>" TAIL,
		 "nodeset is not within its parent's"},
		{HEAD MACHINE NUMA "<object type=\"PCIDev\" cpuset=\"0x1\" pci_busid=\"0000:01:00.0\"/>" TAIL,
		 "I/O and Misc objects have none"},
		{HEAD MACHINE NUMA "<object type=\"PCIDev\" pci_busid=\"0000:01:00.0\"><object type=\"Core\" " SETS("0x1", "0x1") "/></object>" TAIL,
		 "a Core inside a PCIDev"},
		{HEAD MACHINE NUMA "<object type=\"PU\" " SETS("0x1", "0x1") "><object type=\"Core\" " SETS("0x1", "0x1") "/></object>" TAIL,
		 "a Core inside a PU"},
		{HEAD "<object type=\"Package\" " SETS("0x1", "0x1") ">" NUMA TAIL,
		 "the root object is a Package"},
		{HEAD MACHINE NUMA "<object type=\"L2Cache\" " SETS("0x1", "0x1") " depth=\"3\"/>" TAIL,
		 "needs depth=\"2\""},
		/* hwloc allocates nbobjs^2 values from "-1": 32 GiB (F08). */
		{HEAD MACHINE NUMA "</object><distances2 type=\"NUMANode\" nbobjs=\"-1\" kind=\"5\" indexing=\"os\"></distances2></topology>",
		 "nbobjs=\"-1\" is malformed"},
		{HEAD MACHINE NUMA "</object><distances2 type=\"NUMANode\" nbobjs=\"5000\" kind=\"5\" indexing=\"os\"></distances2></topology>",
		 "nbobjs from 1 to 4096"},
		{HEAD MACHINE NUMA "</object><distances2 type=\"NUMANode\" nbobjs=\"2\" kind=\"5\" indexing=\"os\"><indexes length=\"2\">0 </indexes><u64values length=\"12\">10 20 20 10 </u64values></distances2></topology>",
		 "has 1 indexes and 4 values (want 2 and 4)"},
		{HEAD MACHINE NUMA "</object><distances2 type=\"NUMANode\" nbobjs=\"1\" kind=\"5\" indexing=\"os\"><indexes length=\"9\">0 </indexes><u64values length=\"3\">10 </u64values></distances2></topology>",
		 "says length 9 but holds 2 bytes"},
		/* The 3.x downgrade wrote past its buffer on these (F01). */
		{HEAD MACHINE NUMA "<object type=\"OSDev\" osdev_type=\"\"/>" TAIL,
		 "osdev_type=\"\" is malformed"},
		{"<topology version=\"3.\">\n</topology>", "version=\"3.\" is malformed"},
		{HEAD MACHINE NUMA "<object type=\"PU\" tx=\"0\" " SETS("0x1", "0x1") "/>" TAIL,
		 "unknown attribute tx"},
		{HEAD MACHINE NUMA "<object cpuset=\"0x1\" type=\"PU\"/>" TAIL,
		 "must start with its type attribute"},
		{HEAD MACHINE NUMA "<object type=\"Socket\"/>" TAIL,
		 "type=\"Socket\" is malformed"},
		{HEAD MACHINE NUMA "x00\"" TAIL, "text where hwloc writes none"},
		{HEAD MACHINE NUMA "<object type=\"PU\" os_index=\"0\" os_index=\"1\" " SETS("0x1", "0x1") "/>" TAIL,
		 "repeats the attribute os_index"},
		{HEAD MACHINE NUMA "</topology>", "does not close the open <object>"},
		{HEAD MACHINE NUMA, "unclosed <object> at the end"},
		{HEAD MACHINE NUMA "<object type=\"PU\" " SETS("0x1,,0xzz", "0x1") "/>" TAIL,
		 "cpuset=\"0x1,,0xzz\" is malformed"},
		/* hwloc asserts on a set that starts with an empty group
		 * (found by fuzz_hwloc, regressions/hwloc/fuzz01-*). */
		{HEAD MACHINE NUMA "<object type=\"PU\" " SETS(",0x1", "0x1") "/>" TAIL,
		 "cpuset=\",0x1\" is malformed"},
		{HEAD MACHINE NUMA "<object type=\"PU\" " SETS("0x1,", "0x1") "/>" TAIL,
		 "cpuset=\"0x1,\" is malformed"},
		/* libxml2 prints to stderr and leaks on what it cannot read
		 * (found by fuzz_hwloc, regressions/hwloc/fuzz02-*). */
		{"<?xml version=\"1.0\" encoding=\"UTF-6\"?>\n<topology version=\"2.0\">" MACHINE NUMA TAIL,
		 "a malformed declaration or comment"},
		{"\n<?xml version=\"1.0\"?>" "<topology version=\"2.0\">" MACHINE NUMA TAIL,
		 "a malformed declaration or comment"},
		{"<!DOCTYPE topology [<!ENTITY a \"b\">]>\n<topology version=\"2.0\">" MACHINE NUMA TAIL,
		 "a malformed declaration or comment"},
		{HEAD "<!-- a -- b -->" MACHINE NUMA TAIL, "a malformed declaration or comment"},
		{HEAD MACHINE NUMA "<object type=\"PU\"" SETS("0x1", "0x1") "/>" TAIL,
		 "no space before an attribute"},
		{HEAD MACHINE NUMA "<info name=\"a\"value=\"b\"/>" TAIL, "no space before an attribute"},
		{HEAD MACHINE NUMA "<info name=\"a\" value=\"&#0;\"/>" TAIL, "has an '&' that is not"},
		{HEAD MACHINE NUMA "<info name=\"a\" value=\"&foo;\"/>" TAIL, "has an '&' that is not"},
		{HEAD MACHINE NUMA "<frobnicate/>" TAIL, "unknown element <frobnicate>"},
		{HEAD "<object type=\"Machine\" " SETS("0x3", "0x0") ">" TAIL,
		 "root object's nodeset is empty"},
	};
	return cr_make_param_array(struct bad, cases, sizeof cases / sizeof cases[0]);
}

ParameterizedTest(struct bad *b, hwlocxml, refused)
{
	struct perr e;
	cr_assert_eq(check(b->xml, &e), PPLAN_EINPUT, "accepted: %s", b->xml);
	cr_assert(strncmp(e.msg, "x.xml: malformed hwloc XML at line ", 35) == 0,
		  "message '%s'", e.msg);
	cr_assert(strstr(e.msg, b->needle), "message '%s' lacks '%s'", e.msg, b->needle);
	cr_assert(!strchr(e.msg, '\n'), "one line: '%s'", e.msg);
}

/* Deep nesting and long sets are bounded before anything is allocated. */
Test(hwlocxml, bounds)
{
	static char xml[200000];
	struct perr e;
	size_t n = (size_t)snprintf(xml, sizeof xml, HEAD MACHINE NUMA);
	for (int i = 0; i < 70; i++)
		n += (size_t)snprintf(xml + n, sizeof xml - n,
				      "<object type=\"Group\" " SETS("0x3", "0x1") ">");
	cr_assert_eq(check(xml, &e), PPLAN_EINPUT);
	cr_assert(strstr(e.msg, "nested more than 64 deep"), "%s", e.msg);

	n = (size_t)snprintf(xml, sizeof xml, HEAD "<object type=\"Machine\" cpuset=\"0x1");
	for (int i = 0; i < 1100; i++)
		n += (size_t)snprintf(xml + n, sizeof xml - n, ",0x1");
	snprintf(xml + n, sizeof xml - n, "\"/></topology>");
	cr_assert_eq(check(xml, &e), PPLAN_EINPUT);
	cr_assert(strstr(e.msg, "is malformed"), "%s", e.msg);

	memcpy(xml, GOOD, sizeof GOOD);
	xml[60] = '\x01';
	cr_assert_eq(check(xml, &e), PPLAN_EINPUT);
	cr_assert(strstr(e.msg, "at byte 60: not UTF-8 text"), "%s", e.msg);
	xml[60] = '\xc3'; /* a lead byte without its continuation */
	cr_assert_eq(check(xml, &e), PPLAN_EINPUT);
	cr_assert(strstr(e.msg, "at byte 60"), "%s", e.msg);
	memcpy(xml, GOOD, sizeof GOOD);
	xml[40] = '\0';
	cr_assert_eq(hwlocxml_check(xml, sizeof GOOD - 1, "x.xml", &e), PPLAN_EINPUT);
	cr_assert(strstr(e.msg, "NUL byte"), "%s", e.msg);
}
