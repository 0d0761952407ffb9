/* The values of wall=y's options that are lists of names (options.h). Pure C. */
#include <string.h>

#include "options.h"

static const char *const wall_state_names[HPROF_WALL_NSTATES] = {
    "running", "runnable", "blocked", "waiting", "parked", "sleeping", "native",
};

const char *options_wall_state_name(unsigned state)
{
    return state < HPROF_WALL_NSTATES ? wall_state_names[state] : NULL;
}

/* Names joined by '+', because ',' separates options. */
bool options_parse_wall_states(const char *v, unsigned *mask)
{
    unsigned m = 0;
    for (const char *p = v;;) {
        size_t len = strcspn(p, "+");
        unsigned s = 0;
        while (s < HPROF_WALL_NSTATES &&
               !(strlen(wall_state_names[s]) == len && strncmp(p, wall_state_names[s], len) == 0))
            s++;
        if (s == HPROF_WALL_NSTATES)
            return false;
        m |= 1u << s;
        if (p[len] == '\0')
            break;
        p += len + 1;
    }
    *mask = m;
    return true;
}
