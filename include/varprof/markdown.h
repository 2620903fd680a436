/* Writing a page table (page_table.h) as a Markdown table, for a web page
 * or a README: the caption as a paragraph, a header row, numbers
 * right-aligned with VP_PAGE_SIGNIFICANT significant figures. A '|' in a
 * cell is escaped, so that it cannot split the row. */
#ifndef VARPROF_MARKDOWN_H
#define VARPROF_MARKDOWN_H

#include <stdio.h>

#include "varprof/page_table.h"

/* VP_EIO on a stream error. */
vp_status vp_markdown_write_table(FILE *out, const vp_page_table *table);

#endif
