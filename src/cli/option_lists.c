/* Options that take a comma list: --engine, and the swept --gain, --layers
 * and --width. Each item is read by the single-value reader, so that a bad
 * item gets the same message as a bad single value, naming the item. */
#include <string.h>

#include "option_lists.h"

int cli_list_items(const cli_args *args, option_id id, list_buffer *buf, size_t max)
{
    buf->n = 0;
    if (!args->given[id])
        return EXIT_OK;
    const char *list = args->value[id];
    const size_t length = strlen(list);
    if (length >= sizeof buf->text)
        return cli_usage_error("%s: the list '%.40s...' is too long", cli_option_name(id), list);
    memcpy(buf->text, list, length + 1);
    char *start = buf->text;
    for (;;) {
        char *comma = strchr(start, ',');
        if (comma)
            *comma = '\0';
        if (!*start)
            return cli_usage_error("%s: '%s' has an empty item; a list is values separated by "
                                   "commas, without spaces, e.g. %s",
                                   cli_option_name(id), list,
                                   id == OPT_ENGINE ? "closed,mc" : "1,2,4");
        if (buf->n == max)
            return cli_usage_error("%s: '%s' has more than %zu items", cli_option_name(id), list,
                                   max);
        buf->items[buf->n++] = start;
        if (!comma)
            return EXIT_OK;
        start = comma + 1;
    }
}

/* The item read as if it were the option's whole value. */
static cli_args one_item(const cli_args *args, option_id id, const char *item)
{
    cli_args one = *args;
    one.value[id] = item;
    return one;
}

static int refuse_twice(option_id id, const cli_args *args, const char *item)
{
    return cli_usage_error("%s: '%s' gives %s twice; give each value once", cli_option_name(id),
                           args->value[id], item);
}

int cli_double_list(const cli_args *args, option_id id, double min, int min_exclusive, double *out,
                    size_t max, size_t *n)
{
    list_buffer buf;
    int rc = cli_list_items(args, id, &buf, max);
    for (size_t i = 0; rc == EXIT_OK && i < buf.n; i++) {
        const cli_args one = one_item(args, id, buf.items[i]);
        if ((rc = cli_double(&one, id, min, min_exclusive, &out[i])) != EXIT_OK)
            break;
        for (size_t j = 0; j < i; j++)
            if (out[j] == out[i]) /* 1 and 1.0 too: one value, one stack */
                return refuse_twice(id, args, buf.items[i]);
    }
    *n = rc == EXIT_OK ? buf.n : 0;
    return rc;
}

int cli_size_list(const cli_args *args, option_id id, size_t min, size_t max_value, size_t *out,
                  size_t max, size_t *n)
{
    list_buffer buf;
    int rc = cli_list_items(args, id, &buf, max);
    for (size_t i = 0; rc == EXIT_OK && i < buf.n; i++) {
        const cli_args one = one_item(args, id, buf.items[i]);
        if ((rc = cli_size(&one, id, min, max_value, &out[i])) != EXIT_OK)
            break;
        for (size_t j = 0; j < i; j++)
            if (out[j] == out[i])
                return refuse_twice(id, args, buf.items[i]);
    }
    *n = rc == EXIT_OK ? buf.n : 0;
    return rc;
}
