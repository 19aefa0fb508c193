// proto_engine_tb.cpp - Verilator bench for rtl/board/proto_engine.v
//
// Build (the -D values must match the -G values):
//   verilator --cc --exe --build -Wall -GFEATURES=10 ... -CFLAGS "-I../../lib/tb -DFEATURES=10 ..." \
//     proto_engine.v stat_counters.v tb/proto_engine_tb.cpp
//
// The engine runs against three models:
//   - a frame source that behaves like link_arb (a descriptor stays offered
//     with its payload until the engine takes it at the end of the frame);
//   - a behavioral core: a bank array written through bank_wr_* (writes are
//     only legal while the core is idle), a request stream that answers
//     K*NT (samples) or NC+2*NT (stats) words after a random latency with
//     random gaps, each word a hash of (features, K, seed, mode, index,
//     bank contents) (samples: mostly small values around +-T, to test
//     mode 3's clipping), chained by req_more as docs/core-interface.md
//     says (stats words are the sums of the chained runs' hashes, sent by
//     the last run only; samples words of a run with req_more carry no
//     res_last), and an info ROM (INFER mode 2 runs the core in stats
//     mode and keeps the NC vote words, u16 when K <= KV; mode 3 in
//     samples mode, each word clipped to [-T, T], i8 when T <= 127);
//   - a proto_tx sink that takes bytes with random ready, closes fragments
//     of 1024 bytes, stays busy for a random time while "sending", and
//     checks that the side band (type, seq, link, mac) is stable until the
//     response is sent; the bytes are reassembled into words (least
//     significant byte first).
// A C++ reference of docs/protocol.md version 6 (the board's side of
// section 2: LOAD rules with next offset, gap answers (retransmissions
// included), words past the bank not written, running CRC, commit checks;
// INFER checks in order, one query per whole M*FB payload bytes, no result
// limit, the set loop of section 4 (K_m, Q_m, skipped sets) and the four
// modes; INFER_WINDOW: the window's slice of INFER's items, empty when it
// selects none; INFO; STATUS; RESET_STATUS; unknown types; busy descriptors)
// predicts every response word. STATUS words are checked
// against the bench's own event counts (exact for the engine's counters,
// bounded for the ev_* inputs driven randomly). The bank contents are
// compared after every upload.
#include <deque>
#include <map>
#include <vector>

#include "Vproto_engine.h"
#include "proto_util.h"
#include "tb_util.h"

#ifndef FEATURES
#define FEATURES 10
#endif
#ifndef BITS
#define BITS 12
#endif
#ifndef LANES
#define LANES 4
#endif
#ifndef DEPTH
#define DEPTH 7
#endif
#ifndef NT
#define NT 3
#endif
#ifndef NC
#define NC 3
#endif
#ifndef KMAX
#define KMAX 200
#endif
#ifndef INIT_LOADED
#define INIT_LOADED 0
#endif
#ifndef INIT_CRC
#define INIT_CRC 0
#endif
#ifndef UART_BAUD
#define UART_BAUD 3000000
#endif
#ifndef GEN_VERSION
#define GEN_VERSION 0x000100
#endif
#ifndef CLIP_T
#define CLIP_T 10
#endif
#ifndef SETS_MAX
#define SETS_MAX 8
#endif
#ifndef ETH_COUNTERS
#define ETH_COUNTERS 1
#endif
#ifndef STATUS_ALL
#define STATUS_ALL 1
#endif

// STATUS word i is kept by the engine (the others read 0): counters 4 and 5
// never, 6 and 7 with ETH_COUNTERS, 0, 8, 9, 10 with STATUS_ALL
static bool counter_kept(int i) {
    if (i == 4 || i == 5) return false;
    if (i == 6 || i == 7) return ETH_COUNTERS != 0;
    if (i == 0 || (i >= 8 && i <= 10)) return STATUS_ALL != 0;
    return true;
}

static const int FB = (FEATURES + 7) / 8;
static const uint32_t TOTAL = LANES * DEPTH;
static const int NCNT = 13;

// U = lcm(1..NC) and KV, the largest K whose votes fit in a u16 (mode 2)
static uint64_t vote_unit() {
    uint64_t u = 1;
    for (uint64_t i = 2; i <= NC; i++) {
        uint64_t a = u, b = i;
        while (b) { uint64_t t = a % b; a = b; b = t; }
        u = u / a * i;
    }
    return u;
}
static const uint32_t KV = (uint32_t)(65535 / vote_unit());

struct Cmd {
    Frame f;
    bool busy = false;
    int link = 0;
    uint64_t mac = 0;
};

struct Resp {
    uint8_t type;
    uint16_t seq;
    int link;
    uint64_t mac;
    std::vector<uint32_t> words;
    bool status = false;      // STATUS: words checked against bounds
    int ib = 4;               // INFER result item bytes: 4, 2 (mode 2 u16, mode 3 i16) or 1 (mode 3 i8)
};

static uint64_t mix64(uint64_t x) {
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdull;
    x ^= x >> 33;
    x *= 0xc4ceb9fe1a85ec53ull;
    x ^= x >> 33;
    return x;
}

// ------------------------------------------------------------ reference model
struct Model {
    bool loaded = INIT_LOADED;
    bool active = false;          // a load is in progress
    uint32_t next = INIT_LOADED ? TOTAL : 0;
    uint32_t crc = INIT_LOADED ? ~(uint32_t)INIT_CRC : 0xFFFFFFFFu;
    std::vector<uint32_t> bank;   // word w = addr*LANES + lane, as written by LOAD
    uint64_t cnt[NCNT] = {};      // engine-internal counters (0, 9, 10; 4 and 5 stay 0)
    Model() : bank(TOTAL, 0) {}

    static uint32_t core_word(uint64_t feat, int k, uint32_t seed, int mode, int idx, uint64_t bh) {
        uint32_t h = (uint32_t)mix64(feat * 0x9E3779B97F4A7C15ull ^ (uint64_t)k << 40 ^ (uint64_t)seed << 8 ^
                                     (uint64_t)mode << 60 ^ (uint64_t)idx << 20 ^ bh);
        // samples: mostly class sums in [-2T, 2T] (mode 3 clips them), some
        // arbitrary 32-bit words
        if (mode == 0 && ((h >> 28) & 3) != 0) return (uint32_t)((int32_t)((h & 0xFFFF) % (4 * CLIP_T + 1)) - 2 * CLIP_T);
        return h;
    }
    static uint32_t clip(uint32_t w) {
        int64_t v = (int32_t)w;
        return (uint32_t)(int32_t)std::max<int64_t>(-CLIP_T, std::min<int64_t>(CLIP_T, v));
    }
    uint64_t bank_hash() const {
        uint64_t h = 0;
        for (uint32_t i = 0; i < TOTAL; i++) h = mix64(h ^ (bank[i] & ((1u << BITS) - 1)) ^ (uint64_t)i << 32);
        return h;
    }
    Resp error(const Cmd& c, uint8_t code, uint32_t detail) {
        cnt[10]++;
        return {0xE0, c.f.seq, c.link, c.mac, {(uint32_t)code | (uint32_t)c.f.type << 8, detail}};
    }
    // Executes a command (protocol version 5: the board checks what
    // protects it; the host checks the rest); INFER results use the core
    // model with the bank as it is now.
    Resp exec(const Cmd& c) {
        const auto& p = c.f.payload;
        size_t len = p.size();
        Resp ok{(uint8_t)(c.f.type | 0x80), c.f.seq, c.link, c.mac, {}};
        if (c.busy) return error(c, 8, 0);
        cnt[0]++;
        switch (c.f.type) {
        case 0x01:
        case 0x20:
        case 0x21:
            if (len != 0) return error(c, 3, 0);
            if (c.f.type == 0x20) ok.status = true;
            if (c.f.type == 0x21)
                for (auto& x : cnt) x = 0;
            return ok;  // INFO / STATUS words are filled in by the caller
        case 0x02: {
            if (len != 4) return error(c, 3, 0);
            loaded = false;  // W is not checked
            active = true;
            next = 0;
            crc = 0xFFFFFFFFu;
            return ok;  // version 5: an empty answer
        }
        case 0x03: {
            if (len < 6) return error(c, 3, 0);
            uint32_t off = get_u32(p, 0);
            uint32_t n = (uint32_t)(len - 4) / 2;  // an odd last byte is ignored
            if (!active) return error(c, 9, next);
            if (off != next) return error(c, 6, next);
            bool over = false;
            for (uint32_t i = 0; i < n; i++) {
                if (next == TOTAL) {
                    over = true;  // past the bank: not written, not in the CRC
                    continue;
                }
                crc = ~g_crc.of(&p[4 + 2 * i], 2, crc);  // running (uncomplemented) state
                bank[next++] = p[4 + 2 * i] | p[5 + 2 * i] << 8;
            }
            if (over) return error(c, 3, 0);
            ok.words = {next};  // version 5: the next offset (off + n)
            return ok;
        }
        case 0x04: {
            if (len != 8) return error(c, 3, 0);
            uint32_t cr = get_u32(p, 4);  // W is not checked
            if (next != TOTAL) return error(c, 6, next);
            if (cr != ~crc) return error(c, 7, 0);  // version 5: detail 0
            loaded = true;
            active = false;
            return ok;  // version 5: an empty answer
        }
        case 0x11: {
            // INFER_WINDOW: INFER's header, u16 first, u16 count, the
            // vectors; INFER's answer cut to items [first, first+count)
            if (len < 14) return error(c, 3, 0);
            cnt[0]--;  // counted again by exec_infer
            uint64_t first = p[10] | p[11] << 8, count = p[12] | p[13] << 8;
            Cmd ic = c;
            ic.f.type = 0x10;
            ic.f.payload.assign(p.begin(), p.begin() + 10);
            ic.f.payload.insert(ic.f.payload.end(), p.begin() + 14, p.end());
            Resp r = exec_infer(ic);
            r.type = r.type == 0xE0 ? 0xE0 : 0x91;
            if (r.type == 0xE0) {
                r.words[0] = (r.words[0] & 0xFF) | 0x11u << 8;  // the ERROR names INFER_WINDOW
                return r;
            }
            uint64_t n = r.words.size();
            uint64_t lo = std::min(first, n), hi = std::min(first + count, n);
            r.words = std::vector<uint32_t>(r.words.begin() + lo, r.words.begin() + hi);
            return r;
        }
        case 0x10:
            cnt[0]--;  // counted again by exec_infer
            return exec_infer(c);
        default:
            return error(c, 1, 0);
        }
    }
    // INFER (cnt[0] counted here)
    Resp exec_infer(const Cmd& c) {
        const auto& p = c.f.payload;
        size_t len = p.size();
        Resp ok{(uint8_t)(c.f.type | 0x80), c.f.seq, c.link, c.mac, {}};
        cnt[0]++;
        {
            if (len < 10) return error(c, 3, 0);
            int mode = p[0], sets = p[1];
            int k = p[2] | p[3] << 8;
            uint32_t seed = get_u32(p, 4);
            int M = sets ? sets : 1;
            if (mode > 3 || sets > SETS_MAX) return error(c, 3, 0);
            if (k == 0 || k > KMAX) return error(c, 5, 0);
            if (!loaded) return error(c, 4, 0);
            // the count field is not read: one query per whole M*FB bytes
            int count = (int)(len - 10) / (M * FB);
            if (count == 0) return error(c, 3, 0);
            int ib = mode == 2 ? ((uint32_t)k <= KV ? 2 : 4) : mode == 3 ? (CLIP_T <= 127 ? 1 : 2) : 4;
            ok.ib = ib;
            uint32_t mask = ib == 4 ? 0xFFFFFFFFu : (1u << (8 * ib)) - 1;
            uint64_t bh = bank_hash();
            for (int q = 0; q < count; q++) {
                std::vector<uint32_t> acc(NC + 2 * NT, 0);
                for (int m = 0; m < M; m++) {
                    int km = k / M + (m < k % M ? 1 : 0);
                    if (km == 0) continue;
                    uint32_t qs = seed + (uint32_t)q + (uint32_t)m * 0x9E3779B9u;
                    int v = q * M + m;
                    uint64_t feat = 0;
                    for (int i = 0; i < FB; i++) feat |= (uint64_t)p[10 + v * FB + i] << (8 * i);
                    feat &= (FEATURES >= 64) ? ~0ull : ((1ull << FEATURES) - 1);
                    cnt[9]++;
                    if (mode == 0 || mode == 3) {
                        for (int i = 0; i < km * NT; i++) {
                            uint32_t w = core_word(feat, km, qs, 0, i, bh);
                            ok.words.push_back((mode == 3 ? clip(w) : w) & mask);
                        }
                    } else {
                        for (int i = 0; i < NC + 2 * NT; i++) acc[i] += core_word(feat, km, qs, 1, i, bh);
                    }
                }
                if (mode == 1 || mode == 2)
                    for (int i = 0; i < (mode == 2 ? NC : NC + 2 * NT); i++) ok.words.push_back(acc[i] & mask);
            }
            return ok;
        }
    }
};

// ------------------------------------------------------------ bench
struct Bench {
    Tb<Vproto_engine> tb;
    std::mt19937_64 rng;
    Model ref;
    // source
    std::deque<Cmd> cmds;
    size_t spos = 0;              // payload bytes of cmds.front() already read
    double sv_p = 1.0;
    // core model
    std::vector<uint32_t> bank;   // [lane][addr] flattened as addr*LANES + lane
    bool core_busy = false;
    std::deque<uint32_t> res_q;   // result words of the current request
    int res_wait = 0;
    bool res_hold = false;        // a word is offered
    uint32_t res_word = 0;
    bool res_lastw = false;
    bool res_more = false;        // the current request had req_more (no res_last)
    bool chain = false;           // the last accepted request had req_more
    int chain_mode = -1;
    std::vector<uint32_t> acc;    // stats of the chained runs
    int idle_wait = 0;            // a stats run with req_more: busy for a while, no words
    double core_gap_p = 0.0;
    // sink
    std::deque<Resp> expect;
    std::vector<uint32_t> got;
    std::vector<uint8_t> gotb;
    int frag_bytes = 0;
    int emitting = 0;
    bool side_lock = false;
    uint8_t s_type = 0;
    uint16_t s_seq = 0;
    int s_link = 0;
    uint64_t s_mac = 0;
    double ready_p = 1.0;
    int emit_max = 40;
    // events driven into ev_*
    uint64_t ev[NCNT] = {};
    double ev_p = 0.0;
    // line rate: the fastest events the board makes (stat_counters' pending
    // counts are sized for them): a bit time every 8 clocks (CLKS_PER_BIT
    // >= 8), a UART byte every 80 clocks with, in that clock, any of the
    // line and frame errors (both sources of each), a frame sent and the
    // Ethernet events
    bool line = false;
    uint64_t now = 100;
    uint64_t last_ev[13] = {};
    uint64_t responses = 0, errors_seen = 0;
    uint64_t ev_at_status[NCNT] = {};

    Bench(const TbOpts& o) : tb("proto_engine", o), rng(o.seed), bank(TOTAL, 0) {}
    bool coin(double p) { return std::uniform_real_distribution<double>(0, 1)(rng) < p; }
    int rnd(int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); }

    uint64_t bank_hash() const {
        uint64_t h = 0;
        for (uint32_t i = 0; i < TOTAL; i++) h = mix64(h ^ bank[i] ^ (uint64_t)i << 32);
        return h;
    }

    void cycle(bool rst = false) {
        auto* m = tb.m.get();
        // source (desc offered until taken; payload bytes with gaps)
        const Cmd* c = cmds.empty() ? nullptr : &cmds.front();
        m->rst = rst;
        m->s_desc_valid = c != nullptr;
        m->s_desc_type = c ? c->f.type : 0;
        m->s_desc_seq = c ? c->f.seq : 0;
        m->s_desc_len = c ? c->f.payload.size() : 0;
        m->s_desc_busy = c ? c->busy : 0;
        m->s_desc_link = c ? c->link : 0;
        m->s_desc_mac = c ? c->mac : 0;
        bool bv = c && !c->busy && spos < c->f.payload.size() && coin(sv_p);
        m->s_axis_tvalid = bv;
        m->s_axis_tdata = bv ? c->f.payload[spos] : 0;
        // core
        if (!res_hold && !res_q.empty()) {
            if (res_wait > 0) {
                res_wait--;
            } else if (!coin(core_gap_p)) {
                res_hold = true;
                res_word = res_q.front();
                res_lastw = res_q.size() == 1 && !res_more;
            }
        }
        if (core_busy && res_q.empty() && !res_hold) {
            if (idle_wait > 0) idle_wait--;
            else core_busy = false;
        }
        m->req_ready = !core_busy;
        m->res_valid = res_hold;
        m->res_data = res_word;
        m->res_last = res_lastw;
        m->res_error = 0;
        // sink
        m->r_axis_tready = emitting == 0 && coin(ready_p);
        // events
        // sources 0..6: ev_crc_error, ev_framing_error, ev_overrun bits; 7
        // ev_fcs_error, 8 ev_eth_drop, 9 ev_frame_sent, 10, 11 ev_uart_byte
        // (0..2 per clock), 12 ev_bit_tick. Each fires at random (ev_p)
        // but never faster than the board's line makes it (the rates the
        // engine's counters are sized for): a bit time every 8 clocks, the
        // others once per UART byte, 80 clocks
        uint32_t e[13] = {};
        bool lbyte = line && now % 80 == 3;
        for (int i = 0; i < 13; i++) {
            uint64_t gap = i == 12 ? 8 : 80;
            bool fire = line ? (i == 12 ? now % 8 == 5 : i == 10 ? lbyte : i != 11 && lbyte && coin(0.6)) : coin(ev_p);
            e[i] = fire && now >= last_ev[i] + gap;
            if (e[i]) last_ev[i] = now;
        }
        m->ev_crc_error = e[0] | e[1] << 1;
        m->ev_framing_error = e[2] | e[3] << 1 | e[4] << 2;
        m->ev_overrun = e[5] | e[6] << 1;
        m->ev_fcs_error = e[7];
        m->ev_eth_drop = e[8];
        m->ev_frame_sent = e[9];
        uint32_t ub = e[10] + e[11];
        m->ev_uart_byte = ub;
        m->ev_bit_tick = e[12];
        now++;
        tb.settle();
        m->info_data = 0xC0DE0000u | m->info_addr;
        tb.settle();

        if (!rst) {
            ev[1] += e[0] + e[1];
            ev[2] += e[2] + e[3] + e[4];
            ev[3] += e[5] + e[6];
            ev[6] += e[7];
            ev[7] += m->ev_eth_drop;
            ev[8] += m->ev_frame_sent;
            ev[11] += ub;
            ev[12] += m->ev_bit_tick;
        }

        // bank writes: only while the core is idle
        if (m->bank_wr_en && !rst) {
            CHECK(!core_busy, "bank write during a request");
            CHECK(m->bank_wr_lane < LANES && m->bank_wr_addr < DEPTH, "bank write out of range");
            if (m->bank_wr_lane < LANES && m->bank_wr_addr < DEPTH)
                bank[m->bank_wr_addr * LANES + m->bank_wr_lane] = m->bank_wr_data;
        }
        // request accepted
        if (m->req_valid && m->req_ready && !rst) {
            core_busy = true;
            int k = m->req_k, mode = m->req_stats;
            CHECK(k >= 1 && k <= KMAX, "core request with K = %d", k);
            if (chain) CHECK_EQ(mode, chain_mode, "chained runs in one mode");
            uint64_t bh = bank_hash();
            res_more = m->req_more;
            if (mode) {
                if (!chain) acc.assign(NC + 2 * NT, 0);
                for (int i = 0; i < NC + 2 * NT; i++)
                    acc[i] += Model::core_word((uint64_t)m->req_features, k, m->req_seed, 1, i, bh);
                if (!res_more) res_q.assign(acc.begin(), acc.end());
                idle_wait = rnd(1, 40);
            } else {
                for (int i = 0; i < k * NT; i++)
                    res_q.push_back(Model::core_word((uint64_t)m->req_features, k, m->req_seed, 0, i, bh));
            }
            chain = res_more;
            chain_mode = mode;
            res_wait = rnd(0, 30);
        }
        if (res_hold && m->res_ready && !rst) {
            res_hold = false;
            res_q.pop_front();
            if (res_q.empty()) core_busy = false;  // ready again after the last word
        }

        // sink: words and side band (stable from a response's first byte to
        // its last, which proto_tx latches per fragment)
        if (side_lock) {
            CHECK_EQ(m->r_type, s_type, "r_type changed inside a response");
            CHECK_EQ(m->r_seq, s_seq, "r_seq changed inside a response");
            CHECK_EQ(m->r_link, s_link, "r_link changed inside a response");
            CHECK_EQ(m->r_mac, s_mac, "r_mac changed inside a response");
        }
        if (m->r_axis_tvalid && m->r_axis_tready && !rst) {
            if (!side_lock) {
                side_lock = true;
                s_type = m->r_type;
                s_seq = m->r_seq;
                s_link = m->r_link;
                s_mac = m->r_mac;
            }
            if (!m->r_axis_tuser) {
                gotb.push_back(m->r_axis_tdata);
                frag_bytes++;
            }
            if (m->r_axis_tlast || frag_bytes == 1024) {
                emitting = rnd(1, emit_max);
                frag_bytes = 0;
            }
            if (m->r_axis_tlast) {
                int ib = expect.empty() ? 4 : expect.front().ib;
                CHECK_EQ(gotb.size() % ib, 0, "response length is a whole number of items");
                got.clear();
                for (size_t i = 0; i + ib <= gotb.size(); i += ib) {
                    uint32_t w = 0;
                    for (int j = ib - 1; j >= 0; j--) w = w << 8 | gotb[i + j];
                    got.push_back(w);
                }
                gotb.clear();
                finish_response(m->r_axis_tuser);
                side_lock = false;
            }
        } else if (emitting > 0) {
            --emitting;
        }

        if (bv && m->s_axis_tready && !rst) spos++;
        if (c && m->s_desc_ready && !rst) {
            CHECK(c->busy || spos == c->f.payload.size(), "descriptor taken before its payload was read");
            cmds.pop_front();
            spos = 0;
        }
        tb.tick();
    }

    void finish_response(bool empty_flag) {
        responses++;
        CHECK(!expect.empty(), "response without a command");
        if (expect.empty()) {
            got.clear();
            return;
        }
        Resp& r = expect.front();
        CHECK_EQ(s_type, r.type, "response type");
        CHECK_EQ(s_seq, r.seq, "response seq");
        CHECK_EQ(s_link, r.link, "response link");
        CHECK_EQ(s_mac, r.mac, "response mac");
        CHECK_EQ(empty_flag, r.words.empty() && !r.status, "empty response flag");
        if (r.type == 0xE0) errors_seen++;
        if (r.status) {
            CHECK_EQ(got.size(), NCNT, "STATUS words");
            for (int i = 0; i < NCNT && i < (int)got.size(); i++) {
                uint64_t lo = ev_at_status[i] + ref.cnt[i];
                uint64_t hi = ev[i] + ref.cnt[i];
                if (!counter_kept(i)) CHECK_EQ(got[i], 0u, "STATUS word not kept");
                else if (i == 0 || i == 9 || i == 10) CHECK_EQ(got[i], ref.cnt[i], "engine counter");
                else CHECK(got[i] >= lo && got[i] <= hi, "STATUS word %d: %u not in [%llu, %llu]", i, got[i],
                           (unsigned long long)lo, (unsigned long long)hi);
            }
        } else {
            CHECK_EQ(got.size(), r.words.size(), "response words");
            for (size_t i = 0; i < got.size() && i < r.words.size(); i++) {
                if (got[i] != r.words[i]) {
                    CHECK_EQ(got[i], r.words[i], "response word");
                    std::fprintf(stderr, "  (type 0x%02x word %zu)\n", r.type, i);
                    break;
                }
            }
        }
        expect.pop_front();
        got.clear();
    }

    // Queue a command, predict its response, run until it is answered.
    void run(const Cmd& c) {
        double evp = ev_p;
        if (c.f.type == 0x21) ev_p = 0;  // no events around the clear
        cmds.push_back(c);
        if (!c.busy && (c.f.type == 0x20) && c.f.payload.empty())
            for (int i = 0; i < NCNT; i++) ev_at_status[i] = ev[i];
        Resp r = ref.exec(c);
        if (r.type == 0x81 && !c.busy) {
            uint32_t w[20] = {0x424D5450u, 6, GEN_VERSION};
            for (int i = 3; i < 15; i++) w[i] = 0xC0DE0000u | (i - 2);
            w[15] = ref.loaded;
            w[16] = ref.loaded ? ~ref.crc : 0;
            w[17] = (ETH_COUNTERS && c.link) ? 0 : UART_BAUD;   // one link without Ethernet
            w[18] = (ETH_COUNTERS && c.link) ? 1 : 3;
            w[19] = SETS_MAX;
            r.words.assign(w, w + 20);
        }
        expect.push_back(r);
        long guard = 0;
        // the next command is queued while the sink may still be "sending"
        // this response: the engine executes it meanwhile
        while ((!expect.empty() || !cmds.empty()) && guard++ < 2000000) cycle();
        CHECK(expect.empty() && cmds.empty(), "command 0x%02x never answered", c.f.type);
        expect.clear();
        cmds.clear();
        if (c.f.type == 0x21 && !c.busy && c.f.payload.empty())
            for (auto& x : ev) x = 0;
        ev_p = evp;
    }

    Cmd cmd(uint8_t type, std::vector<uint8_t> p) {
        Cmd c;
        c.f.type = type;
        c.f.seq = (uint16_t)rnd(0, 65535);
        c.f.payload = std::move(p);
        c.link = rnd(0, 1);
        c.mac = c.link ? rng() & 0xFFFFFFFFFFFFull : 0;
        return c;
    }
    std::vector<uint8_t> u32s(std::initializer_list<uint32_t> l) {
        std::vector<uint8_t> v;
        for (uint32_t x : l) put_u32(v, x);
        return v;
    }
    std::vector<uint8_t> data(uint32_t off, int n, const std::vector<uint32_t>& words) {
        std::vector<uint8_t> v;
        put_u32(v, off);
        for (int i = 0; i < n; i++) put_u16(v, (uint16_t)words[(off + i) % words.size()]);
        return v;
    }
    std::vector<uint8_t> infer(int mode, int k, uint32_t seed, int count, int extra = 0, int sets = 0) {
        std::vector<uint8_t> v;
        v.push_back((uint8_t)mode);
        v.push_back((uint8_t)sets);
        put_u16(v, (uint16_t)k);
        put_u32(v, seed);
        put_u16(v, (uint16_t)count);
        int M = sets ? sets : 1;
        for (int i = 0; i < count * M * FB + extra && v.size() < 1024; i++) v.push_back((uint8_t)rnd(0, 255));
        return v;
    }
    uint32_t crc_of(const std::vector<uint32_t>& words) {
        std::vector<uint8_t> b;
        for (uint32_t w : words) put_u16(b, (uint16_t)w);
        return g_crc.of(b);
    }
    // full upload in random chunk sizes with retransmissions; checks the bank
    void upload(const std::vector<uint32_t>& words, bool commit = true) {
        run(cmd(0x02, u32s({TOTAL})));
        uint32_t off = 0;
        while (off < TOTAL) {
            int n = std::min<int>(rnd(1, 12), TOTAL - off);
            run(cmd(0x03, data(off, n, words)));
            if (coin(0.2)) run(cmd(0x03, data(off, n, words)));  // retransmission
            off += n;
        }
        if (commit) run(cmd(0x04, u32s({TOTAL, crc_of(words)})));
        for (uint32_t i = 0; i < TOTAL; i++)
            CHECK_EQ(bank[i] , words[i] & ((1u << BITS) - 1), "bank word after upload");
    }
};

int main(int argc, char** argv) {
    Verilated::commandArgs(argc, argv);
    TbOpts o = tb_parse(argc, argv);
    Bench b(o);
    for (int i = 0; i < 3; i++) b.cycle(true);
    std::vector<uint32_t> model1(TOTAL), model2(TOTAL);
    for (auto& w : model1) w = (uint32_t)b.rnd(0, 65535);
    for (auto& w : model2) w = (uint32_t)b.rnd(0, (1 << BITS) - 1);

    for (int round = 0; round < 4; round++) {
        b.sv_p = (round & 1) ? 0.5 : 1.0;
        b.ready_p = (round & 2) ? 0.4 : 1.0;
        b.core_gap_p = (round & 1) ? 0.3 : 0.0;
        b.ev_p = round == 0 ? 0.0 : 0.002;

        b.run(b.cmd(0x01, {}));                         // INFO
        b.run(b.cmd(0x20, {}));                         // STATUS
        if (!INIT_LOADED || round > 0)
            b.run(b.cmd(0x10, b.infer(0, 1, 7, 1)));    // INFER: model state as is
        b.upload(round & 1 ? model2 : model1);
        b.run(b.cmd(0x01, {}));
        b.run(b.cmd(0x04, b.u32s({TOTAL, b.crc_of(round & 1 ? model2 : model1)})));  // repeated commit

        // INFER, all modes, corner K (mode 2: both sides of KV), several vectors
        for (int i = 0; i < 18; i++) {
            int mode = i < 4 ? 2 : b.rnd(0, 2);
            int k = i == 0 ? 1 : i == 1 ? KMAX : i == 2 ? std::max(1, std::min<int>(KMAX, KV)) :
                    i == 3 ? std::min<int>(KMAX, KV + 1) : b.rnd(1, std::min(KMAX, 8));
            int count = b.rnd(1, 6);
            b.run(b.cmd(0x10, b.infer(mode, k, (uint32_t)b.rng(), count)));
        }
        // sets: M = 1..SETS_MAX (and 0), K below, at and above M, all modes
        for (int i = 0; i < 24; i++) {
            int sets = i < SETS_MAX + 1 ? i : b.rnd(0, SETS_MAX);
            int M = sets ? sets : 1;
            int mode = i % 4;
            int k = b.coin(0.5) ? b.rnd(1, std::min(KMAX, M + 1)) : b.rnd(1, std::min(KMAX, 3 * M + 4));
            int cmax = std::max(1, std::min(5, 1014 / (M * FB)));
            b.run(b.cmd(0x10, b.infer(mode, k, (uint32_t)b.rng(), b.rnd(1, cmax), 0, sets)));
        }
        // INFER_WINDOW: windows inside, across and past the answer, empty
        // ones, in every mode, with sets; then its errors
        for (int i = 0; i < 40; i++) {
            int sets = b.rnd(0, SETS_MAX);
            int M = sets ? sets : 1;
            int mode = i % 4;
            int k = b.rnd(1, std::min(KMAX, 3 * M + 4));
            int count = b.rnd(1, std::max(1, std::min(4, 1006 / (M * FB))));
            auto q = b.infer(mode, k, (uint32_t)b.rng(), count, 0, sets);
            uint32_t items = (uint32_t)count * (mode == 1 ? NC + 2 * NT : mode == 2 ? NC : (uint32_t)k * NT);
            uint32_t first = i == 0 ? 0 : i == 1 ? items : i == 2 ? items - 1 : i == 3 ? 0xFFF0u : (uint32_t)b.rnd(0, (int)items + 2);
            uint32_t n = i == 0 ? items : i == 1 ? 1 : i == 2 ? 5 : i == 3 ? 0x20 : i == 4 ? 0 : i == 5 ? 0xFFFFu : (uint32_t)b.rnd(0, (int)items + 2);
            std::vector<uint8_t> p(q.begin(), q.begin() + 10);
            put_u16(p, (uint16_t)first);
            put_u16(p, (uint16_t)n);
            p.insert(p.end(), q.begin() + 10, q.end());
            b.run(b.cmd(0x11, p));
        }
        {
            auto q = b.infer(1, 1, 1, 1);
            std::vector<uint8_t> p(q.begin(), q.begin() + 10);
            put_u16(p, 1);
            put_u16(p, 2);
            auto p13 = std::vector<uint8_t>(p.begin(), p.begin() + 13);
            b.run(b.cmd(0x11, p13));                     // shorter than 14: ERROR 3
            b.run(b.cmd(0x11, p));                       // no whole vector: ERROR 3
            p[2] = p[3] = 0;
            p.insert(p.end(), q.begin() + 10, q.end());
            b.run(b.cmd(0x11, p));                       // K = 0: ERROR 5
        }
        // mode 3 at the corners of K
        b.run(b.cmd(0x10, b.infer(3, KMAX, (uint32_t)b.rng(), 2)));
        b.run(b.cmd(0x10, b.infer(3, 1, (uint32_t)b.rng(), 3, 0, SETS_MAX)));
        // INFER errors: mode, sets, K, count, length, too many results
        b.run(b.cmd(0x10, b.infer(4, 1, 1, 1)));
        b.run(b.cmd(0x10, b.infer(0xFF, 1, 1, 1)));
        b.run(b.cmd(0x10, b.infer(0, 1, 1, 1, 0, SETS_MAX + 1)));
        b.run(b.cmd(0x10, b.infer(0, 1, 1, 0, 0, SETS_MAX)));        // count 0: 10 + M*FB
        b.run(b.cmd(0x10, b.infer(1, 2, 1, 2, 1, SETS_MAX)));        // length
        b.run(b.cmd(0x10, b.infer(3, 2, 1, 2, -FB, SETS_MAX)));
        b.run(b.cmd(0x10, b.infer(2, 0, 1, 1, 0, SETS_MAX)));        // K = 0
        b.run(b.cmd(0x10, b.infer(2, KMAX + 1, 1, 1)));
        {
            auto p = b.infer(0, 1, 1, 1);
            p[1] = 7;
            b.run(b.cmd(0x10, p));
        }
        b.run(b.cmd(0x10, b.infer(0, 0, 1, 1)));
        b.run(b.cmd(0x10, b.infer(0, KMAX + 1, 1, 1)));
        b.run(b.cmd(0x10, b.infer(1, 1, 1, 0)));
        b.run(b.cmd(0x10, b.infer(0, 1, 1, 2, 1)));
        b.run(b.cmd(0x10, b.infer(0, 1, 1, 3, -1)));
        b.run(b.cmd(0x10, {1, 0, 1}));
        // too many result bytes: exactly 131072 is allowed, one query more
        // is not (modes 0 and 3, one set and several)
        for (int mode : {0, 3}) {
            int ib = mode == 0 ? 4 : CLIP_T <= 127 ? 1 : 2;
            for (int sets : {0, 2, SETS_MAX}) {
                int M = sets ? sets : 1;
                for (int k = KMAX; k >= 1; k--) {
                    int bpq = k * NT * ib;
                    int count = 131072 / bpq;
                    if (count * bpq != 131072 || 10 + (count + 1) * M * FB > 1024) continue;
                    if (round == 0) {
                        b.run(b.cmd(0x10, b.infer(mode, k, 3, count, 0, sets)));
                        b.run(b.cmd(0x10, b.infer(mode, k, 3, count + 1, 0, sets)));
                    }
                    break;
                }
                int k = KMAX, count = 131072 / (k * NT * ib) + 1;
                if ((size_t)(10 + count * M * FB) <= 1024) b.run(b.cmd(0x10, b.infer(mode, k, 5, count, 0, sets)));
                count--;
                if (count >= 1 && (size_t)(10 + count * M * FB) <= 1024)
                    b.run(b.cmd(0x10, b.infer(mode, k, 5, count, 0, sets)));
            }
        }
        // LOAD errors: bad W, bad lengths, gap, overlap, out of range, commit mismatch
        b.run(b.cmd(0x02, b.u32s({TOTAL + 1})));
        b.run(b.cmd(0x02, {1, 2, 3}));
        b.run(b.cmd(0x03, {0, 0, 0, 0, 1}));
        b.run(b.cmd(0x03, {0, 0, 0}));
        b.run(b.cmd(0x04, {0, 0}));
        b.run(b.cmd(0x02, b.u32s({TOTAL})));            // invalidates the model
        b.run(b.cmd(0x10, b.infer(0, 1, 1, 1)));        // no model: ERROR 4
        b.run(b.cmd(0x03, b.data(2, 3, model1)));       // gap
        b.run(b.cmd(0x03, b.data(0, 5, model1)));
        b.run(b.cmd(0x03, b.data(3, 4, model1)));       // partial overlap
        b.run(b.cmd(0x03, b.data(1, 2, model1)));       // retransmission inside
        b.run(b.cmd(0x03, b.data(0xFFFFFFFFu, 2, model1)));  // offset overflow
        b.run(b.cmd(0x04, b.u32s({5, b.crc_of(model1)})));   // incomplete commit
        b.run(b.cmd(0x03, b.data(5, TOTAL - 5 + 1, model1)));  // beyond the bank
        b.run(b.cmd(0x03, b.data(5, TOTAL - 5, model1)));
        b.run(b.cmd(0x03, b.data(TOTAL, 1, model1)));   // nothing left
        b.run(b.cmd(0x04, b.u32s({TOTAL, b.crc_of(model1) ^ 1})));  // CRC mismatch
        b.run(b.cmd(0x04, b.u32s({TOTAL, b.crc_of(model1)})));
        b.run(b.cmd(0x03, b.data(0, 3, model1)));       // after the commit: retransmission
        b.run(b.cmd(0x03, b.data(TOTAL - 1, 2, model1)));  // no load in progress: ERROR 9
        b.run(b.cmd(0x04, b.u32s({TOTAL, b.crc_of(model1)})));  // repeated commit
        b.run(b.cmd(0x04, b.u32s({TOTAL, b.crc_of(model1) ^ 4})));  // valid model, other CRC: ERROR 7
        b.run(b.cmd(0x04, b.u32s({TOTAL - 1, b.crc_of(model1)})));  // valid model, other W: ERROR 7
        // other commands
        b.run(b.cmd(0x7F, {1, 2, 3}));                  // unknown
        b.run(b.cmd(0x01, {9}));                        // INFO with payload
        Cmd busy = b.cmd(0x10, {});
        busy.busy = true;
        busy.f.payload.resize(37);
        b.run(busy);                                    // busy descriptor
        b.run(b.cmd(0x20, {}));                         // STATUS
        if (round == 2) {
            b.run(b.cmd(0x21, {}));                     // RESET_STATUS
            b.run(b.cmd(0x20, {}));
        }
    }
    // the counters at line rate: commands run while the events come as
    // fast as the board makes them, then a STATUS with the events off must
    // count every one (its bounds meet)
    b.ev_p = 0.0;
    b.line = true;
    for (int i = 0; i < 6; i++) {
        b.run(b.cmd(0x20, {}));
        b.run(b.cmd(0x10, b.infer(i % 4, b.rnd(1, std::min(KMAX, 8)), (uint32_t)b.rng(), b.rnd(1, 4))));
        b.run(b.cmd(0x01, {}));
        for (int k = 0; k < 3000; k++) b.cycle();
    }
    b.line = false;
    for (int k = 0; k < 10; k++) b.cycle();
    b.run(b.cmd(0x20, {}));
    for (int i = 0; i < NCNT; i++)
        if (counter_kept(i) && i != 0 && i != 9 && i != 10) CHECK(b.ev[i] > 0, "line-rate counter %d saw no event", i);
    // a reset in the middle of an INFER, then normal operation
    b.cmds.push_back(b.cmd(0x10, b.infer(0, KMAX, 9, 20)));
    for (int i = 0; i < 500; i++) b.cycle();
    for (int i = 0; i < 2; i++) b.cycle(true);
    b.cmds.clear();
    b.spos = 0;
    b.res_q.clear();
    b.res_hold = false;
    b.core_busy = false;
    b.chain = false;
    b.res_more = false;
    b.idle_wait = 0;
    b.got.clear();
    b.gotb.clear();
    b.frag_bytes = 0;
    b.emitting = 0;
    b.side_lock = false;
    b.expect.clear();
    for (auto& x : b.ref.cnt) x = 0;
    for (auto& x : b.ev) x = 0;
    b.ref.cnt[9] = 0;
    b.run(b.cmd(0x20, {}));
    b.run(b.cmd(0x10, b.infer(1, 3, 9, 2)));
    std::printf("proto_engine: %llu responses, %llu errors\n", (unsigned long long)b.responses,
                (unsigned long long)b.errors_seen);
    return tb_finish("proto_engine");
}
