/* shm_options.h -- the command-line options of the benchmark programs.
 *
 * A program declares its options once, as a table; one getopt_long-based
 * parser reads them and checks every value (type, overflow, trailing
 * garbage, range), and --help is printed from the same table:
 *
 *     struct config cfg = {.n = 2048, .iters = 50};      // the defaults
 *     const struct shm_option opts[] = {
 *         {"size", "n", SHM_OPT_SIZE, &cfg.n, "N", "grid side", SHM_AT_LEAST(3)},
 *         {"variant", "v", SHM_OPT_CHOICE, &cfg.lock, "V", "update", .choices = "reduce|lock"},
 *         SHM_OPTIONS_END};
 *
 * This file is the parser only: it never exits and knows nothing of the
 * SHM backends. shm.h's shm_parse_options() adds the options every program
 * shares (-p, --threads-per-rank) and ends the program collectively on
 * --help or a usage error. Include it after _GNU_SOURCE is defined (shm.h
 * does). */
#ifndef BENCH_SHM_OPTIONS_H
#define BENCH_SHM_OPTIONS_H

#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum shm_opt_type {
    SHM_OPT_INT,    /* int */
    SHM_OPT_LONG,   /* long */
    SHM_OPT_SIZE,   /* size_t; a minus sign is an error */
    SHM_OPT_U64,    /* uint64_t; a minus sign is an error */
    SHM_OPT_DOUBLE, /* double, finite */
    SHM_OPT_STRING, /* const char *, pointing into argv */
    SHM_OPT_FLAG,   /* int set to 1; takes no value */
    SHM_OPT_CHOICE, /* int: index of the value in .choices */
};

struct shm_option {
    const char *name;    /* long name: --name VALUE or --name=VALUE */
    const char *letters; /* short spellings (-x VALUE): the first is the one
                          * --help shows first, the others are aliases kept
                          * for old command lines; NULL or "": none */
    enum shm_opt_type type;
    void *value;     /* holds the default on entry, the value on return */
    const char *arg; /* value placeholder in --help, e.g. "N" */
    const char *doc;
    const char *choices;      /* SHM_OPT_CHOICE: the names, separated by '|' */
    const char *default_text; /* --help's default when the value's own is
                               * misleading (e.g. 0 meaning "chosen later");
                               * "": show none */
    int bounded;              /* numbers: value must lie in [min, max] */
    double min, max;
};

#define SHM_RANGE(lo, hi) .bounded = 1, .min = (lo), .max = (hi)
#define SHM_AT_LEAST(lo) .bounded = 1, .min = (lo), .max = HUGE_VAL
#define SHM_ANY_VALUE .bounded = 0
#define SHM_OPTIONS_END                                                                                                \
    {                                                                                                                  \
        .name = NULL                                                                                                   \
    }

/* shm_options_parse results */
#define SHM_OPTIONS_OK 0
#define SHM_OPTIONS_HELP 1  /* -h / --help was given */
#define SHM_OPTIONS_ERROR 2 /* usage error; the message is in err */

/* Options of all tables together (programs have at most 8 today). */
#define SHM_OPTIONS_MAX 32

/* Parsed values are kept here until the whole command line is known to be
 * good, so that --help shows the defaults and a usage error changes
 * nothing. */
union shm__opt_value {
    long long i;
    unsigned long long u;
    double d;
    const char *s;
};

__attribute__((format(printf, 3, 4))) static inline void shm__opt_error(char *err, size_t errlen, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
}

/* "-n/--size" (every spelling of the option), for messages and --help. */
static inline void shm__opt_spelling(const struct shm_option *o, char *buf, size_t len)
{
    size_t k = 0;
    buf[0] = '\0';
    for (const char *l = o->letters ? o->letters : ""; *l && k + 4 < len; l++)
        k += (size_t)snprintf(buf + k, len - k, "-%c/", *l);
    snprintf(buf + k, len - k, "--%s", o->name);
}

/* Base 10, or 16 after "0x" (so that "010" is ten, as atol read it). */
static inline int shm__opt_base(const char *text)
{
    const char *p = text;
    while (*p == ' ' || *p == '\t')
        p++;
    if (*p == '+' || *p == '-') p++;
    return p[0] == '0' && (p[1] == 'x' || p[1] == 'X') ? 16 : 10;
}

/* Converts `text` for option `o` into *v (no range check). Returns 0, or -1
 * with the reason in err. */
static inline int shm__opt_convert(const struct shm_option *o, const char *text, union shm__opt_value *v, char *err,
                                   size_t errlen)
{
    char *end = NULL;
    errno = 0;
    switch (o->type) {
    case SHM_OPT_INT:
    case SHM_OPT_LONG:
        v->i = strtoll(text, &end, shm__opt_base(text));
        if (end == text || *end) {
            shm__opt_error(err, errlen, "'%s' is not an integer", text);
            return -1;
        }
        /* the round trip through the option's type catches what does not fit */
        if (errno == ERANGE || (o->type == SHM_OPT_INT && (long long)(int)v->i != v->i) ||
            (o->type == SHM_OPT_LONG && (long long)(long)v->i != v->i)) {
            shm__opt_error(err, errlen, "'%s' does not fit in %s", text, o->type == SHM_OPT_INT ? "an int" : "a long");
            return -1;
        }
        return 0;
    case SHM_OPT_SIZE:
    case SHM_OPT_U64:
        if (strchr(text, '-')) {
            shm__opt_error(err, errlen, "'%s' is negative or not an integer", text);
            return -1;
        }
        v->u = strtoull(text, &end, shm__opt_base(text));
        if (end == text || *end) {
            shm__opt_error(err, errlen, "'%s' is not an integer", text);
            return -1;
        }
        if (errno == ERANGE || (o->type == SHM_OPT_SIZE && (unsigned long long)(size_t)v->u != v->u) ||
            (o->type == SHM_OPT_U64 && (unsigned long long)(uint64_t)v->u != v->u)) {
            shm__opt_error(err, errlen, "'%s' is too large", text);
            return -1;
        }
        return 0;
    case SHM_OPT_DOUBLE:
        v->d = strtod(text, &end);
        if (end == text || *end) {
            shm__opt_error(err, errlen, "'%s' is not a number", text);
            return -1;
        }
        if (!isfinite(v->d)) {
            shm__opt_error(err, errlen, "'%s' is not a finite number", text);
            return -1;
        }
        return 0;
    case SHM_OPT_STRING:
        v->s = text;
        return 0;
    case SHM_OPT_FLAG:
        v->i = 1;
        return 0;
    case SHM_OPT_CHOICE: {
        const char *c = o->choices ? o->choices : "";
        size_t len = strlen(text);
        for (long long k = 0;; k++) {
            const char *bar = strchr(c, '|');
            size_t n = bar ? (size_t)(bar - c) : strlen(c);
            if (n == len && strncmp(c, text, len) == 0) {
                v->i = k;
                return 0;
            }
            if (!bar) break;
            c = bar + 1;
        }
        shm__opt_error(err, errlen, "'%s' is not one of %s", text, o->choices ? o->choices : "(none)");
        return -1;
    }
    }
    shm__opt_error(err, errlen, "unknown option type %d", (int)o->type);
    return -1;
}

/* The number a converted value stands for, for the range check. */
static inline double shm__opt_number(const struct shm_option *o, const union shm__opt_value *v)
{
    switch (o->type) {
    case SHM_OPT_INT:
    case SHM_OPT_LONG:
        return (double)v->i;
    case SHM_OPT_SIZE:
    case SHM_OPT_U64:
        return (double)v->u;
    case SHM_OPT_DOUBLE:
        return v->d;
    default:
        return 0.0;
    }
}

static inline void shm__opt_format_range(const struct shm_option *o, char *buf, size_t len)
{
    if (o->max == HUGE_VAL)
        snprintf(buf, len, ">= %.15g", o->min);
    else
        snprintf(buf, len, "%.15g..%.15g", o->min, o->max);
}

/* Converts and range-checks; 0 or -1 with the reason in err. */
static inline int shm__opt_check(const struct shm_option *o, const char *text, union shm__opt_value *v, char *err,
                                 size_t errlen)
{
    if (shm__opt_convert(o, text, v, err, errlen) != 0) return -1;
    if (o->bounded && o->type != SHM_OPT_STRING && o->type != SHM_OPT_FLAG && o->type != SHM_OPT_CHOICE) {
        double x = shm__opt_number(o, v);
        if (!(x >= o->min && x <= o->max)) {
            char range[64];
            shm__opt_format_range(o, range, sizeof range);
            shm__opt_error(err, errlen, "%s is out of range (allowed: %s)", text, range);
            return -1;
        }
    }
    return 0;
}

static inline void shm__opt_store(const struct shm_option *o, const union shm__opt_value *v)
{
    switch (o->type) {
    case SHM_OPT_INT:
    case SHM_OPT_FLAG:
    case SHM_OPT_CHOICE:
        *(int *)o->value = (int)v->i;
        break;
    case SHM_OPT_LONG:
        *(long *)o->value = (long)v->i;
        break;
    case SHM_OPT_SIZE:
        *(size_t *)o->value = (size_t)v->u;
        break;
    case SHM_OPT_U64:
        *(uint64_t *)o->value = (uint64_t)v->u;
        break;
    case SHM_OPT_DOUBLE:
        *(double *)o->value = v->d;
        break;
    case SHM_OPT_STRING:
        *(const char **)o->value = v->s;
        break;
    }
}

/* The options of the NULL-terminated list of tables, in order, into
 * all[] (at most SHM_OPTIONS_MAX). A spelling used twice is a programming
 * error, reported like a usage error. Returns the count or -1. */
static inline int shm__opt_collect(const struct shm_option *const tables[], const struct shm_option **all, char *err,
                                   size_t errlen)
{
    int n = 0;
    for (int t = 0; tables[t]; t++)
        for (const struct shm_option *o = tables[t]; o->name; o++) {
            if (n == SHM_OPTIONS_MAX) {
                shm__opt_error(err, errlen, "more than %d options in the tables", SHM_OPTIONS_MAX);
                return -1;
            }
            if (!o->value && o->type != SHM_OPT_FLAG) {
                shm__opt_error(err, errlen, "option --%s has no variable", o->name);
                return -1;
            }
            if (strcmp(o->name, "help") == 0 || (o->letters && strchr(o->letters, 'h'))) {
                shm__opt_error(err, errlen, "option --%s: --help and -h are reserved", o->name);
                return -1;
            }
            for (int k = 0; k < n; k++) {
                int same = strcmp(all[k]->name, o->name) == 0;
                for (const char *l = o->letters ? o->letters : ""; *l; l++)
                    same |= all[k]->letters && strchr(all[k]->letters, *l) != NULL;
                if (same) {
                    shm__opt_error(err, errlen, "options --%s and --%s share a spelling", all[k]->name, o->name);
                    return -1;
                }
            }
            all[n++] = o;
        }
    return n;
}

/* Parses argv[1..argc) against the tables (NULL-terminated list of tables,
 * each ended by SHM_OPTIONS_END). Every value is stored only if the whole
 * command line is good. Returns SHM_OPTIONS_OK, SHM_OPTIONS_HELP, or
 * SHM_OPTIONS_ERROR with a message naming the option in err. Options stop
 * at the first non-option argument (which is an error: the programs take
 * none) or after "--". */
static inline int shm_options_parse(int argc, char **argv, const struct shm_option *const tables[], char *err,
                                    size_t errlen)
{
    const struct shm_option *all[SHM_OPTIONS_MAX];
    int n = shm__opt_collect(tables, all, err, errlen);
    if (n < 0) return SHM_OPTIONS_ERROR;

    /* "+": stop at the first non-option (argv is left in order);
     * ":": report a missing value as ':' rather than '?' */
    char shortopts[3 + 3 * 4 * SHM_OPTIONS_MAX + 2] = "+:h";
    struct option longopts[SHM_OPTIONS_MAX + 2];
    size_t sk = strlen(shortopts);
    for (int k = 0; k < n; k++) {
        int has_arg = all[k]->type == SHM_OPT_FLAG ? no_argument : required_argument;
        longopts[k] = (struct option){all[k]->name, has_arg, NULL, 256 + k};
        for (const char *l = all[k]->letters ? all[k]->letters : ""; *l && sk + 3 < sizeof shortopts; l++) {
            shortopts[sk++] = *l;
            if (has_arg) shortopts[sk++] = ':';
        }
    }
    shortopts[sk] = '\0';
    longopts[n] = (struct option){"help", no_argument, NULL, 'h'};
    longopts[n + 1] = (struct option){NULL, 0, NULL, 0};

    struct {
        int k;
        union shm__opt_value v;
    } pending[256];
    int npending = 0;
    char why[256], spelling[64];

    /* optind = 0: glibc re-initialises its state (the parser may run twice) */
    optind = 0;
    opterr = 0;
    for (;;) {
        int c = getopt_long(argc, argv, shortopts, longopts, NULL);
        if (c == -1) break;
        if (c == 'h') return SHM_OPTIONS_HELP;
        if (c == '?' || c == ':') {
            int k = optopt >= 256 ? optopt - 256 : -1;
            for (int j = 0; k < 0 && optopt > 0 && j < n; j++)
                if (all[j]->letters && strchr(all[j]->letters, optopt)) k = j;
            const char *arg = argv[optind - 1 < argc ? optind - 1 : argc - 1];
            if (k >= 0) {
                shm__opt_spelling(all[k], spelling, sizeof spelling);
                shm__opt_error(err, errlen, c == ':' ? "option %s needs a value" : "option %s takes no value",
                               spelling);
            } else if (optopt == 'h')
                shm__opt_error(err, errlen, "option --help takes no value");
            else if (optopt > 0 && optopt < 256)
                shm__opt_error(err, errlen, "unknown option '-%c'", optopt);
            else
                shm__opt_error(err, errlen, "unknown or ambiguous option '%s'", arg);
            return SHM_OPTIONS_ERROR;
        }
        int k = c >= 256 ? c - 256 : -1;
        for (int j = 0; k < 0 && j < n; j++)
            if (all[j]->letters && strchr(all[j]->letters, c)) k = j;
        if (k < 0) { /* cannot happen: getopt returns only what we gave it */
            shm__opt_error(err, errlen, "internal error: getopt returned %d", c);
            return SHM_OPTIONS_ERROR;
        }
        if (npending == (int)(sizeof pending / sizeof pending[0])) {
            shm__opt_error(err, errlen, "more than %d options on the command line", npending);
            return SHM_OPTIONS_ERROR;
        }
        if (shm__opt_check(all[k], optarg ? optarg : "", &pending[npending].v, why, sizeof why) != 0) {
            shm__opt_spelling(all[k], spelling, sizeof spelling);
            shm__opt_error(err, errlen, "bad value for %s: %s", spelling, why);
            return SHM_OPTIONS_ERROR;
        }
        pending[npending++].k = k;
    }
    if (optind < argc) {
        shm__opt_error(err, errlen, "unexpected argument '%s' (the program takes options only)", argv[optind]);
        return SHM_OPTIONS_ERROR;
    }
    /* in command-line order, so the last of a repeated option wins */
    for (int i = 0; i < npending; i++)
        if (all[pending[i].k]->value) shm__opt_store(all[pending[i].k], &pending[i].v);
    return SHM_OPTIONS_OK;
}

/* An integer from environment variable `var` in [lo, hi]: returns 0 if it is
 * unset or empty, 1 with *out set, -1 with a message naming the variable in
 * err. */
static inline int shm_options_env_int(const char *var, int lo, int hi, int *out, char *err, size_t errlen)
{
    const char *text = getenv(var);
    if (!text || !*text) return 0;
    struct shm_option o = {var, NULL, SHM_OPT_INT, out, NULL, NULL, SHM_RANGE(lo, hi)};
    union shm__opt_value v;
    char why[256];
    if (shm__opt_check(&o, text, &v, why, sizeof why) != 0) {
        shm__opt_error(err, errlen, "bad value for environment variable %s: %s", var, why);
        return -1;
    }
    *out = (int)v.i;
    return 1;
}

/* The current value of o, as --help shows it as the default. */
static inline void shm__opt_format_value(const struct shm_option *o, char *buf, size_t len)
{
    buf[0] = '\0';
    switch (o->type) {
    case SHM_OPT_INT:
        snprintf(buf, len, "%d", *(const int *)o->value);
        break;
    case SHM_OPT_LONG:
        snprintf(buf, len, "%ld", *(const long *)o->value);
        break;
    case SHM_OPT_SIZE:
        snprintf(buf, len, "%zu", *(const size_t *)o->value);
        break;
    case SHM_OPT_U64:
        snprintf(buf, len, "%llu", (unsigned long long)*(const uint64_t *)o->value);
        break;
    case SHM_OPT_DOUBLE:
        snprintf(buf, len, "%g", *(const double *)o->value);
        break;
    case SHM_OPT_STRING: {
        const char *s = *(const char *const *)o->value;
        snprintf(buf, len, "%s", s ? s : "");
        break;
    }
    case SHM_OPT_FLAG:
        break; /* a flag is off unless given */
    case SHM_OPT_CHOICE: {
        int idx = *(const int *)o->value;
        const char *c = o->choices ? o->choices : "";
        for (int k = 0; k < idx && c; k++) {
            c = strchr(c, '|');
            c = c ? c + 1 : NULL;
        }
        if (c) {
            const char *bar = strchr(c, '|');
            snprintf(buf, len, "%.*s", (int)(bar ? (size_t)(bar - c) : strlen(c)), c);
        }
        break;
    }
    }
}

/* --help: usage line, `about`, then one line per option with its range and
 * default (values as they are before parsing), and -h/--help. */
static inline void shm_options_help(FILE *f, const char *prog, const char *about,
                                    const struct shm_option *const tables[])
{
    const char *base = strrchr(prog, '/');
    base = base ? base + 1 : prog;
    fprintf(f, "usage: %s [OPTION]...\n", base);
    if (about && *about) fprintf(f, "%s\n", about);
    fprintf(f, "\noptions:\n");
    for (int t = 0; tables[t]; t++)
        for (const struct shm_option *o = tables[t]; o->name; o++) {
            char left[96], extra[160], value[64], range[64];
            size_t k = 0;
            const char *l = o->letters ? o->letters : "";
            k += (size_t)snprintf(left + k, sizeof left - k, "  ");
            if (!*l) k += (size_t)snprintf(left + k, sizeof left - k, "    ");
            for (; *l; l++)
                k += (size_t)snprintf(left + k, sizeof left - k, "-%c, ", *l);
            const char *arg = o->type == SHM_OPT_CHOICE ? o->choices : o->arg ? o->arg : "VALUE";
            snprintf(left + k, sizeof left - k, "--%s%s%s", o->name, o->type == SHM_OPT_FLAG ? "" : " ",
                     o->type == SHM_OPT_FLAG ? "" : arg);
            extra[0] = '\0';
            if (o->bounded) {
                shm__opt_format_range(o, range, sizeof range);
                snprintf(extra, sizeof extra, "%s", range);
            }
            if (o->default_text)
                snprintf(value, sizeof value, "%s", o->default_text);
            else
                shm__opt_format_value(o, value, sizeof value);
            if (*value) {
                size_t e = strlen(extra);
                snprintf(extra + e, sizeof extra - e, "%sdefault: %s", e ? "; " : "", value);
            }
            if (strlen(left) > 30)
                fprintf(f, "%s\n%32s", left, "");
            else
                fprintf(f, "%-32s", left);
            fprintf(f, "%s%s%s%s\n", o->doc ? o->doc : "", *extra ? " (" : "", extra, *extra ? ")" : "");
        }
    fprintf(f, "%-32s%s\n", "  -h, --help", "print this help and exit");
}

#endif /* BENCH_SHM_OPTIONS_H */
