/* Characters that look like the ASCII hyphen-minus but are not, as a
 * command copied from a PDF or a word processor carries them: the en dash
 * (U+2013), the em dash (U+2014), the minus sign (U+2212), the non-breaking
 * hyphen (U+2011) and the hyphen (U+2010). */
#ifndef VARPROF_CLI_DASH_LOOKALIKE_H
#define VARPROF_CLI_DASH_LOOKALIKE_H

typedef struct {
    const char *utf8;      /* its bytes in UTF-8 */
    const char *name;      /* "an en dash" */
    const char *codepoint; /* "U+2013" */
} dash_lookalike;

/* The first look-alike in text, or NULL when there is none. */
const dash_lookalike *find_dash_lookalike(const char *text);

/* Prints the usage error for an argument (or an option's value, where
 * option is not NULL) that holds one: which character, where, and that '-'
 * is to be typed instead, with the argument as it should read. Returns
 * EXIT_USAGE. */
int refuse_dash_lookalike(const char *option, const char *text, const dash_lookalike *dash);

#endif
