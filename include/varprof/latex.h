/* Writing a page table (page_table.h) as a LaTeX tabular with booktabs'
 * rules (\toprule, \midrule, \bottomrule; \usepackage{booktabs}), for a
 * chapter: the caption as a comment line, to go in the \caption the author
 * writes; numbers in math mode with VP_PAGE_SIGNIFICANT significant figures
 * and a power of ten written $1.234\times10^{-5}$; LaTeX's special
 * characters in text escaped (\ { } $ & # ^ _ % ~). Needs no package but
 * booktabs. */
#ifndef VARPROF_LATEX_H
#define VARPROF_LATEX_H

#include <stdio.h>

#include "varprof/page_table.h"

/* VP_EIO on a stream error. */
vp_status vp_latex_write_table(FILE *out, const vp_page_table *table);

#endif
