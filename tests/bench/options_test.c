/* Unit test of the benchmark programs' option parser
 * (bench/programs/shm_options.h): every value type, every kind of bad
 * value, and that a usage error or --help changes no variable. */
#define _GNU_SOURCE
#include "shm_options.h"

static int failures;

#define CHECK(cond)                                                                                                    \
    do {                                                                                                               \
        if (!(cond)) {                                                                                                 \
            fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond);                                   \
            failures++;                                                                                                \
        }                                                                                                              \
    } while (0)

struct vars {
    int i, flag, choice;
    long l;
    size_t z;
    uint64_t u;
    double d;
    const char *s;
};
static struct vars v;
static const struct vars defaults = {.i = 7, .l = 8, .z = 9, .u = 10, .d = 0.5, .s = "x", .choice = 1};

static const struct shm_option table[] = {
    {"int", "ia", SHM_OPT_INT, &v.i, "I", "an int", SHM_RANGE(-5, 100)},
    {"long", "l", SHM_OPT_LONG, &v.l, "L", "a long", SHM_ANY_VALUE},
    {"size", "z", SHM_OPT_SIZE, &v.z, "Z", "a size", SHM_AT_LEAST(1)},
    {"u64", NULL, SHM_OPT_U64, &v.u, "U", "a u64", SHM_ANY_VALUE},
    {"double", "d", SHM_OPT_DOUBLE, &v.d, "D", "a double", SHM_RANGE(0, 1)},
    {"string", "s", SHM_OPT_STRING, &v.s, "S", "a string", SHM_ANY_VALUE},
    {"flag", "f", SHM_OPT_FLAG, &v.flag, NULL, "a flag", SHM_ANY_VALUE},
    {"variant", "v", SHM_OPT_CHOICE, &v.choice, NULL, "a choice", .choices = "reduce|lock|none"},
    SHM_OPTIONS_END};
static const struct shm_option *const tables[] = {table, NULL};
static char err[512];

/* Parses the NULL-terminated arguments after a program name, from the defaults. */
static int parse(const char *first, ...)
{
    char *argv[32] = {"prog"};
    int argc = 1;
    va_list ap;
    va_start(ap, first);
    for (const char *a = first; a; a = va_arg(ap, const char *))
        argv[argc++] = (char *)a;
    va_end(ap);
    argv[argc] = NULL;
    v = defaults;
    err[0] = '\0';
    return shm_options_parse(argc, argv, tables, err, sizeof err);
}

static int unchanged(void) { return memcmp(&v, &defaults, sizeof v) == 0; }

/* A usage error whose message contains `want`, with no variable changed. */
#define CHECK_ERROR(want, ...)                                                                                         \
    do {                                                                                                               \
        int r_ = parse(__VA_ARGS__, NULL);                                                                             \
        CHECK(r_ == SHM_OPTIONS_ERROR);                                                                                \
        if (!strstr(err, want)) {                                                                                      \
            fprintf(stderr, "%s:%d: message '%s' lacks '%s'\n", __FILE__, __LINE__, err, want);                        \
            failures++;                                                                                                \
        }                                                                                                              \
        CHECK(unchanged());                                                                                            \
    } while (0)

int main(void)
{
    /* nothing given: the defaults stay */
    CHECK(parse(NULL) == SHM_OPTIONS_OK && unchanged());

    /* every type, short, long and --name=value spellings, an alias letter */
    CHECK(parse("-i", "42", "--long", "-9000000000", "--size=0x10", "--u64", "18446744073709551615", "-d", "0.25", "-s",
                "hello", "-f", "--variant", "none", NULL) == SHM_OPTIONS_OK);
    CHECK(v.i == 42 && v.l == -9000000000L && v.z == 16 && v.u == UINT64_MAX && v.d == 0.25 &&
          strcmp(v.s, "hello") == 0 && v.flag == 1 && v.choice == 2);
    CHECK(parse("-a", "-5", "--int=100", NULL) == SHM_OPTIONS_OK && v.i == 100); /* last one wins */
    CHECK(parse("-a", "010", NULL) == SHM_OPTIONS_OK && v.i == 10);              /* decimal, not octal */
    CHECK(parse("-vreduce", NULL) == SHM_OPTIONS_OK && v.choice == 0);
    CHECK(parse("--", NULL) == SHM_OPTIONS_OK && unchanged());

    /* malformed values name the option */
    CHECK_ERROR("bad value for -i/-a/--int: '12abc' is not an integer", "-i", "12abc");
    CHECK_ERROR("'' is not an integer", "--int=");
    CHECK_ERROR("does not fit in an int", "-i", "2147483648");
    CHECK_ERROR("does not fit in a long", "--long", "9223372036854775808");
    CHECK_ERROR("--size: '-1' is negative", "--size", "-1");
    CHECK_ERROR("--u64: '18446744073709551616' is too large", "--u64", "18446744073709551616");
    CHECK_ERROR("'0.5x' is not a number", "-d", "0.5x");
    CHECK_ERROR("'nan' is not a finite number", "-d", "nan");
    CHECK_ERROR("'1e999' is not a finite number", "-d", "1e999");
    CHECK_ERROR("'lok' is not one of reduce|lock|none", "-v", "lok");
    /* ranges */
    CHECK_ERROR("--int: 101 is out of range (allowed: -5..100)", "-i", "101");
    CHECK_ERROR("--int: -6 is out of range (allowed: -5..100)", "-i", "-6");
    CHECK_ERROR("--size: 0 is out of range (allowed: >= 1)", "-z", "0");
    CHECK_ERROR("--double: 1.5 is out of range (allowed: 0..1)", "--double", "1.5");
    /* the command line's shape; an error after good options keeps them unchanged */
    CHECK_ERROR("option -l/--long needs a value", "-i", "3", "-l");
    CHECK_ERROR("option --u64 needs a value", "--u64");
    CHECK_ERROR("option -f/--flag takes no value", "--flag=1");
    CHECK_ERROR("unknown option '-x'", "-x", "1");
    CHECK_ERROR("unknown or ambiguous option '--nope'", "--nope");
    CHECK_ERROR("unexpected argument 'extra'", "-i", "3", "extra");

    /* --help: reported, nothing stored */
    CHECK(parse("-i", "3", "--help", NULL) == SHM_OPTIONS_HELP && unchanged());
    CHECK(parse("-h", NULL) == SHM_OPTIONS_HELP && unchanged());
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    v = defaults;
    shm_options_help(f, "/some/dir/prog", "What it does.", tables);
    fclose(f);
    CHECK(strstr(text, "usage: prog [OPTION]...\nWhat it does.\n") != NULL);
    CHECK(strstr(text, "-i, -a, --int I") && strstr(text, "an int (-5..100; default: 7)"));
    CHECK(strstr(text, "--u64 U") && strstr(text, "a u64 (default: 10)"));
    CHECK(strstr(text, "-v, --variant reduce|lock|none") && strstr(text, "(default: lock)"));
    CHECK(strstr(text, "-f, --flag ") && strstr(text, "a flag\n"));
    CHECK(strstr(text, "-h, --help"));
    free(text);

    /* two tables may not share a spelling */
    static int other;
    static const struct shm_option clash[] = {{"other", "d", SHM_OPT_INT, &other, "O", "", SHM_ANY_VALUE},
                                              SHM_OPTIONS_END};
    const struct shm_option *const both[] = {table, clash, NULL};
    char *argv[] = {"prog", NULL};
    CHECK(shm_options_parse(1, argv, both, err, sizeof err) == SHM_OPTIONS_ERROR &&
          strstr(err, "--double and --other share a spelling"));

    /* integers from the environment */
    int n = 0;
    unsetenv("SHM_OPTIONS_TEST");
    CHECK(shm_options_env_int("SHM_OPTIONS_TEST", 1, 8, &n, err, sizeof err) == 0 && n == 0);
    setenv("SHM_OPTIONS_TEST", "", 1);
    CHECK(shm_options_env_int("SHM_OPTIONS_TEST", 1, 8, &n, err, sizeof err) == 0 && n == 0);
    setenv("SHM_OPTIONS_TEST", "4", 1);
    CHECK(shm_options_env_int("SHM_OPTIONS_TEST", 1, 8, &n, err, sizeof err) == 1 && n == 4);
    setenv("SHM_OPTIONS_TEST", "9", 1);
    CHECK(shm_options_env_int("SHM_OPTIONS_TEST", 1, 8, &n, err, sizeof err) == -1 && n == 4 &&
          strstr(err, "environment variable SHM_OPTIONS_TEST: 9 is out of range (allowed: 1..8)"));
    setenv("SHM_OPTIONS_TEST", "2x", 1);
    CHECK(shm_options_env_int("SHM_OPTIONS_TEST", 1, 8, &n, err, sizeof err) == -1 &&
          strstr(err, "'2x' is not an integer"));

    if (failures) {
        fprintf(stderr, "%d check(s) failed\n", failures);
        return 1;
    }
    printf("PASS\n");
    return 0;
}
