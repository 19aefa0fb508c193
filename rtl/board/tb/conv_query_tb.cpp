// conv_query_tb.cpp - Verilator bench for rtl/board/conv_query.v around a
// generated convolutional core (rtl/board's TestBench generates it: 7 x 6
// images of 2 planes, a 3 x 4 window, 3 classes, 9 clauses, T = 200, 2 x 7
// lanes; the parameters arrive as -D defines, CONV_F the features of a
// patch, CONV_WB the width of the core's stored weights: the model's
// weights span -2^(WB-1) .. 2^(WB-1)-1)
//
// What conv_query itself does, checked without a golden model:
//   - info ROM: words 1..12, 14, 15 are the parameters (NT = NC, m = C,
//     o = P*H*W, T, B, W, LC, LL, D, MaxK, hash; U = lcm(1..NC); G, BT);
//   - images: a request's image goes row by row into the core (img_wr_*)
//     before it; the image of the next request is written while a request
//     runs (the core keeps two), and a request with no image written
//     since the last reads the last one again;
//   - upload: thresholds word by word (word w = addr*L + lane, random
//     high bits above B that the core must ignore) and class-major weights
//     (k*C + c): with every threshold 0 except clause c's TA of literal 0
//     (the window's first bit) or of its negation (literal F) at 2^B - 1
//     (always included), an image of all ones makes exactly the clauses
//     with literal 0 fire, whatever the LFSRs draw, so each class sum must
//     be the sum of their weights: the rows and the weight transposition
//     are where they belong (two uploads, different clauses and weights);
//   - statistics: a request in stats mode answers the reduction of the
//     same request's samples-mode words (clipped to [-T, T], argmax with
//     ties split U/n, sums, sums of squares), with random thresholds and
//     images; chained requests (req_more = 1 on the first) answer the
//     reduction of both runs' samples in stats mode (no word after the
//     first run) and both runs' words in samples mode, res_last on the
//     last word only; then two requests with tied classes by
//     construction (class 1's weights equal to class 0's, the others'
//     equal or negated); the run must meet samples with tied maxima and
//     clipped sums (counted in reduce), or it fails.
#include <algorithm>
#include <vector>

#include "Vconv_query.h"
#include "tb_util.h"

static const int L = LANES, D = DEPTH, NCL = NC, C = CLAUSES, F = CONV_F;
static const int WORDS = L * D + NCL * C;
static const int WMAX = (1 << (CONV_WB - 1)) - 1;   // the weights the core keeps: -WMAX-1 .. WMAX

struct Bench {
    Tb<Vconv_query> tb;
    std::mt19937_64 rng;
    Bench(const TbOpts& o) : tb("conv_query", o), rng(o.seed) {
        Vconv_query* m = tb.m.get();
        m->rst = 1;
        m->bank_wr_en = 0;
        m->img_wr_en = 0;
        m->req_valid = 0;
        m->res_ready = 0;
        tb.settle();
        tb.tick();
        m->rst = 0;
        tb.settle();
    }
    int rnd(int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); }

    // upload words in offset order, one every 3 clocks (proto_engine
    // writes one at most every 16)
    void upload(const std::vector<uint16_t>& w) {
        Vconv_query* m = tb.m.get();
        for (int i = 0; i < (int)w.size(); i++) {
            m->bank_wr_en = 1;
            m->bank_wr_lane = i % L;
            m->bank_wr_addr = i / L;
            m->bank_wr_data = w[i];
            tb.settle();
            tb.tick();
            m->bank_wr_en = 0;
            tb.settle();
            tb.tick();
            tb.tick();
        }
    }

    // image row r of img on img_wr_data
    void set_row(const std::vector<uint8_t>& img, int r) {
        Vconv_query* m = tb.m.get();
        uint64_t v = 0;
        for (int x = 0; x < IMG_W; x++)
            if (img[r * IMG_W + x]) v |= 1ull << x;
        m->img_wr_data = v;
    }
    // writes the rows of img, one every 1..3 clocks
    void write_image(const std::vector<uint8_t>& img) {
        Vconv_query* m = tb.m.get();
        for (int r = 0; r < FEATURES / IMG_W; r++) {
            set_row(img, r);
            m->img_wr_en = 1;
            tb.settle();
            tb.tick();
            m->img_wr_en = 0;
            for (int g = rnd(0, 2); g > 0; g--) {
                tb.settle();
                tb.tick();
            }
        }
        tb.settle();
    }

    // one request on img (img == nullptr: no image written, the last one
    // is read again); with next, next's rows are written while it runs
    // (after it was taken); returns its words (res_last seen: *last)
    std::vector<uint32_t> request(const std::vector<uint8_t>* img, int k, uint32_t seed, bool stats, bool more, bool* last,
                                  const std::vector<uint8_t>* next = nullptr) {
        Vconv_query* m = tb.m.get();
        if (img) write_image(*img);
        int nr = 0;   // next's rows written
        m->req_k = k;
        m->req_seed = seed;
        m->req_stats = stats;
        m->req_more = more;
        m->req_valid = 1;
        std::vector<uint32_t> out;
        *last = false;
        bool taken = false;
        for (uint64_t n = 0; n < 10000000; n++) {
            m->res_ready = rnd(0, 3) != 0;
            tb.settle();
            if (m->req_valid && m->req_ready) taken = true;
            if (m->res_valid && m->res_ready) {
                CHECK(!*last, "a word after res_last");
                out.push_back(m->res_data);
                if (m->res_last) *last = true;
                CHECK(!m->res_error, "res_error on a valid request");
            }
            tb.tick();
            m->img_wr_en = 0;
            if (taken) m->req_valid = 0;
            if (taken && next && nr < FEATURES / IMG_W && rnd(0, 3) == 0) {
                set_row(*next, nr++);
                m->img_wr_en = 1;
            }
            tb.settle();
            if (taken && m->idle && !m->img_wr_en && (!next || nr == FEATURES / IMG_W)) break;
        }
        CHECK(taken && m->idle, "request not finished");
        CHECK(!next || nr == FEATURES / IMG_W, "the next image not written during the request");
        return out;
    }
};

static int clipv(int32_t v) { return v > CLIP_T ? CLIP_T : v < -CLIP_T ? -CLIP_T : v; }

// what reduce saw: samples with tied maxima, class sums clipped
static long n_ties = 0, n_clipped = 0;

// the statistics words of samples (K x NC raw sums)
static std::vector<uint32_t> reduce(const std::vector<uint32_t>& s) {
    uint32_t U = 1;
    for (uint32_t i = 2; i <= (uint32_t)NCL; i++) {
        uint32_t a = U, b = i;
        while (b) { uint32_t t = a % b; a = b; b = t; }
        U = U / a * i;
    }
    std::vector<uint32_t> votes(NCL), sums(NCL), sqs(NCL);
    for (size_t k = 0; k + NCL <= s.size(); k += NCL) {
        int best = clipv((int32_t)s[k]), n = 0;
        for (int c = 0; c < NCL; c++) {
            int u = clipv((int32_t)s[k + c]);
            sums[c] += (uint32_t)u;
            sqs[c] += (uint32_t)(u * u);
            if (u > best) best = u;
        }
        for (int c = 0; c < NCL; c++) n += clipv((int32_t)s[k + c]) == best;
        for (int c = 0; c < NCL; c++) n_clipped += clipv((int32_t)s[k + c]) != (int32_t)s[k + c];
        n_ties += n > 1;
        for (int c = 0; c < NCL; c++)
            if (clipv((int32_t)s[k + c]) == best) votes[c] += U / n;
    }
    std::vector<uint32_t> w = votes;
    w.insert(w.end(), sums.begin(), sums.end());
    w.insert(w.end(), sqs.begin(), sqs.end());
    return w;
}

// the upload word of TA (clause c, literal i)
static int ta_word(int c, int i) {
    int g = c / LC, ci = c % LC, bt = i / LL, li = i % LL;
    return (g * BEATS + bt) * L + ci * LL + li;
}

int main(int argc, char** argv) {
    Verilated::commandArgs(argc, argv);
    TbOpts o = tb_parse(argc, argv);
    Bench b(o);
    Vconv_query* m = b.tb.m.get();

    // info ROM
    const uint32_t want[16] = {0, NC, NC, CLAUSES, FEATURES, CLIP_T, TBITS, LFSR_W, LC, LL, DEPTH, MAXK, (uint32_t)HASH32, 0, 6,
                               ((uint32_t)GROUPS << 16) | BEATS};
    for (int a = 1; a < 16; a++) {
        if (a == 13) continue;
        m->info_addr = a;
        b.tb.settle();
        CHECK_EQ(m->info_data, want[a], "info word");
    }

    // weight and row placement: clause c includes literal 0 or literal F
    const uint32_t ALWAYS = (1u << TBITS) - 1;
    std::vector<uint8_t> ones(FEATURES, 1);
    for (int round = 0; round < 2; round++) {
        std::vector<uint16_t> w(WORDS);
        for (int i = 0; i < L * D; i++) w[i] = (uint16_t)(b.rnd(0, 0xfff) << TBITS);   // threshold 0, junk above B
        std::vector<int> fires(C);
        for (int c = 0; c < C; c++) {
            fires[c] = b.rnd(0, 1);
            w[ta_word(c, fires[c] ? 0 : F)] |= ALWAYS;
        }
        std::vector<int32_t> wt(NCL * C);
        for (int i = 0; i < NCL * C; i++) {
            wt[i] = i == 0 ? -WMAX - 1 : i == 1 ? WMAX : b.rnd(-WMAX - 1, WMAX);   // the extremes the core keeps
            w[L * D + i] = (uint16_t)wt[i];
        }
        b.upload(w);
        bool last;
        int k = b.rnd(1, 4);
        std::vector<uint32_t> got = b.request(&ones, k, (uint32_t)b.rng(), false, false, &last);
        CHECK(last, "res_last on the last word");
        CHECK_EQ(got.size(), (size_t)(k * NCL), "samples words");
        for (int s = 0; s < k; s++)
            for (int cl = 0; cl < NCL; cl++) {
                int32_t sum = 0;
                for (int c = 0; c < C; c++)
                    if (fires[c]) sum += wt[cl * C + c];
                if (s * NCL + cl < (int)got.size()) CHECK_EQ((int32_t)got[s * NCL + cl], sum, "class sum of the firing clauses' weights");
            }
    }

    // statistics against the same requests' samples; chains of two runs.
    // Few includes (93% of the thresholds 0), so that clauses fire and
    // the class sums, weights up to +-300 against T = 200, are clipped and
    // tied at the clip as well as at 0.
    std::vector<uint16_t> w(WORDS);
    const int th[] = {(int)ALWAYS, (int)ALWAYS - 1, 3, 8};
    for (int i = 0; i < L * D; i++) w[i] = (uint16_t)(b.rnd(0, 99) < 93 ? 0 : th[b.rnd(0, 3)]);
    for (int i = 0; i < NCL * C; i++) w[L * D + i] = (uint16_t)(int16_t)b.rnd(-std::min(300, WMAX), std::min(300, WMAX));
    b.upload(w);
    for (int q = 0; q < 12; q++) {
        std::vector<uint8_t> x1(FEATURES), x2(FEATURES);
        for (int i = 0; i < FEATURES; i++) {
            x1[i] = b.rnd(0, 2) == 0;
            x2[i] = b.rnd(0, 2) == 0;
        }
        int k1 = b.rnd(1, 6), k2 = b.rnd(1, 6);
        uint32_t q1 = (uint32_t)b.rng(), q2 = (uint32_t)b.rng();
        bool last;
        std::vector<uint32_t> s1 = b.request(&x1, k1, q1, false, false, &last);
        CHECK(last && s1.size() == (size_t)(k1 * NCL), "samples of run 1");
        std::vector<uint32_t> st = b.request(nullptr, k1, q1, true, false, &last);   // x1 again, not rewritten
        CHECK(last, "res_last on the stats' last word");
        CHECK(st == reduce(s1), "stats = the reduction of the samples");
        std::vector<uint32_t> s2 = b.request(&x2, k2, q2, false, false, &last);
        // chained, samples mode: both runs' words, res_last only at the end;
        // x2 written while run 1 runs
        std::vector<uint32_t> c1 = b.request(&x1, k1, q1, false, true, &last, &x2);
        CHECK(!last && c1 == s1, "chained samples, run 1: its words, no res_last");
        std::vector<uint32_t> c2 = b.request(nullptr, k2, q2, false, false, &last);
        CHECK(last && c2 == s2, "chained samples, run 2 (its image written during run 1): its words, res_last");
        // chained, stats mode: no words after run 1, then both runs' reduction
        c1 = b.request(&x1, k1, q1, true, true, &last);
        CHECK(c1.empty() && !last, "chained stats, run 1: no words");
        c2 = b.request(&x2, k2, q2, true, false, &last);
        std::vector<uint32_t> both = s1;
        both.insert(both.end(), s2.begin(), s2.end());
        CHECK(last && c2 == reduce(both), "chained stats = the reduction of both runs' samples");
    }
    // tied maxima by construction (the random requests above meet them
    // only by chance): class 1's weights equal to class 0's and the other
    // classes' to class 0's (every sample ties all classes) or their
    // negation (classes 0 and 1 tie unless class 0's sum is negative; all
    // tie when it is 0)
    for (int neg = 0; neg < 2; neg++) {
        for (int c = 0; c < C; c++) {
            int16_t w0 = (int16_t)b.rnd(-std::min(300, WMAX), std::min(300, WMAX));
            w[L * D + c] = (uint16_t)w0;
            for (int cl = 1; cl < NCL; cl++) w[L * D + cl * C + c] = (uint16_t)(int16_t)(cl >= 2 && neg ? -w0 : w0);
        }
        b.upload(w);
        std::vector<uint8_t> x(FEATURES);
        for (int i = 0; i < FEATURES; i++) x[i] = b.rnd(0, 2) == 0;
        int k = b.rnd(4, 6);
        uint32_t q = (uint32_t)b.rng();
        bool last;
        long ties0 = n_ties;
        std::vector<uint32_t> s = b.request(&x, k, q, false, false, &last);
        CHECK(last && s.size() == (size_t)(k * NCL), "samples, tied classes");
        std::vector<uint32_t> st = b.request(nullptr, k, q, true, false, &last);
        CHECK(last && st == reduce(s), "stats, tied classes = the reduction of the same request's samples");
        CHECK(neg || n_ties - ties0 == k, "equal weights: every sample tied");
    }
    // the statistics were checked where they are hard: tied maxima (the
    // U/n split) and sums beyond [-T, T] (the clip)
    CHECK(n_ties > 0, "no sample with tied maxima: the vote split went unchecked");
    CHECK(n_clipped > 0, "no clipped class sum: the clip went unchecked");
    std::printf("conv_query: %d-word uploads, 12 stats and chain checks, 2 with tied classes (%ld samples with ties, %ld clipped sums)\n", WORDS, n_ties,
                n_clipped);
    return tb_finish("conv_query");
}
