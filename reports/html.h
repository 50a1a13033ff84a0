/*
 * html.h: `pplan report html`: one self-contained page (inline SVG and
 * CSS, no script, no font or image from the network) with one section per
 * input file:
 *
 *  - a pplan.report/1 (pplan exec --report): the headline numbers
 *    predicted beside measured; the pipeline timeline of every stage,
 *    predicted and measured on one time axis (one lane each, ops coloured
 *    by class, idle time hatched so that bubbles show); memory per GPU as
 *    stacked bars, predicted beside measured; the time of each op class;
 *    the error table of `pplan report compare`;
 *  - a pplan.search/1 (pplan search --json): step time against memory per
 *    GPU for every priced layout (feasible by strategy family, out of
 *    memory in grey, the memory cap as a line, the chosen layout
 *    labelled), and the best member of each strategy family as bars.
 *
 * Every input is read and checked before anything is written; the page is
 * written to a temporary name beside `out` and renamed.
 */
#ifndef PPLAN_HTML_H
#define PPLAN_HTML_H

#include "status.h"

/* Writes the page for the n files at paths to out.  `command` is the
 * command line, shown in the page's provenance. */
enum pplan_status html_write(char *const *paths, int n, const char *out,
			     const char *command, struct perr *err);

#endif
