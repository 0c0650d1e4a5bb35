/*
 * Correctly rounded decimal <-> double conversion by exact big-integer
 * arithmetic.  Parsing computes the quotient N / D of the decimal value to
 * 55 bits plus a sticky bit and rounds half to even, as IEEE 754 and glibc's
 * strtod do.  Formatting expands the double exactly into decimal digits
 * (every double is a finite decimal fraction) and rounds to 17 significant
 * digits half to even, as glibc's printf does.  Both are slow next to a
 * hardware FPU but bounded: at most a few thousand small multiplications.
 */
#include "score.h"

#define MAX_DIGITS      60      /* significant digits accepted in a parsed number */
#define BIG_WORDS       64      /* 2,048 bits: 10^(60+310) shifted by 55, or 10^(330+60) */
#define MAX_DEC_EXP     309     /* 1.8e308 is the largest double */
#define MIN_DEC_EXP     (-330)  /* below every subnormal: 4.9e-324 */
#define FORMAT_DIGITS   17

struct big {
    uint32_t w[BIG_WORDS];      /* little-endian 32-bit words */
    int n;                      /* words in use; w[n-1] != 0 unless n == 0 */
};

static void big_set(struct big *b, uint32_t v)
{
    b->n = v ? 1 : 0;
    b->w[0] = v;
}

static void big_trim(struct big *b)
{
    while (b->n > 0 && b->w[b->n - 1] == 0)
        b->n--;
}

/* b = b * m + a.  The bounds on digits and exponents keep it within BIG_WORDS. */
static void big_mul_add(struct big *b, uint32_t m, uint32_t a)
{
    uint64_t carry = a;
    for (int i = 0; i < b->n; i++) {
        uint64_t t = (uint64_t)b->w[i] * m + carry;
        b->w[i] = (uint32_t)t;
        carry = t >> 32;
    }
    if (carry && b->n < BIG_WORDS)
        b->w[b->n++] = (uint32_t)carry;
}

static void big_shl(struct big *b, int k)
{
    int words = k / 32, bits = k % 32;
    if (b->n == 0)
        return;
    int n = b->n + words + 1;
    if (n > BIG_WORDS)
        n = BIG_WORDS;
    for (int i = n - 1; i >= 0; i--) {
        int src = i - words;
        uint32_t hi = src >= 0 && src < b->n ? b->w[src] : 0;
        uint32_t lo = src - 1 >= 0 && src - 1 < b->n ? b->w[src - 1] : 0;
        b->w[i] = bits ? (hi << bits) | (lo >> (32 - bits)) : hi;
    }
    b->n = n;
    big_trim(b);
}

static void big_shr1(struct big *b)
{
    for (int i = 0; i < b->n; i++)
        b->w[i] = (b->w[i] >> 1) | (i + 1 < b->n ? b->w[i + 1] << 31 : 0);
    big_trim(b);
}

static int big_cmp(const struct big *a, const struct big *b)
{
    if (a->n != b->n)
        return a->n < b->n ? -1 : 1;
    for (int i = a->n - 1; i >= 0; i--) {
        if (a->w[i] != b->w[i])
            return a->w[i] < b->w[i] ? -1 : 1;
    }
    return 0;
}

/* a -= b; a >= b. */
static void big_sub(struct big *a, const struct big *b)
{
    int64_t borrow = 0;
    for (int i = 0; i < a->n; i++) {
        int64_t t = (int64_t)a->w[i] - (i < b->n ? b->w[i] : 0) - borrow;
        borrow = t < 0;
        a->w[i] = (uint32_t)(t + (borrow ? ((int64_t)1 << 32) : 0));
    }
    big_trim(a);
}

static int big_bitlen(const struct big *b)
{
    if (b->n == 0)
        return 0;
    int bits = 32 * (b->n - 1);
    for (uint32_t top = b->w[b->n - 1]; top; top >>= 1)
        bits++;
    return bits;
}

static void big_mul_pow10(struct big *b, int k)
{
    for (; k > 0; k--)
        big_mul_add(b, 10, 0);
}

static bool digit_at(const char *s, size_t len, size_t i)
{
    return i < len && s[i] >= '0' && s[i] <= '9';
}

static bool is_infinity(const char *s, size_t len)
{
    static const char word[] = "infinity";
    if (len != 3 && len != 8)
        return false;
    for (size_t i = 0; i < len; i++) {
        char c = s[i] >= 'A' && s[i] <= 'Z' ? (char)(s[i] - 'A' + 'a') : s[i];
        if (c != word[i])
            return false;
    }
    return true;
}

/* Round the value num / den (both nonzero) to a double's bits. */
static enum score_parse round_quotient(struct big *num, struct big *den, uint64_t sign, uint64_t *bits)
{
    /* Scale so that the quotient q has 55 or 56 bits: 53 for the mantissa,
     * a guard bit and a round bit, and the remainder gives the sticky bit. */
    int shift = 55 - (big_bitlen(num) - big_bitlen(den));
    if (shift >= 0)
        big_shl(num, shift);
    else
        big_shl(den, -shift);
    struct big step = *den;
    big_shl(&step, 56);
    uint64_t q = 0;
    for (int i = 56; i >= 0; i--) {
        if (big_cmp(num, &step) >= 0) {
            big_sub(num, &step);
            q |= (uint64_t)1 << i;
        }
        big_shr1(&step);
    }
    bool sticky = num->n != 0;
    if (q >= (uint64_t)1 << 55) {
        sticky |= q & 1;
        q >>= 1;
        shift--;
    }
    /* q in [2^54, 2^55): the value is q * 2^-shift.  A normal double keeps the
     * top 53 bits of q; a subnormal one (m * 2^-1074) fewer, drop = shift - 1074. */
    int exp = 54 - shift + 1023;
    int drop = exp > 0 ? 2 : shift - 1074;
    if (drop > 56) {
        *bits = sign;
        return SCORE_UNDERFLOW;
    }
    uint64_t mant = q >> drop;
    bool guard = (q >> (drop - 1)) & 1;
    bool lower = (q & (((uint64_t)1 << (drop - 1)) - 1)) != 0 || sticky;
    if (guard && (lower || (mant & 1)))
        mant++;
    if (exp <= 0) {
        /* A subnormal; rounding up to 2^52 gives the smallest normal, whose bits these also are. */
        if (mant == 0) {
            *bits = sign;
            return SCORE_UNDERFLOW;
        }
        *bits = sign | mant;
        return SCORE_OK;
    }
    if (mant == (uint64_t)1 << 53) {
        mant >>= 1;
        exp++;
    }
    if (exp >= 2047) {
        *bits = sign | SCORE_POS_INF;
        return SCORE_OVERFLOW;
    }
    *bits = sign | (uint64_t)exp << 52 | (mant & (((uint64_t)1 << 52) - 1));
    return SCORE_OK;
}

enum score_parse score_parse(const char *s, size_t len, uint64_t *bits)
{
    size_t i = 0;
    uint64_t sign = 0;
    if (i < len && (s[i] == '+' || s[i] == '-'))
        sign = s[i++] == '-' ? (uint64_t)1 << 63 : 0;
    if (is_infinity(s + i, len - i)) {
        *bits = sign | SCORE_POS_INF;
        return SCORE_OK;
    }
    struct big num;
    big_set(&num, 0);
    int digits = 0, exp10 = 0;
    bool any = false;
    for (; digit_at(s, len, i); i++) {
        any = true;
        if (digits == 0 && s[i] == '0')
            continue;
        if (++digits > MAX_DIGITS)
            return SCORE_INVALID;
        big_mul_add(&num, 10, (uint32_t)(s[i] - '0'));
    }
    if (i < len && s[i] == '.') {
        for (i++; digit_at(s, len, i); i++) {
            any = true;
            if (digits == 0 && s[i] == '0') {
                exp10--;
                continue;
            }
            if (++digits > MAX_DIGITS)
                return SCORE_INVALID;
            big_mul_add(&num, 10, (uint32_t)(s[i] - '0'));
            exp10--;
        }
    }
    if (!any)
        return SCORE_INVALID;
    if (i < len && (s[i] == 'e' || s[i] == 'E')) {
        i++;
        bool negative = false;
        if (i < len && (s[i] == '+' || s[i] == '-'))
            negative = s[i++] == '-';
        if (!digit_at(s, len, i))
            return SCORE_INVALID;
        int e = 0;
        for (; digit_at(s, len, i); i++) {
            if (e < 100000)
                e = e * 10 + (s[i] - '0');
        }
        exp10 += negative ? -e : e;
    }
    if (i != len)
        return SCORE_INVALID;
    if (digits == 0) {
        *bits = sign;
        return SCORE_OK;
    }
    int magnitude = digits - 1 + exp10;     /* the value is about 10^magnitude */
    if (magnitude > MAX_DEC_EXP) {
        *bits = sign | SCORE_POS_INF;
        return SCORE_OVERFLOW;
    }
    if (magnitude < MIN_DEC_EXP) {
        *bits = sign;
        return SCORE_UNDERFLOW;
    }
    struct big den;
    big_set(&den, 1);
    if (exp10 >= 0)
        big_mul_pow10(&num, exp10);
    else
        big_mul_pow10(&den, -exp10);
    return round_quotient(&num, &den, sign, bits);
}

/* Exact decimal digits of mant * 2^exp2, most significant first; returns how
 * many, and *frac the number of them after the decimal point. */
static int exact_digits(uint64_t mant, int exp2, char *out, int *frac)
{
    /* Little-endian decimal digits: 2^971 * 2^53 has 309 digits, 2^-1074
     * times a 53-bit mantissa has 767 after the point. */
    uint8_t d[800];
    int n = 0;
    for (; mant; mant /= 10)
        d[n++] = (uint8_t)(mant % 10);
    uint32_t factor = exp2 >= 0 ? 2 : 5;
    *frac = exp2 >= 0 ? 0 : -exp2;
    for (int k = exp2 >= 0 ? exp2 : -exp2; k > 0; k--) {
        uint32_t carry = 0;
        for (int i = 0; i < n; i++) {
            uint32_t t = d[i] * factor + carry;
            d[i] = (uint8_t)(t % 10);
            carry = t / 10;
        }
        if (carry)
            d[n++] = (uint8_t)carry;
    }
    for (int i = 0; i < n; i++)
        out[i] = (char)('0' + d[n - 1 - i]);
    return n;
}

size_t score_format(char *buf, uint64_t bits)
{
    size_t len = 0;
    if (bits >> 63)
        buf[len++] = '-';
    int exp = (int)((bits >> 52) & 0x7ff);
    uint64_t mant = bits & (((uint64_t)1 << 52) - 1);
    if (exp == 0x7ff) {
        memcpy(buf + len, "inf", 4);
        return len + 3;
    }
    if (exp == 0 && mant == 0) {
        buf[len++] = '0';
        buf[len] = '\0';
        return len;
    }
    int exp2 = exp == 0 ? -1074 : exp - 1075;
    if (exp != 0)
        mant |= (uint64_t)1 << 52;
    char digits[800];
    int frac;
    int n = exact_digits(mant, exp2, digits, &frac);
    int point = n - 1 - frac;   /* decimal exponent of the first digit */
    if (n > FORMAT_DIGITS) {
        bool rest = false;
        for (int i = FORMAT_DIGITS + 1; i < n; i++)
            rest |= digits[i] != '0';
        char r = digits[FORMAT_DIGITS];
        bool up = r > '5' || (r == '5' && (rest || (digits[FORMAT_DIGITS - 1] - '0') % 2));
        n = FORMAT_DIGITS;
        if (up) {
            int i = n - 1;
            while (i >= 0 && digits[i] == '9')
                digits[i--] = '0';
            if (i >= 0) {
                digits[i]++;
            } else {
                digits[0] = '1';
                point++;
            }
        }
    }
    while (n > 1 && digits[n - 1] == '0')
        n--;
    if (point < -4 || point >= FORMAT_DIGITS) {
        buf[len++] = digits[0];
        if (n > 1) {
            buf[len++] = '.';
            for (int i = 1; i < n; i++)
                buf[len++] = digits[i];
        }
        buf[len++] = 'e';
        buf[len++] = point < 0 ? '-' : '+';
        int e = point < 0 ? -point : point;
        if (e >= 100)
            buf[len++] = (char)('0' + e / 100);
        buf[len++] = (char)('0' + e / 10 % 10);
        buf[len++] = (char)('0' + e % 10);
    } else if (point >= 0) {
        for (int i = 0; i <= point; i++)
            buf[len++] = i < n ? digits[i] : '0';
        if (n > point + 1) {
            buf[len++] = '.';
            for (int i = point + 1; i < n; i++)
                buf[len++] = digits[i];
        }
    } else {
        buf[len++] = '0';
        buf[len++] = '.';
        for (int i = 0; i < -point - 1; i++)
            buf[len++] = '0';
        for (int i = 0; i < n; i++)
            buf[len++] = digits[i];
    }
    buf[len] = '\0';
    return len;
}

/*
 * Addition on the bit patterns: both mantissas (hidden bit included) get
 * three extra low bits, guard, round and sticky; the smaller operand is
 * shifted to the larger one's exponent, its lost bits OR-ed into sticky;
 * the sum or difference is normalised and rounded half to even.  Subnormal
 * operands have exponent field 0 and are read with exponent 1 and no hidden
 * bit, which is what they mean.
 */
bool score_add(uint64_t a, uint64_t b, uint64_t *sum)
{
    const uint64_t sign_bit = (uint64_t)1 << 63, hidden = (uint64_t)1 << 52;
    const uint64_t mant_mask = hidden - 1;
    int ea = (int)((a >> 52) & 0x7ff), eb = (int)((b >> 52) & 0x7ff);
    if (ea == 0x7ff || eb == 0x7ff) {
        if (ea == 0x7ff && eb == 0x7ff && (a ^ b) == sign_bit)
            return false;
        *sum = ea == 0x7ff ? a : b;
        return true;
    }
    if ((a << 1) == 0 || (b << 1) == 0) {
        /* x + 0 is x; of two zeros, the sum is -0 only when both are. */
        *sum = (a << 1) == 0 ? ((b << 1) == 0 ? a & b : b) : a;
        return true;
    }
    uint64_t ma = ((a & mant_mask) | (ea ? hidden : 0)) << 3;
    uint64_t mb = ((b & mant_mask) | (eb ? hidden : 0)) << 3;
    ea = ea ? ea : 1;
    eb = eb ? eb : 1;
    if (eb > ea || (eb == ea && mb > ma)) {
        uint64_t t = a; a = b; b = t;
        t = ma; ma = mb; mb = t;
        int te = ea; ea = eb; eb = te;
    }
    uint64_t sign = a & sign_bit;
    int shift = ea - eb;
    if (shift > 58) {
        mb = mb != 0;
    } else if (shift > 0) {
        bool lost = (mb & (((uint64_t)1 << shift) - 1)) != 0;
        mb = (mb >> shift) | lost;
    }
    uint64_t m;
    int e = ea;
    if ((a ^ b) & sign_bit) {
        m = ma - mb;
        if (m == 0) {
            *sum = 0;       /* x - x is +0 when rounding to nearest */
            return true;
        }
        while (m < hidden << 3 && e > 1) {
            m <<= 1;
            e--;
        }
    } else {
        m = ma + mb;
        if (m >= hidden << 4) {
            m = (m >> 1) | (m & 1);
            e++;
        }
    }
    uint64_t rest = m & 7;
    m >>= 3;
    if (rest > 4 || (rest == 4 && (m & 1)))
        m++;
    if (m == hidden << 1) {
        m >>= 1;
        e++;
    }
    if (e >= 0x7ff) {
        *sum = sign | SCORE_POS_INF;
        return true;
    }
    /* Below the hidden bit at exponent 1, the result is subnormal: exponent field 0. */
    *sum = sign | (m >= hidden ? (uint64_t)e << 52 : 0) | (m & mant_mask);
    return true;
}

uint64_t score_order(uint64_t bits)
{
    if ((bits << 1) == 0)
        bits = 0;
    return bits >> 63 ? ~bits : bits | (uint64_t)1 << 63;
}
