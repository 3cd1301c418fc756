/*
 * Per-message cost through the C ABI: the same policy and messages as
 * capi/examples/per_message.rs (Rust) and python/bench/per_message.py (Python).
 *
 *   python3 bench/workloads.py bench-data
 *   bash capi/bench/run.sh bench-data/pol1c.jsonl bench-data/attrs.jsonl
 *
 * The policy (sns syntax, first line of its file) runs on the first 10,000 lines of the
 * messages file, flat JSON objects: as attributes (strings -> String, numbers -> Number) with
 * the policy in attribute scope, and as the raw body with the policy in MessageBody scope.
 * Prints "name: ns" lines, the median of 5 rounds of at least 0.3 s each; with
 * FILTERVM_ROUTE=NAME only that route runs, one untimed pass (for valgrind --tool=callgrind).
 */
#define _POSIX_C_SOURCE 199309L
#include "filtervm.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define MAX_MESSAGES 10000
#define MAX_FIELDS 16

struct message {
    char *line;
    size_t len;
    fvm_attribute attrs[MAX_FIELDS];
    size_t count;
};

static struct message messages[MAX_MESSAGES];
static size_t message_count = 0;

/* Reads a flat JSON object of string and number members (strings without escapes: what
 * workloads.py writes) into attributes pointing into `text`. Returns the number of members, or
 * -1 for anything else. */
static int parse_flat(const char *text, fvm_attribute *out) {
    const char *p = text;
    int n = 0;
    while (*p == ' ') p++;
    if (*p++ != '{') return -1;
    for (;;) {
        while (*p == ' ' || *p == ',') p++;
        if (*p == '}') return n;
        if (*p++ != '"' || n == MAX_FIELDS) return -1;
        const char *name = p;
        while (*p && *p != '"' && *p != '\\') p++;
        if (*p != '"') return -1;
        size_t name_len = (size_t)(p - name);
        p++;
        while (*p == ' ') p++;
        if (*p++ != ':') return -1;
        while (*p == ' ') p++;
        const char *value;
        size_t value_len;
        const char *type;
        if (*p == '"') {
            value = ++p;
            while (*p && *p != '"' && *p != '\\') p++;
            if (*p != '"') return -1;
            value_len = (size_t)(p - value);
            p++;
            type = "String";
        } else if (*p == '-' || (*p >= '0' && *p <= '9')) {
            value = p;
            while (*p && *p != ',' && *p != '}' && *p != ' ') p++;
            value_len = (size_t)(p - value);
            type = "Number";
        } else {
            return -1;
        }
        fvm_attribute a = {(const uint8_t *)name, name_len, type, (const uint8_t *)value, value_len};
        out[n++] = a;
    }
}

static char *read_file(const char *path, size_t *len) {
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    long size = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *buf = malloc((size_t)size + 1);
    if (!buf || fread(buf, 1, (size_t)size, f) != (size_t)size) {
        fclose(f);
        free(buf);
        return NULL;
    }
    fclose(f);
    buf[size] = 0;
    *len = (size_t)size;
    return buf;
}

static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

typedef long (*round_fn)(void *ctx);

static int compare(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static void report(const char *name, round_fn round, void *ctx) {
    const char *only = getenv("FILTERVM_ROUTE");
    if (only) {
        if (strcmp(only, name) == 0) round(ctx);
        return;
    }
    double per_message[5];
    for (int r = 0; r < 5; r++) {
        double start = now();
        long passes = 0;
        while (now() - start < 0.3) {
            round(ctx);
            passes++;
        }
        per_message[r] = (now() - start) * 1e9 / (double)passes / (double)message_count;
    }
    qsort(per_message, 5, sizeof per_message[0], compare);
    printf("%s: %.1f\n", name, per_message[2]);
}

static long attributes_round(void *ctx) {
    const fvm_filter *f = ctx;
    long matched = 0;
    for (size_t i = 0; i < message_count; i++) {
        fvm_message m = {0};
        m.parts = FVM_PART_ATTRIBUTES;
        m.attributes = messages[i].attrs;
        m.attribute_count = messages[i].count;
        matched += fvm_filter_matches(f, &m, NULL) == FVM_MATCH;
    }
    return matched;
}

static long body_round(void *ctx) {
    const fvm_filter *f = ctx;
    long matched = 0;
    for (size_t i = 0; i < message_count; i++) {
        fvm_message m = {0};
        m.parts = FVM_PART_BODY;
        m.body = (const uint8_t *)messages[i].line;
        m.body_len = messages[i].len;
        matched += fvm_filter_matches(f, &m, NULL) == FVM_MATCH;
    }
    return matched;
}

static long set_round(void *ctx) {
    const fvm_set *s = ctx;
    long matched = 0;
    uint64_t ids[4];
    for (size_t i = 0; i < message_count; i++) {
        fvm_message m = {0};
        m.parts = FVM_PART_ATTRIBUTES;
        m.attributes = messages[i].attrs;
        m.attribute_count = messages[i].count;
        size_t count = 0;
        if (fvm_set_matching(s, &m, ids, 4, &count, NULL) == FVM_OK) matched += (long)count;
    }
    return matched;
}

static fvm_filter *compile(const char *policy, const char *options) {
    fvm_filter *f = NULL;
    fvm_error *e = NULL;
    if (fvm_compile("sns", (const uint8_t *)policy, strlen(policy), (const uint8_t *)options,
                    options ? strlen(options) : 0, &f, &e) != FVM_OK) {
        fprintf(stderr, "compile: %s\n", fvm_error_message(e, 0, NULL));
        fvm_error_free(e);
        exit(2);
    }
    return f;
}

int main(int argc, char **argv) {
    if (argc != 3) {
        fprintf(stderr, "usage: per_message POLICY.jsonl MESSAGES.jsonl\n");
        return 2;
    }
    size_t len;
    char *policy = read_file(argv[1], &len);
    char *text = read_file(argv[2], &len);
    if (!policy || !text) {
        fprintf(stderr, "cannot read the files\n");
        return 2;
    }
    char *nl = strchr(policy, '\n');
    if (nl) *nl = 0;
    for (char *line = text; *line && message_count < MAX_MESSAGES;) {
        char *end = strchr(line, '\n');
        if (end) *end = 0;
        struct message *m = &messages[message_count];
        int n = parse_flat(line, m->attrs);
        if (n >= 0) {
            m->line = line;
            m->len = strlen(line);
            m->count = (size_t)n;
            message_count++;
        }
        if (!end) break;
        line = end + 1;
    }

    fvm_filter *attributes = compile(policy, NULL);
    fvm_filter *body = compile(policy, "{\"scope\": \"MessageBody\"}");
    fvm_set *set = fvm_set_new();
    fvm_set_add(set, 1, attributes, NULL);

    report("c_attributes", attributes_round, attributes);
    report("c_set_attributes", set_round, set);
    report("c_body", body_round, body);
    if (!getenv("FILTERVM_ROUTE")) {
        printf("messages: %zu\n", message_count);
        printf("matches_per_round: %ld\n", attributes_round(attributes));
    }
    fvm_set_free(set);
    fvm_filter_free(attributes);
    fvm_filter_free(body);
    free(policy);
    free(text);
    return 0;
}
