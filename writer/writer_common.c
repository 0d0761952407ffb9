/* Parts shared by every writer: basic type tables, the clock, dates. */
#include "writer.h"
#include "writer_internal.h"

#include <signal.h>
#include <stdio.h>
#include <time.h>

int writer_thread_create(pthread_t *t, void *(*fn)(void *), void *arg)
{
    sigset_t all, old;
    sigfillset(&all);
    sigdelset(&all, SIGSEGV);
    sigdelset(&all, SIGBUS);
    sigdelset(&all, SIGFPE);
    sigdelset(&all, SIGILL);
    pthread_sigmask(SIG_BLOCK, &all, &old);
    int rc = pthread_create(t, NULL, fn, arg);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    return rc;
}

unsigned hprof_type_size(enum hprof_basic_type t)
{
    switch (t) {
    case HPROF_TYPE_OBJECT:
        return 8;
    case HPROF_TYPE_BOOLEAN:
    case HPROF_TYPE_BYTE:
        return 1;
    case HPROF_TYPE_CHAR:
    case HPROF_TYPE_SHORT:
        return 2;
    case HPROF_TYPE_FLOAT:
    case HPROF_TYPE_INT:
        return 4;
    case HPROF_TYPE_DOUBLE:
    case HPROF_TYPE_LONG:
        return 8;
    }
    return 0;
}

const char *hprof_type_name(enum hprof_basic_type t)
{
    switch (t) {
    case HPROF_TYPE_OBJECT:
        return NULL;
    case HPROF_TYPE_BOOLEAN:
        return "boolean";
    case HPROF_TYPE_CHAR:
        return "char";
    case HPROF_TYPE_FLOAT:
        return "float";
    case HPROF_TYPE_DOUBLE:
        return "double";
    case HPROF_TYPE_BYTE:
        return "byte";
    case HPROF_TYPE_SHORT:
        return "short";
    case HPROF_TYPE_INT:
        return "int";
    case HPROF_TYPE_LONG:
        return "long";
    }
    return NULL;
}

uint64_t writer_wall_clock_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

char *writer_format_date(uint64_t epoch_us, char *buf)
{
    static const char days[7][4] = {"Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"};
    static const char months[12][4] = {"Jan", "Feb", "Mar", "Apr", "May", "Jun",
                                       "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};
    time_t t = (time_t)(epoch_us / 1000000u);
    struct tm tm;
    if (!localtime_r(&t, &tm) || tm.tm_wday < 0 || tm.tm_wday > 6 || tm.tm_mon < 0 ||
        tm.tm_mon > 11) {
        snprintf(buf, WRITER_DATE_LEN, "%s", "???");
        return buf;
    }
    snprintf(buf, WRITER_DATE_LEN, "%s %s %2d %02d:%02d:%02d %d", days[tm.tm_wday],
             months[tm.tm_mon], tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, tm.tm_year + 1900);
    return buf;
}
