/* Name tables: an enum's names looked up both ways, and listed for messages. */
#include "core/name_table.h"

#include <stdio.h>
#include <string.h>

static const char *entry(const char *const *first, size_t stride, size_t i)
{
    return *(const char *const *)((const char *)first + i * stride);
}

const char *name_table_name(name_table t, int value)
{
    return value >= 0 && (size_t)value < t.count ? entry(t.name, t.stride, (size_t)value) : NULL;
}

int name_table_find(name_table t, const char *name)
{
    if (!name)
        return -1;
    for (size_t i = 0; i < t.count; i++) {
        const char *n = entry(t.name, t.stride, i);
        if (n && strcmp(n, name) == 0)
            return (int)i;
    }
    return -1;
}

void name_table_list(name_table t, char *buf, size_t size)
{
    if (size == 0)
        return;
    buf[0] = '\0';
    size_t used = 0;
    for (size_t i = 0; i < t.count && used + 1 < size; i++) {
        const char *gloss = t.gloss ? entry(t.gloss, t.stride, i) : NULL;
        const int n = snprintf(buf + used, size - used, "%s%s%s%s%s", i ? ", " : "",
                               entry(t.name, t.stride, i), gloss ? " (" : "", gloss ? gloss : "",
                               gloss ? ")" : "");
        if (n < 0)
            break;
        used += (size_t)n < size - used ? (size_t)n : size - used - 1;
    }
}

vp_status name_table_parse(name_table t, const char *what, const char *name, int *out,
                           vp_error *err)
{
    const int value = name_table_find(t, name);
    if (value >= 0) {
        *out = value;
        return VP_OK;
    }
    char list[512];
    name_table_list(t, list, sizeof list);
    return vp_fail(err, VP_EINVAL, "%s '%s' is not one of: %s", what, name ? name : "(null)", list);
}

vp_status name_table_check(name_table t, const char *what, int value, vp_error *err)
{
    if (value >= 0 && (size_t)value < t.count)
        return VP_OK;
    char list[512];
    name_table_list(t, list, sizeof list);
    return vp_fail(err, VP_EINVAL, "%s %d is not one of: %s", what, value, list);
}
