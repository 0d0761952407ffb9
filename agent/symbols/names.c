#include "names.h"

#include <stdlib.h>
#include <string.h>

static const char *primitive_name(char c)
{
    switch (c) {
    case 'Z':
        return "boolean";
    case 'C':
        return "char";
    case 'F':
        return "float";
    case 'D':
        return "double";
    case 'B':
        return "byte";
    case 'S':
        return "short";
    case 'I':
        return "int";
    case 'J':
        return "long";
    case 'V':
        return "void";
    default:
        return NULL;
    }
}

char *names_java_class_name(const char *sig)
{
    size_t dims = 0;
    while (sig[dims] == '[')
        dims++;
    const char *elem = sig + dims;
    size_t elem_len;
    const char *prim = NULL;
    if (*elem == 'L') {
        elem++;
        elem_len = strlen(elem);
        if (elem_len > 0 && elem[elem_len - 1] == ';')
            elem_len--;
    } else if (elem[0] && !elem[1] && (prim = primitive_name(elem[0]))) {
        elem = prim;
        elem_len = strlen(prim);
    } else {
        elem_len = strlen(elem); /* an internal name, or something odd: keep it readable */
    }
    char *out = malloc(elem_len + 2 * dims + 1);
    if (!out)
        return NULL;
    for (size_t i = 0; i < elem_len; i++)
        out[i] = elem[i] == '/' ? '.' : elem[i];
    for (size_t i = 0; i < dims; i++)
        memcpy(out + elem_len + 2 * i, "[]", 2);
    out[elem_len + 2 * dims] = '\0';
    return out;
}

uint8_t names_array_type(const char *sig)
{
    if (sig[0] != '[')
        return 0;
    switch (sig[1]) {
    case 'Z':
        return 4;
    case 'C':
        return 5;
    case 'F':
        return 6;
    case 'D':
        return 7;
    case 'B':
        return 8;
    case 'S':
        return 9;
    case 'I':
        return 10;
    case 'J':
        return 11;
    default:
        return 2;
    }
}
