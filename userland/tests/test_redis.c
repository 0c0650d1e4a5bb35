/*
 * The Redis-protocol server core (userland/redis, docs/redis.md) built for
 * the guest: a script of requests fed through redis_conn_input() gets the
 * replies Redis 7.0 gives (the host tests, tests/test_redis_server.py,
 * compare the same core with Debian's redis-server byte for byte), whole,
 * split at every byte and one byte at a time, and bad input is refused.
 * Each test frees what it made, since the root task's heap outlives tests.
 */
#include <redis.h>
#include <redis_link.h>

#include "test.h"

/* Every request kind the benchmark's clients send, scores parsed, added (ZADD
 * INCR) and printed without an FPU, a type error, an unknown command, an
 * inline command and QUIT. */
static const char script[] =
    "*1\r\n$4\r\nPING\r\n*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$1\r\nv\r\n*2\r\n$3\r\nGET\r\n$1\r\nk\r\n"
    "*2\r\n$4\r\nINCR\r\n$1\r\nn\r\n*3\r\n$6\r\nINCRBY\r\n$1\r\nn\r\n$2\r\n41\r\n*6\r\n$4\r\nHSET\r\n"
    "$1\r\nh\r\n$1\r\nf\r\n$1\r\n1\r\n$1\r\ng\r\n$1\r\n2\r\n*2\r\n$7\r\nHGETALL\r\n$1\r\nh\r\n*2\r\n"
    "$3\r\nGET\r\n$1\r\nh\r\n*8\r\n$4\r\nZADD\r\n$1\r\nz\r\n$3\r\n0.1\r\n$1\r\na\r\n$7\r\n-2.5e-3\r\n"
    "$1\r\nb\r\n$4\r\n1e17\r\n$1\r\nc\r\n*5\r\n$4\r\nZADD\r\n$1\r\nz\r\n$4\r\nINCR\r\n$3\r\n0.2\r\n"
    "$1\r\na\r\n*5\r\n$13\r\nZRANGEBYSCORE\r\n$1\r\nz\r\n$4\r\n-inf\r\n$2\r\n(1\r\n$10\r\n"
    "WITHSCORES\r\n*4\r\n$5\r\nRPUSH\r\n$1\r\nl\r\n$1\r\nx\r\n$1\r\ny\r\n*3\r\n$5\r\nLPUSH\r\n"
    "$1\r\nl\r\n$1\r\nw\r\n*4\r\n$6\r\nLRANGE\r\n$1\r\nl\r\n$1\r\n0\r\n$2\r\n-1\r\n*3\r\n$4\r\nSADD\r\n"
    "$1\r\ns\r\n$1\r\nm\r\n*2\r\n$4\r\nSPOP\r\n$1\r\ns\r\n*5\r\n$4\r\nMSET\r\n$1\r\na\r\n$1\r\n1\r\n"
    "$1\r\nb\r\n$1\r\n2\r\n*4\r\n$4\r\nMGET\r\n$1\r\na\r\n$1\r\nb\r\n$1\r\nq\r\n*4\r\n$3\r\nDEL\r\n"
    "$1\r\na\r\n$1\r\nb\r\n$1\r\nq\r\n*1\r\n$6\r\nDBSIZE\r\n*2\r\n$4\r\nNOPE\r\n$1\r\nx\r\nECHO \"in line\"\r\n"
    "*1\r\n$4\r\nQUIT\r\n";

/* What Debian's redis-server 7.0.15 answered to the script. */
static const char expected[] =
    "+PONG\r\n+OK\r\n$1\r\nv\r\n:1\r\n:42\r\n:2\r\n*4\r\n$1\r\nf\r\n$1\r\n1\r\n$1\r\ng\r\n$1\r\n"
    "2\r\n-WRONGTYPE Operation against a key holding the wrong kind of value\r\n"
    ":3\r\n$19\r\n0.30000000000000004\r\n*4\r\n$1\r\nb\r\n$22\r\n-0.0025000000000000001\r\n"
    "$1\r\na\r\n$19\r\n0.30000000000000004\r\n:2\r\n:3\r\n*3\r\n$1\r\nw\r\n$1\r\nx\r\n$1\r\n"
    "y\r\n:1\r\n$1\r\nm\r\n+OK\r\n*3\r\n$1\r\n1\r\n$1\r\n2\r\n$-1\r\n:2\r\n:5\r\n-ERR unknown command 'NOPE', with args beginning with: 'x' \r\n"
    "$7\r\nin line\r\n+OK\r\n";

struct output {
    char buf[1024];
    size_t len;
    bool overflow;
};

static void collect(void *ctx, const void *data, size_t len)
{
    struct output *o = ctx;
    if (len > sizeof(o->buf) - o->len) {
        o->overflow = true;
        return;
    }
    memcpy(o->buf + o->len, data, len);
    o->len += len;
}

static bool output_is(const struct output *o, const char *want, size_t len)
{
    return !o->overflow && o->len == len && memcmp(o->buf, want, len) == 0;
}

/* Feed the script to a fresh server in pieces cut at `cut` (0: whole; 1: every byte);
 * true when the replies are the expected ones and QUIT closed the connection. */
static bool run_script(size_t cut, struct output *o)
{
    struct redis_db *db = redis_db_new();
    struct redis_conn *c = db ? redis_conn_new(db) : NULL;
    bool open = true, ok = c != NULL;
    size_t len = sizeof(script) - 1;
    o->len = 0;
    o->overflow = false;
    for (size_t at = 0; ok && at < len;) {
        size_t n = cut == 1 ? 1 : cut == 0 || at >= cut ? len - at : cut - at;
        ok = open;
        open = redis_conn_input(c, script + at, n, collect, o);
        at += n;
    }
    ok = ok && !open && output_is(o, expected, sizeof(expected) - 1);
    if (c)
        redis_conn_free(c);
    if (db)
        redis_db_free(db);
    return ok;
}

TEST(redis_script_gets_redis_replies)
{
    static struct output o;
    CHECK(run_script(0, &o));
}

/* The parser keeps its place however the bytes arrive. */
TEST(redis_script_split_at_every_byte)
{
    static struct output o;
    for (size_t cut = 2; cut < sizeof(script) - 1; cut++) {
        if (!run_script(cut, &o)) {
            test_fail(__FILE__, __LINE__, "split at byte %zu", cut);
            return;
        }
    }
    CHECK(run_script(1, &o));
}

/* Bad input gets Redis's error and a close, and what was acknowledged before stays. */
TEST(redis_bad_input_is_refused)
{
    static const struct { const char *input, *reply; } cases[] = {
        { "*1\r\n$1073741824\r\n", "-ERR Protocol error: invalid bulk length\r\n" },
        { "*x\r\n", "-ERR Protocol error: invalid multibulk length\r\n" },
        { "*1\r\nfoo\r\n", "-ERR Protocol error: expected '$', got 'f'\r\n" },
        { "ECHO \"open\r\n", "-ERR Protocol error: unbalanced quotes in request\r\n" },
    };
    static struct output o;
    struct redis_db *db = redis_db_new();
    CHECK(db);
    static const char set[] = "*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$1\r\nv\r\n";
    static const char get[] = "*2\r\n$3\r\nGET\r\n$1\r\nk\r\n";
    bool ok = true;
    struct redis_conn *c = redis_conn_new(db);
    o.len = 0;
    ok = c && redis_conn_input(c, set, sizeof(set) - 1, collect, &o) && output_is(&o, "+OK\r\n", 5);
    if (c)
        redis_conn_free(c);
    for (size_t i = 0; ok && i < ARRAY_SIZE(cases); i++) {
        c = redis_conn_new(db);
        o.len = 0;
        ok = c && !redis_conn_input(c, cases[i].input, strlen(cases[i].input), collect, &o) &&
             output_is(&o, cases[i].reply, strlen(cases[i].reply));
        if (c)
            redis_conn_free(c);
        if (!ok)
            test_note("case %zu", i);
    }
    c = ok ? redis_conn_new(db) : NULL;
    o.len = 0;
    ok = ok && c && redis_conn_input(c, get, sizeof(get) - 1, collect, &o) && output_is(&o, "$1\r\nv\r\n", 7);
    if (c)
        redis_conn_free(c);
    redis_db_free(db);
    CHECK(ok);
}

/*
 * The server's side of layout=processes' link (redis_link.h): requests are
 * served in order on their connection, a reply too big for the reply
 * buffer waits in the server and is fetched piece by piece, and every
 * request a stack could get wrong is refused with LINK_BAD_REQUEST,
 * changing nothing.
 */
TEST(redis_link_serves_and_refuses_bad_requests)
{
    static uint8_t request[LINK_REQUEST_MAX], reply[32];
    static struct link_server s;
    static const char set[] = "*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$20\r\n01234567890123456789\r\n";
    static const char get[] = "*2\r\n$3\r\nGET\r\n$1\r\nk\r\n";
    struct link_answer out;
    size_t a, b;

    memset(&s, 0, sizeof(s));
    s.db = redis_db_new();
    CHECK(s.db);
    s.request = request;
    s.reply = reply;
    s.reply_max = sizeof(reply);
    CHECK_EQ(redis_link_serve(&s, LINK_OPEN, 0, 0, &out), LINK_OK);
    a = out.value;
    CHECK_EQ(redis_link_serve(&s, LINK_OPEN, 0, 0, &out), LINK_OK);
    b = out.value;
    CHECK(a != b && a < LINK_MAX_CONNS && b < LINK_MAX_CONNS);

    memcpy(request, set, sizeof(set) - 1);
    CHECK_EQ(redis_link_serve(&s, LINK_INPUT, a, sizeof(set) - 1, &out), LINK_OK);
    CHECK(out.value == 5 && !memcmp(reply, "+OK\r\n", 5));
    CHECK(out.taken == sizeof(set) - 1 && out.pending == 0);

    /* Refused, each changing nothing: an unknown operation, an id out of range or not open,
     * a request over the limit, a fetch with nothing pending. */
    CHECK_EQ(redis_link_serve(&s, 0, a, 0, &out), LINK_BAD_REQUEST);
    CHECK_EQ(redis_link_serve(&s, LINK_MORE_REPLY + 1, a, 0, &out), LINK_BAD_REQUEST);
    CHECK_EQ(redis_link_serve(&s, LINK_INPUT, LINK_MAX_CONNS, 1, &out), LINK_BAD_REQUEST);
    CHECK_EQ(redis_link_serve(&s, LINK_CLOSE, (size_t)-1, 0, &out), LINK_BAD_REQUEST);
    size_t unused = a == 0 && b == 1 ? 2 : 0;
    CHECK_EQ(redis_link_serve(&s, LINK_INPUT, unused, 1, &out), LINK_BAD_REQUEST);
    CHECK_EQ(redis_link_serve(&s, LINK_INPUT, a, LINK_REQUEST_MAX + 1, &out), LINK_BAD_REQUEST);
    CHECK_EQ(redis_link_serve(&s, LINK_MORE_REPLY, a, 0, &out), LINK_BAD_REQUEST);
    CHECK(out.value == 0 && out.taken == 0 && out.pending == 0);

    /* The 27-byte reply fits.  With the reply buffer shrunk to 10 bytes, two pipelined GETs'
     * 54 bytes come in pieces, in order, and the connection takes no input until the last
     * piece is fetched. */
    memcpy(request, get, sizeof(get) - 1);
    CHECK_EQ(redis_link_serve(&s, LINK_INPUT, b, sizeof(get) - 1, &out), LINK_OK);
    CHECK(out.value == 27 && !memcmp(reply, "$20\r\n01234567890123456789\r\n", 27));
    static uint8_t fetched[64];
    size_t got = 0;
    memcpy(request + sizeof(get) - 1, get, sizeof(get) - 1);
    s.reply_max = 10;
    CHECK_EQ(redis_link_serve(&s, LINK_INPUT, b, 2 * (sizeof(get) - 1), &out), LINK_OK);
    CHECK(out.value == 10 && out.taken == 2 * (sizeof(get) - 1) && out.pending == 44);
    memcpy(fetched, reply, out.value);
    got = out.value;
    CHECK_EQ(redis_link_serve(&s, LINK_INPUT, b, sizeof(get) - 1, &out), LINK_BAD_REQUEST);
    while (got < 54) {
        CHECK_EQ(redis_link_serve(&s, LINK_MORE_REPLY, b, 0, &out), LINK_OK);
        CHECK(out.value > 0 && out.value <= 10 && got + out.value + out.pending == 54);
        memcpy(fetched + got, reply, out.value);
        got += out.value;
    }
    CHECK(!memcmp(fetched, "$20\r\n01234567890123456789\r\n$20\r\n01234567890123456789\r\n", 54));
    CHECK_EQ(redis_link_serve(&s, LINK_MORE_REPLY, b, 0, &out), LINK_BAD_REQUEST);
    s.reply_max = sizeof(reply);

    /* QUIT: its +OK comes with the close. */
    memcpy(request, "QUIT\r\n", 6);
    CHECK_EQ(redis_link_serve(&s, LINK_INPUT, a, 6, &out), LINK_CLOSE_NOW);
    CHECK(out.value == 5 && !memcmp(reply, "+OK\r\n", 5));

    CHECK_EQ(redis_link_serve(&s, LINK_CLOSE, a, 0, &out), LINK_OK);
    CHECK_EQ(redis_link_serve(&s, LINK_CLOSE, a, 0, &out), LINK_BAD_REQUEST);
    CHECK_EQ(redis_link_serve(&s, LINK_CLOSE, b, 0, &out), LINK_OK);
    redis_db_free(s.db);
}
