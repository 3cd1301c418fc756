/*
 * The C ABI's test: every function of include/filtervm.h, its error paths, and matching from
 * several threads at once while another thread adds and removes subscriptions.
 *
 * Built and run by capi/tests/run_c_tests.sh (under valgrind, and with sanitizers when the
 * compiler has them). Prints one line per failed check and a closing "N passed, M failed".
 */
#include "filtervm.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int passed = 0;
static int failed = 0;

#define CHECK(cond)                                                                   \
    do {                                                                              \
        if (cond) {                                                                   \
            passed++;                                                                 \
        } else {                                                                      \
            failed++;                                                                 \
            fprintf(stderr, "FAIL %s:%d: %s\n", __FILE__, __LINE__, #cond);          \
        }                                                                             \
    } while (0)

#define BYTES(s) (const uint8_t *)(s), strlen(s)

static fvm_filter *compile(const char *dialect, const char *policy, const char *options) {
    fvm_filter *f = NULL;
    fvm_error *e = NULL;
    int32_t st = fvm_compile(dialect, (const uint8_t *)policy, strlen(policy),
                             (const uint8_t *)options, options ? strlen(options) : 0, &f, &e);
    if (st != FVM_OK) {
        fprintf(stderr, "compile %s %s: %s\n", dialect, policy,
                e ? fvm_error_message(e, 0, NULL) : "?");
        fvm_error_free(e);
        return NULL;
    }
    CHECK(e == NULL);
    return f;
}

static fvm_attribute attr(const char *name, const char *type, const char *value) {
    fvm_attribute a = {(const uint8_t *)name, strlen(name), type, (const uint8_t *)value,
                       strlen(value)};
    return a;
}

static fvm_header header(const char *name, const char *value) {
    fvm_header h = {(const uint8_t *)name, strlen(name), (const uint8_t *)value, strlen(value)};
    return h;
}

static int str_eq(const char *got, const char *want) { return got && strcmp(got, want) == 0; }

static void test_version(void) {
    const char *v = fvm_version();
    CHECK(v != NULL && strlen(v) > 0 && strchr(v, '.') != NULL);
}

static void test_compile_errors(void) {
    fvm_filter *f = (fvm_filter *)0x1;
    fvm_error *e = NULL;

    /* Every error of the policy, each with code, pointer and message. */
    const char *bad = "{\"a\": [{\"prefix\": 1}], \"b\": [{\"nope\": 2}]}";
    CHECK(fvm_compile("sns", BYTES(bad), NULL, 0, &f, &e) == FVM_ERR_POLICY);
    CHECK(f == NULL);
    CHECK(fvm_error_status(e) == FVM_ERR_POLICY);
    CHECK(fvm_error_count(e) >= 1);
    CHECK(str_eq(fvm_error_code(e, 0), "SNS_TYPE_ERROR"));
    size_t len = 99;
    const char *ptr = fvm_error_pointer(e, 0, &len);
    CHECK(str_eq(ptr, "/a/0/prefix") && len == strlen("/a/0/prefix"));
    const char *msg = fvm_error_message(e, 0, &len);
    CHECK(msg != NULL && len == strlen(msg) && len > 0);
    /* Out of range: NULL and a length of 0. */
    size_t n = fvm_error_count(e);
    CHECK(fvm_error_code(e, n) == NULL);
    CHECK(fvm_error_pointer(e, n, &len) == NULL && len == 0);
    CHECK(fvm_error_message(e, n, NULL) == NULL);
    fvm_error_free(e);

    /* Bad options: INVALID_OPTIONS with the option's pointer. */
    const char *opts = "{\"scope\": \"Body\"}";
    CHECK(fvm_compile("sns", BYTES("{}"), BYTES(opts), &f, &e) == FVM_ERR_POLICY);
    CHECK(str_eq(fvm_error_code(e, 0), "INVALID_OPTIONS"));
    CHECK(str_eq(fvm_error_pointer(e, 0, NULL), "/scope"));
    fvm_error_free(e);

    /* Not UTF-8. */
    const uint8_t latin1[] = {'{', '"', 'a', '"', ':', '[', '"', 0xe9, '"', ']', '}'};
    CHECK(fvm_compile("basaltic", latin1, sizeof latin1, NULL, 0, &f, &e) == FVM_ERR_POLICY);
    CHECK(str_eq(fvm_error_code(e, 0), "NOTIFICATION_INVALID_FILTER_POLICY"));
    fvm_error_free(e);

    /* Arguments: unknown dialect, NULL dialect, NULL out, NULL policy with a length. */
    CHECK(fvm_compile("kafka", BYTES("{}"), NULL, 0, &f, &e) == FVM_ERR_ARGUMENT);
    CHECK(str_eq(fvm_error_code(e, 0), "INVALID_ARGUMENT"));
    fvm_error_free(e);
    CHECK(fvm_compile(NULL, BYTES("{}"), NULL, 0, &f, &e) == FVM_ERR_ARGUMENT);
    fvm_error_free(e);
    CHECK(fvm_compile("sns", BYTES("{}"), NULL, 0, NULL, &e) == FVM_ERR_ARGUMENT);
    fvm_error_free(e);
    CHECK(fvm_compile("sns", NULL, 5, NULL, 0, &f, &e) == FVM_ERR_ARGUMENT);
    fvm_error_free(e);
    /* A NULL error pointer is allowed: the status alone. */
    CHECK(fvm_compile("sns", BYTES("[]"), NULL, 0, &f, NULL) == FVM_ERR_POLICY);

    /* The accessors take NULL. */
    CHECK(fvm_error_status(NULL) == 0 && fvm_error_count(NULL) == 0);
    CHECK(fvm_error_code(NULL, 0) == NULL && fvm_error_message(NULL, 0, NULL) == NULL);
    fvm_error_free(NULL);
    fvm_filter_free(NULL);
    CHECK(fvm_filter_dialect(NULL) == NULL);
}

static void test_filter_parts(void) {
    fvm_error *e = NULL;
    fvm_filter *sns = compile("sns", "{\"event\": [\"order.paid\"], \"n\": [{\"numeric\": [\">\", 5]}]}", NULL);
    CHECK(sns != NULL);
    CHECK(str_eq(fvm_filter_dialect(sns), "sns"));

    fvm_attribute attrs[] = {attr("event", "String", "order.paid"), attr("n", "Number", "7")};
    fvm_message m = {0};
    m.parts = FVM_PART_ATTRIBUTES;
    m.attributes = attrs;
    m.attribute_count = 2;
    CHECK(fvm_filter_matches(sns, &m, &e) == FVM_MATCH && e == NULL);
    attrs[1] = attr("n", "Number", "5");
    CHECK(fvm_filter_matches(sns, &m, &e) == FVM_NO_MATCH && e == NULL);

    /* The same message as one JSON document. */
    const char *doc = "{\"attributes\": {\"event\": {\"Type\": \"String\", \"Value\": \"order.paid\"},"
                      " \"n\": {\"Type\": \"Number\", \"Value\": \"6\"}}}";
    CHECK(fvm_filter_matches_json(sns, BYTES(doc), &e) == FVM_MATCH);
    CHECK(fvm_filter_matches_json(sns, BYTES("{\"attributes\": {}}"), &e) == FVM_NO_MATCH);
    CHECK(fvm_filter_matches_json(sns, BYTES("{oops"), &e) == FVM_ERR_MESSAGE);
    CHECK(str_eq(fvm_error_code(e, 0), "MESSAGE_NOT_JSON"));
    fvm_error_free(e);
    CHECK(fvm_filter_matches_json(NULL, BYTES("{}"), &e) == FVM_ERR_ARGUMENT);
    fvm_error_free(e);

    /* An unknown attribute type: INVALID_MESSAGE. A Number value that is not UTF-8 is read where
     * it lies: not a number, so absent (no match), never a copy or an error. */
    attrs[1] = attr("n", "Numbr", "5");
    CHECK(fvm_filter_matches(sns, &m, &e) == FVM_ERR_MESSAGE);
    CHECK(str_eq(fvm_error_code(e, 0), "INVALID_MESSAGE"));
    CHECK(str_eq(fvm_error_pointer(e, 0, NULL), "/attributes/n/Type"));
    fvm_error_free(e);
    attrs[1] = attr("n", "Number", "\xff");
    CHECK(fvm_filter_matches(sns, &m, &e) == FVM_NO_MATCH && e == NULL);
    attrs[1].data_type = NULL;
    CHECK(fvm_filter_matches(sns, &m, &e) == FVM_ERR_ARGUMENT);
    fvm_error_free(e);

    /* A message without attributes has the empty attribute set (sns rule 12): judged. */
    fvm_header hs[] = {header("event", "order.paid")};
    fvm_message only_headers = {0};
    only_headers.parts = FVM_PART_HEADERS;
    only_headers.headers = hs;
    only_headers.header_count = 1;
    CHECK(fvm_filter_matches(sns, &only_headers, &e) == FVM_NO_MATCH && e == NULL);
    fvm_filter *all = compile("sns", "{}", NULL);
    CHECK(fvm_filter_matches(all, &only_headers, &e) == FVM_MATCH && e == NULL);
    fvm_filter_free(all);

    /* A document and parts together: an argument error. */
    fvm_message both = m;
    both.parts |= FVM_PART_JSON;
    both.json = (const uint8_t *)"{}";
    both.json_len = 2;
    CHECK(fvm_filter_matches(sns, &both, &e) == FVM_ERR_ARGUMENT);
    CHECK(str_eq(fvm_error_code(e, 0), "INVALID_ARGUMENT"));
    fvm_error_free(e);

    /* Bad message structs. */
    fvm_message none = {0};
    CHECK(fvm_filter_matches(sns, &none, &e) == FVM_ERR_ARGUMENT);
    fvm_error_free(e);
    fvm_message unknown = {0};
    unknown.parts = 64;
    CHECK(fvm_filter_matches(sns, &unknown, &e) == FVM_ERR_ARGUMENT);
    fvm_error_free(e);
    fvm_message null_attrs = {0};
    null_attrs.parts = FVM_PART_ATTRIBUTES;
    null_attrs.attribute_count = 3;
    CHECK(fvm_filter_matches(sns, &null_attrs, &e) == FVM_ERR_ARGUMENT);
    fvm_error_free(e);
    CHECK(fvm_filter_matches(sns, NULL, &e) == FVM_ERR_ARGUMENT);
    fvm_error_free(e);
    CHECK(fvm_filter_matches(NULL, &m, &e) == FVM_ERR_ARGUMENT);
    fvm_error_free(e);
    /* An empty attribute list is a message without attributes (not a missing part). */
    fvm_message empty = {0};
    empty.parts = FVM_PART_ATTRIBUTES;
    CHECK(fvm_filter_matches(sns, &empty, &e) == FVM_NO_MATCH && e == NULL);
    fvm_filter_free(sns);

    /* SNS body scope: the raw body; a body that is not JSON matches nothing (rule 14). */
    fvm_filter *body = compile("sns", "{\"event\": [{\"prefix\": \"order.\"}]}", "{\"scope\": \"MessageBody\"}");
    fvm_message b = {0};
    b.parts = FVM_PART_BODY;
    b.body = (const uint8_t *)"{\"event\": \"order.new\"}";
    b.body_len = strlen((const char *)b.body);
    CHECK(fvm_filter_matches(body, &b, &e) == FVM_MATCH);
    b.body = (const uint8_t *)"not json";
    b.body_len = 8;
    CHECK(fvm_filter_matches(body, &b, &e) == FVM_NO_MATCH && e == NULL);
    fvm_filter_free(body);

    /* Event Grid: the body is the event, one JSON object. */
    fvm_filter *eg = compile("eventgrid", "{\"subjectBeginsWith\": \"/blobs/\"}", NULL);
    b.body = (const uint8_t *)"{\"id\": \"1\", \"subject\": \"/blobs/a.jpg\", \"eventType\": \"x\"}";
    b.body_len = strlen((const char *)b.body);
    CHECK(fvm_filter_matches(eg, &b, &e) == FVM_MATCH);
    b.body = (const uint8_t *)"[";
    b.body_len = 1;
    CHECK(fvm_filter_matches(eg, &b, &e) == FVM_ERR_MESSAGE);
    CHECK(str_eq(fvm_error_code(e, 0), "MESSAGE_NOT_JSON"));
    fvm_error_free(e);
    /* A batch given whole, or a scalar: INVALID_MESSAGE, the batch with the way to split it. */
    const char *batch = "[{\"subject\": \"/blobs/a\"}, {\"subject\": \"/other/b\"}]";
    b.body = (const uint8_t *)batch;
    b.body_len = strlen(batch);
    CHECK(fvm_filter_matches(eg, &b, &e) == FVM_ERR_MESSAGE);
    CHECK(str_eq(fvm_error_code(e, 0), "INVALID_MESSAGE"));
    CHECK(strstr(fvm_error_message(e, 0, NULL), "fvm_read_events") != NULL);
    fvm_error_free(e);
    const char *scalars[] = {"5", "\"x\"", "null"};
    for (int i = 0; i < 3; i++) {
        b.body = (const uint8_t *)scalars[i];
        b.body_len = strlen(scalars[i]);
        CHECK(fvm_filter_matches(eg, &b, &e) == FVM_ERR_MESSAGE);
        CHECK(str_eq(fvm_error_code(e, 0), "INVALID_MESSAGE"));
        fvm_error_free(e);
    }
    /* fvm_read_events splits the batch; each event is then matched on its own. */
    fvm_span spans[4];
    size_t n = 0;
    CHECK(fvm_read_events(BYTES(batch), spans, 4, &n, &e) == FVM_OK && n == 2 && e == NULL);
    int verdicts[2];
    for (size_t i = 0; i < n && i < 2; i++) {
        b.body = (const uint8_t *)batch + spans[i].offset;
        b.body_len = spans[i].len;
        verdicts[i] = fvm_filter_matches(eg, &b, &e);
    }
    CHECK(verdicts[0] == FVM_MATCH && verdicts[1] == FVM_NO_MATCH);
    CHECK(fvm_read_events(BYTES(batch), spans, 1, &n, &e) == FVM_ERR_BUFFER_TOO_SMALL && n == 2);
    CHECK(fvm_read_events(BYTES("{\"id\": 1}"), spans, 4, &n, &e) == FVM_OK && n == 1);
    CHECK(spans[0].offset == 0 && spans[0].len == 9);
    CHECK(fvm_read_events(BYTES("[{"), spans, 4, &n, &e) == FVM_ERR_MESSAGE);
    CHECK(str_eq(fvm_error_code(e, 0), "MESSAGE_NOT_JSON"));
    fvm_error_free(e);
    fvm_filter_free(eg);

    /* EventBridge: the body is the event; one that is not a JSON object is a message error. */
    fvm_filter *ebf = compile("eventbridge", "{\"detail\": {\"state\": [\"running\"]}}", NULL);
    CHECK(ebf != NULL && str_eq(fvm_filter_dialect(ebf), "eventbridge"));
    b.body = (const uint8_t *)"{\"detail\": [{\"state\": \"stopped\"}, {\"state\": \"running\"}]}";
    b.body_len = strlen((const char *)b.body);
    CHECK(fvm_filter_matches(ebf, &b, &e) == FVM_MATCH);
    b.body = (const uint8_t *)"[1]";
    b.body_len = 3;
    CHECK(fvm_filter_matches(ebf, &b, &e) == FVM_ERR_MESSAGE);
    fvm_error_free(e);
    fvm_filter_free(ebf);

    /* Headers: stream has one value per header, expr takes several (a repeated name). */
    fvm_filter *st = compile("stream", "region = eu-* and priority >= 5", NULL);
    fvm_header sh[] = {header("region", "eu-west"), header("priority", "7")};
    fvm_message h = {0};
    h.parts = FVM_PART_HEADERS;
    h.headers = sh;
    h.header_count = 2;
    CHECK(fvm_filter_matches(st, &h, &e) == FVM_MATCH);
    fvm_header twice[] = {header("region", "eu-west"), header("region", "us-east")};
    h.headers = twice;
    CHECK(fvm_filter_matches(st, &h, &e) == FVM_ERR_MESSAGE);
    CHECK(str_eq(fvm_error_pointer(e, 0, NULL), "/headers/region"));
    fvm_error_free(e);
    fvm_filter_free(st);
    fvm_filter *ex = compile("expr", "{\"key\": \"region\", \"op\": \"in\", \"value\": [\"us-east\"]}", NULL);
    CHECK(ex != NULL);
    CHECK(fvm_filter_matches(ex, &h, &e) == FVM_MATCH);
    /* Names are bytes, read where they lie: one that is not UTF-8 is no header the filter
     * reads. */
    fvm_header bad_name[] = {{(const uint8_t *)"\xc3", 1, (const uint8_t *)"x", 1}};
    h.headers = bad_name;
    h.header_count = 1;
    CHECK(fvm_filter_matches(ex, &h, &e) == FVM_NO_MATCH && e == NULL);
    fvm_filter_free(ex);
}

static void test_bytes(void) {
    fvm_error *e = NULL;
    fvm_filter *f = compile("basaltic", "{\"event\": [\"order.paid\"]}", NULL);
    uint8_t *buf = NULL;
    size_t len = 0;
    CHECK(fvm_filter_to_bytes(f, &buf, &len, &e) == FVM_OK && buf != NULL && len > 0);
    CHECK(fvm_filter_to_bytes(f, NULL, &len, &e) == FVM_ERR_ARGUMENT);
    fvm_error_free(e);

    fvm_filter *loaded = NULL;
    CHECK(fvm_filter_from_bytes(buf, len, &loaded, &e) == FVM_OK && loaded != NULL);
    CHECK(str_eq(fvm_filter_dialect(loaded), "basaltic"));
    const char *doc = "{\"attributes\": {\"event\": {\"type\": \"String\", \"value\": \"order.paid\"}}}";
    CHECK(fvm_filter_matches_json(loaded, BYTES(doc), &e) == FVM_MATCH);

    /* Corrupted bytes are rejected, never trusted. */
    buf[len / 2] ^= 0x5a;
    fvm_filter *bad = (fvm_filter *)0x1;
    int32_t st = fvm_filter_from_bytes(buf, len, &bad, &e);
    CHECK(st == FVM_OK || st == FVM_ERR_LOAD);
    if (st == FVM_OK) {
        fvm_filter_free(bad);
    } else {
        CHECK(bad == NULL);
        fvm_error_free(e);
    }
    CHECK(fvm_filter_from_bytes(BYTES("garbage"), &bad, &e) == FVM_ERR_LOAD);
    CHECK(fvm_error_status(e) == FVM_ERR_LOAD);
    CHECK(str_eq(fvm_error_code(e, 0), "INVALID_PROGRAM"));
    fvm_error_free(e);
    CHECK(fvm_filter_from_bytes(NULL, 0, NULL, &e) == FVM_ERR_ARGUMENT);
    fvm_error_free(e);
    fvm_bytes_free(buf, len);
    fvm_bytes_free(NULL, 0);
    fvm_filter_free(loaded);
    fvm_filter_free(f);
}

static int contains(const uint64_t *ids, size_t n, uint64_t id) {
    for (size_t i = 0; i < n; i++) {
        if (ids[i] == id) return 1;
    }
    return 0;
}

static void test_set(void) {
    fvm_error *e = NULL;
    fvm_set *set = fvm_set_new();
    CHECK(set != NULL && fvm_set_len(set) == 0);

    /* Mixed dialects in one set; a filter loaded from bytes too. */
    fvm_filter *sns = compile("sns", "{\"event\": [\"paid\"]}", NULL);
    fvm_filter *bas = compile("basaltic", "{\"event\": [\"paid\"]}", NULL);
    fvm_filter *stm = compile("stream", "event = paid", NULL);
    uint8_t *buf = NULL;
    size_t len = 0;
    fvm_filter_to_bytes(sns, &buf, &len, NULL);
    fvm_filter *loaded = NULL;
    fvm_filter_from_bytes(buf, len, &loaded, NULL);
    fvm_bytes_free(buf, len);

    CHECK(fvm_set_add(set, 1, sns, &e) == FVM_OK && e == NULL);
    CHECK(fvm_set_add(set, 2, bas, &e) == FVM_OK);
    CHECK(fvm_set_add(set, 3, stm, &e) == FVM_OK);
    CHECK(fvm_set_add(set, 4, loaded, &e) == FVM_OK);
    CHECK(fvm_set_add(set, 5, sns, &e) == FVM_OK);
    CHECK(fvm_set_add(NULL, 6, sns, &e) == FVM_ERR_ARGUMENT);
    fvm_error_free(e);
    CHECK(fvm_set_add(set, 6, NULL, &e) == FVM_ERR_ARGUMENT);
    fvm_error_free(e);
    CHECK(fvm_set_len(set) == 5);
    /* The set keeps its own copies. */
    fvm_filter_free(loaded);

    fvm_attribute attrs[] = {attr("event", "String", "paid")};
    fvm_header hs[] = {header("event", "paid")};
    fvm_message m = {0};
    m.parts = FVM_PART_ATTRIBUTES | FVM_PART_HEADERS;
    m.attributes = attrs;
    m.attribute_count = 1;
    m.headers = hs;
    m.header_count = 1;

    uint64_t ids[8];
    size_t count = 99;
    CHECK(fvm_set_matching(set, &m, ids, 8, &count, &e) == FVM_OK && e == NULL);
    CHECK(count == 5);
    for (uint64_t id = 1; id <= 5; id++) CHECK(contains(ids, count, id));

    /* Too small a buffer: the needed size, the first ids, no error object. */
    uint64_t two[2] = {0, 0};
    CHECK(fvm_set_matching(set, &m, two, 2, &count, &e) == FVM_ERR_BUFFER_TOO_SMALL);
    CHECK(count == 5 && e == NULL && two[0] != 0 && two[1] != 0);
    CHECK(fvm_set_matching(set, &m, NULL, 0, &count, &e) == FVM_ERR_BUFFER_TOO_SMALL && count == 5);
    CHECK(fvm_set_matching(set, &m, NULL, 4, &count, &e) == FVM_ERR_ARGUMENT);
    fvm_error_free(e);
    CHECK(fvm_set_matching(set, &m, ids, 8, NULL, &e) == FVM_ERR_ARGUMENT);
    fvm_error_free(e);

    /* A group that cannot read the message never costs the others their delivery: the stream
     * filter needs headers, the ids of every other group come back with FVM_PARTIAL and an error
     * object naming the group. */
    m.parts = FVM_PART_ATTRIBUTES;
    CHECK(fvm_set_matching(set, &m, ids, 8, &count, &e) == FVM_PARTIAL && count == 4);
    CHECK(!contains(ids, count, 3));
    CHECK(fvm_error_status(e) == FVM_PARTIAL && fvm_error_count(e) == 1);
    CHECK(str_eq(fvm_error_code(e, 0), "MESSAGE_SHAPE"));
    CHECK(str_eq(fvm_error_dialect(e, 0), "stream"));
    size_t options_len = 99;
    CHECK(str_eq(fvm_error_options(e, 0, &options_len), "{}") && options_len == 2);
    CHECK(fvm_error_subscriptions(e, 0) == 1);
    CHECK(fvm_error_dialect(e, 1) == NULL && fvm_error_subscriptions(e, 1) == 0);
    fvm_error_free(e);
    /* A stream header given two values: only the stream group cannot judge it. */
    fvm_header twice[] = {header("event", "paid"), header("event", "other")};
    m.parts = FVM_PART_ATTRIBUTES | FVM_PART_HEADERS;
    m.headers = twice;
    m.header_count = 2;
    CHECK(fvm_set_matching(set, &m, ids, 8, &count, &e) == FVM_PARTIAL && count == 4);
    CHECK(str_eq(fvm_error_code(e, 0), "INVALID_MESSAGE"));
    CHECK(str_eq(fvm_error_pointer(e, 0, NULL), "/headers/event"));
    fvm_error_free(e);
    /* Errors of other calls are about no group. */
    CHECK(fvm_set_matching(set, NULL, ids, 8, &count, &e) == FVM_ERR_ARGUMENT);
    CHECK(fvm_error_dialect(e, 0) == NULL && fvm_error_options(e, 0, NULL) == NULL);
    fvm_error_free(e);
    m.headers = hs;
    m.header_count = 1;
    m.parts = FVM_PART_ATTRIBUTES;

    /* Remove: 1 when it was there, 0 when not; replace an id's filter by adding it again. */
    CHECK(fvm_set_remove(set, 3, &e) == 1);
    CHECK(fvm_set_remove(set, 3, &e) == 0 && e == NULL);
    CHECK(fvm_set_remove(NULL, 3, &e) == FVM_ERR_ARGUMENT);
    fvm_error_free(e);
    fvm_filter *other = compile("sns", "{\"event\": [\"other\"]}", NULL);
    CHECK(fvm_set_add(set, 1, other, &e) == FVM_OK);
    CHECK(fvm_set_matching(set, &m, ids, 8, &count, &e) == FVM_OK);
    CHECK(count == 3 && contains(ids, count, 2) && contains(ids, count, 4) && contains(ids, count, 5));
    CHECK(fvm_set_len(set) == 4 && fvm_set_len(NULL) == 0);

    fvm_filter_free(other);
    fvm_filter_free(sns);
    fvm_filter_free(bas);
    fvm_filter_free(stm);
    fvm_set_free(set);
    fvm_set_free(NULL);
}

/* Several threads match with one filter and one set while another adds and removes. */
#define THREADS 4
#define ROUNDS 400

struct shared {
    fvm_set *set;
    fvm_filter *filter;
    int errors;
    pthread_mutex_t lock;
};

static void *matcher(void *arg) {
    struct shared *s = arg;
    char value[32];
    int errors = 0;
    uint64_t ids[16];
    for (int i = 0; i < ROUNDS; i++) {
        snprintf(value, sizeof value, "%d", i % 10);
        fvm_attribute attrs[] = {attr("event", "String", "paid"), attr("n", "Number", value)};
        fvm_message m = {0};
        m.parts = FVM_PART_ATTRIBUTES;
        m.attributes = attrs;
        m.attribute_count = 2;
        int want = (i % 10) > 4 ? FVM_MATCH : FVM_NO_MATCH;
        if (fvm_filter_matches(s->filter, &m, NULL) != want) errors++;
        size_t count = 0;
        if (fvm_set_matching(s->set, &m, ids, 16, &count, NULL) != FVM_OK) {
            errors++;
            continue;
        }
        /* Ids 1 and 2 are always there: 1 matches every message, 2 those with n > 4; the
         * churned id 100 may or may not be. */
        if (!contains(ids, count, 1)) errors++;
        if (contains(ids, count, 2) != ((i % 10) > 4)) errors++;
    }
    pthread_mutex_lock(&s->lock);
    s->errors += errors;
    pthread_mutex_unlock(&s->lock);
    return NULL;
}

static void *churner(void *arg) {
    struct shared *s = arg;
    fvm_filter *f = compile("sns", "{\"event\": [\"paid\", \"new\"]}", NULL);
    for (int i = 0; i < ROUNDS; i++) {
        if (fvm_set_add(s->set, 100, f, NULL) != FVM_OK) s->errors++;
        if (fvm_set_remove(s->set, 100, NULL) != 1) s->errors++;
    }
    fvm_filter_free(f);
    return NULL;
}

static void test_threads(void) {
    struct shared s = {0};
    pthread_mutex_init(&s.lock, NULL);
    s.set = fvm_set_new();
    s.filter = compile("sns", "{\"n\": [{\"numeric\": [\">\", 4]}]}", NULL);
    fvm_filter *all = compile("sns", "{\"event\": [\"paid\"]}", NULL);
    fvm_set_add(s.set, 1, all, NULL);
    fvm_set_add(s.set, 2, s.filter, NULL);
    pthread_t threads[THREADS + 1];
    for (int i = 0; i < THREADS; i++) pthread_create(&threads[i], NULL, matcher, &s);
    pthread_create(&threads[THREADS], NULL, churner, &s);
    for (int i = 0; i <= THREADS; i++) pthread_join(threads[i], NULL);
    CHECK(s.errors == 0);
    CHECK(fvm_set_len(s.set) == 2);
    fvm_filter_free(all);
    fvm_filter_free(s.filter);
    fvm_set_free(s.set);
    pthread_mutex_destroy(&s.lock);
}

/* fvm_filter_example and fvm_filter_diff: JSON answers in buffers freed with fvm_bytes_free,
 * each message judged again by fvm_filter_matches_json, and the analysis's error codes. */
static void test_analysis(void) {
    fvm_error *e = NULL;
    fvm_filter *before = compile("sns", "{\"amount\": [{\"numeric\": [\">=\", 150]}]}", NULL);
    fvm_filter *after = compile("sns", "{\"amount\": [{\"numeric\": [\">=\", 100]}]}", NULL);
    CHECK(before != NULL && after != NULL);
    for (int matching = 1; matching >= 0; matching--) {
        uint8_t *buf = NULL;
        size_t len = 0;
        CHECK(fvm_filter_example(before, matching, &buf, &len, &e) == FVM_OK && e == NULL);
        /* {"found":true,"matches":...,"message":{...}}: the message is the last member. */
        char *json = malloc(len + 1);
        memcpy(json, buf, len);
        json[len] = '\0';
        fvm_bytes_free(buf, len);
        CHECK(strstr(json, "{\"found\":true,") == json);
        const char *msg = strstr(json, "\"message\":");
        CHECK(msg != NULL);
        if (msg != NULL) {
            msg += strlen("\"message\":");
            size_t msg_len = len - (size_t)(msg - json) - 1;
            CHECK(fvm_filter_matches_json(before, (const uint8_t *)msg, msg_len, &e) ==
                  (matching ? FVM_MATCH : FVM_NO_MATCH));
        }
        free(json);
    }

    uint8_t *buf = NULL;
    size_t len = 0;
    CHECK(fvm_filter_diff(before, after, &buf, &len, &e) == FVM_OK && e == NULL);
    char *json = malloc(len + 1);
    memcpy(json, buf, len);
    json[len] = '\0';
    fvm_bytes_free(buf, len);
    CHECK(strstr(json, "{\"verdict\":\"different\",\"exact\":true,") == json);
    CHECK(strstr(json, "\"first_only\":null,\"second_only\":{") != NULL);
    CHECK(strstr(json, "\"key\":\"amount\"") != NULL);
    free(json);
    CHECK(fvm_filter_diff(after, after, &buf, &len, &e) == FVM_OK);
    CHECK(len > 18 && memcmp(buf, "{\"verdict\":\"same\",", 18) == 0);
    fvm_bytes_free(buf, len);

    /* Two message models; NULL arguments. A filter loaded from bytes carries its IR. */
    fvm_filter *stm = compile("stream", "event = paid", NULL);
    buf = (uint8_t *)0x1;
    CHECK(fvm_filter_diff(before, stm, &buf, &len, &e) == FVM_ERR_ARGUMENT);
    CHECK(buf == NULL && len == 0);
    CHECK(str_eq(fvm_error_code(e, 0), "ANALYSIS_MODEL_MISMATCH"));
    fvm_error_free(e);
    e = NULL;
    uint8_t *bytes = NULL;
    size_t bytes_len = 0;
    fvm_filter *loaded = NULL;
    CHECK(fvm_filter_to_bytes(before, &bytes, &bytes_len, NULL) == FVM_OK);
    CHECK(fvm_filter_from_bytes(bytes, bytes_len, &loaded, NULL) == FVM_OK);
    fvm_bytes_free(bytes, bytes_len);
    CHECK(fvm_filter_diff(loaded, before, &buf, &len, &e) == FVM_OK);
    CHECK(len > 18 && memcmp(buf, "{\"verdict\":\"same\",", 18) == 0);
    fvm_bytes_free(buf, len);
    CHECK(fvm_filter_example(NULL, 1, &buf, &len, &e) == FVM_ERR_ARGUMENT);
    fvm_error_free(e);
    e = NULL;
    CHECK(fvm_filter_diff(before, after, NULL, &len, &e) == FVM_ERR_ARGUMENT);
    fvm_error_free(e);
    fvm_filter_free(loaded);
    fvm_filter_free(stm);
    fvm_filter_free(before);
    fvm_filter_free(after);
}

/* FVM_READ_TRUSTED: a body whose unread member is not JSON gets a verdict; validating, it is
 * MESSAGE_NOT_JSON; an unknown read mode is FVM_ERR_ARGUMENT. */
static void test_read_mode(void) {
    fvm_error *e = NULL;
    fvm_filter *f = NULL;
    const char *opts = "{\"scope\": \"MessageBody\"}";
    CHECK(fvm_compile("sns", BYTES("{\"store\": [\"example_corp\"]}"), BYTES(opts), &f, &e) ==
          FVM_OK);
    const char *body = "{\"store\": \"example_corp\", \"items\": [01, tru]}";
    fvm_message m = {0};
    m.parts = FVM_PART_JSON;
    m.json = (const uint8_t *)body;
    m.json_len = strlen(body);
    CHECK(fvm_filter_matches_read(f, &m, FVM_READ_TRUSTED, &e) == FVM_MATCH && e == NULL);
    CHECK(fvm_filter_matches_read(f, &m, FVM_READ_VALIDATING, &e) == FVM_ERR_MESSAGE);
    CHECK(str_eq(fvm_error_code(e, 0), "MESSAGE_NOT_JSON"));
    fvm_error_free(e);
    e = NULL;
    CHECK(fvm_filter_matches_read(f, &m, 7, &e) == FVM_ERR_ARGUMENT);
    fvm_error_free(e);
    e = NULL;
    fvm_set *set = fvm_set_new();
    CHECK(fvm_set_add(set, 3, f, &e) == FVM_OK);
    uint64_t ids[2] = {0, 0};
    size_t count = 0;
    CHECK(fvm_set_matching_read(set, &m, FVM_READ_TRUSTED, ids, 2, &count, &e) == FVM_OK);
    CHECK(count == 1 && ids[0] == 3 && e == NULL);
    CHECK(fvm_set_matching_read(set, &m, FVM_READ_VALIDATING, ids, 2, &count, &e) == FVM_PARTIAL);
    CHECK(count == 0 && str_eq(fvm_error_code(e, 0), "MESSAGE_NOT_JSON"));
    fvm_error_free(e);
    fvm_set_free(set);
    fvm_filter_free(f);
}

int main(void) {
    test_version();
    test_read_mode();
    test_compile_errors();
    test_filter_parts();
    test_bytes();
    test_set();
    test_threads();
    test_analysis();
    printf("%d passed, %d failed\n", passed, failed);
    return failed == 0 ? 0 : 1;
}
