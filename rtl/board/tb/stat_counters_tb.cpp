// stat_counters_tb.cpp - Verilator bench for rtl/board/stat_counters.v
//
// Build (--public-flat-rw lets the bench preset counters near 2^32):
//   verilator --cc --exe --build -Wall --public-flat-rw -CFLAGS -I../../lib/tb \
//     stat_counters.v tb/stat_counters_tb.cpp
//
// Random increments (0..3 per counter per clock, in bursts and sparse,
// never more than the documented 2^PEND_W-1 events per counter in any
// 4*NCNT consecutive clocks; the highest rate runs into that limit),
// random clear pulses and random reads: rd_req held with rd_addr =
// {counter, byte}, the value's 4 bytes taken in a random order, each in a
// clock with rd_valid (a pulse once a sweep), some pulses let pass (the
// engine waits for proto_tx); rd_req held 0..5 clocks more, every further
// pulse showing the same byte. rd_valid must come only while rd_req is
// high, within 8*NCNT+4 clocks of rd_req rising and then every 4*NCNT
// clocks. A read must return a value between the model's count when the
// request was raised and its count at the first pulse (the snapshot lies
// in between); after a quiet period every read must be exact (all modulo
// 2^32). Wrapping: counters preset just below 2^32-1 through the RAM must
// wrap around to small values. Reset clears everything.
#include <deque>
#include <vector>

#include "Vstat_counters.h"
#include "Vstat_counters___024root.h"
#include "tb_util.h"

#ifndef NCNT
#define NCNT 11
#endif
#ifndef PEND_W
#define PEND_W 3
#endif
static const int LIMIT = (1 << PEND_W) - 1;   // events per counter per sweep

struct Bench {
    Tb<Vstat_counters> tb;
    std::mt19937_64 rng;
    uint64_t cnt[NCNT] = {};
    double inc_p = 0.1;
    bool reading = false;
    int ridx = 0;
    int hold = -1;          // clocks rd_req stays high after rd_valid (-1: not valid yet)
    bool gap = false;       // rd_req low for one clock between reads
    uint32_t held = 0;
    uint32_t acc = 0;       // bytes of the value taken so far
    int nb = 0;             // ... how many
    int order[4] = {0, 1, 2, 3};   // the order the bytes are taken in
    uint64_t lo = 0;
    uint64_t hi = 0;        // the model's count at the first pulse
    long since = 0;         // clocks since rd_req rose (first pulse) or the last pulse
    bool pulsed = false;
    bool same = false;      // rd_addr unchanged since the last pulse
    uint64_t reads = 0;
    bool exact = false;
    uint64_t now = 0;
    uint64_t clipped = 0;                         // increments left out (limit)
    std::deque<std::pair<uint64_t, int>> win[NCNT];  // increments of the last 4*NCNT clocks
    int wsum[NCNT] = {};

    Bench(const TbOpts& o) : tb("stat_counters", o), rng(o.seed) {}
    bool coin(double p) { return std::uniform_real_distribution<double>(0, 1)(rng) < p; }
    int rnd(int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); }

    static uint32_t low(uint64_t x) { return (uint32_t)x; }

    void cycle(bool rst = false, bool clear = false) {
        auto* m = tb.m.get();
        uint32_t incv = 0;
        int add[NCNT];
        for (int i = 0; i < NCNT; i++) {
            add[i] = coin(inc_p) ? rnd(1, 3) : 0;
            while (!win[i].empty() && win[i].front().first + 4 * NCNT <= now) {
                wsum[i] -= win[i].front().second;
                win[i].pop_front();
            }
            if (wsum[i] + add[i] > LIMIT) {
                add[i] = 0;
                clipped++;
            }
            if (add[i]) {
                win[i].push_back({now, add[i]});
                wsum[i] += add[i];
            }
            incv |= (uint32_t)add[i] << (2 * i);
        }
        if (!reading && !gap && !clear && coin(0.05)) start_read(rnd(0, NCNT - 1));
        gap = false;
        m->rst = rst;
        m->clear = clear;
        m->inc = incv;
        m->rd_req = reading;
        m->rd_addr = 4 * ridx + order[nb < 4 ? nb : 3];
        tb.settle();
        if (m->rd_valid && !rst) {
            CHECK(reading, "rd_valid without a request");
            CHECK(since <= (pulsed ? 4 * NCNT : 8 * NCNT + 4), "rd_valid %ld clocks after %s", since,
                  pulsed ? "the last" : "rd_req rose");
            // an address unchanged since the last pulse comes round once a sweep
            CHECK(!same || since == 4 * NCNT, "rd_valid %ld clocks after the last for the same address", since);
            if (!pulsed) hi = cnt[ridx];
            pulsed = true;
            same = true;
            since = 0;
            if (reading && hold < 0 && nb < 4 && coin(0.7)) {
                // take byte order[nb]; rd_addr names the next one from the next clock
                acc |= (uint32_t)m->rd_data << (8 * order[nb]);
                nb++;
                same = nb == 4;
            }
            if (reading && hold < 0 && nb == 4) {
                uint64_t v = acc;
                if (exact) CHECK_EQ(v, low(cnt[ridx]), "exact read");
                // v lies between lo and the count at the first pulse, modulo 2^32
                CHECK(low(v - lo) <= hi - lo, "read counter %d: %llu not in [%llu, %llu] (mod 2^32)", ridx,
                      (unsigned long long)v, (unsigned long long)low(lo), (unsigned long long)low(hi));
                held = (uint32_t)v;
                hold = rnd(0, 5);
                reads++;
            } else if (reading && hold >= 0) {
                CHECK_EQ(m->rd_data, (held >> (8 * order[3])) & 0xFF, "a byte of the held read changed");
            }
        }
        if (reading && hold >= 0 && hold-- == 0) {
            reading = false;
            gap = true;
        }
        since++;
        // the model counts this clock's increments after the sample above
        if (rst || clear) {
            for (auto& c : cnt) c = 0;
            if (rst) reading = false;
        } else {
            for (int i = 0; i < NCNT; i++) cnt[i] += add[i];
        }
        tb.tick();
        now++;
    }
    void start_read(int i) {
        reading = true;
        hold = -1;
        nb = 0;
        acc = 0;
        ridx = i;
        lo = cnt[i];
        since = 0;
        pulsed = false;
        same = false;
        for (int k = 3; k > 0; k--) std::swap(order[k], order[rnd(0, k)]);
    }
    void quiet(int n) {
        double p = inc_p;
        inc_p = 0;
        for (int i = 0; i < n; i++) cycle();
        inc_p = p;
    }
    void read_all_exact() {
        quiet(300);
        exact = true;
        double p = inc_p;
        inc_p = 0;
        for (int i = 0; i < NCNT; i++) {
            while (reading || gap) cycle();
            start_read(i);
            long g = 0;
            while (reading && g++ < 1000) cycle();
            CHECK(!reading, "read of counter %d never answered", i);
        }
        inc_p = p;
        exact = false;
    }
};

int main(int argc, char** argv) {
    Verilated::commandArgs(argc, argv);
    TbOpts o = tb_parse(argc, argv);
    Bench b(o);
    for (int i = 0; i < 3; i++) b.cycle(true);
    b.read_all_exact();

    for (int round = 0; round < 10; round++) {
        // the highest rate runs into the documented limit (the stimulus
        // leaves out what would exceed it)
        b.inc_p = (round % 3 == 0) ? 0.04 : (round % 3 == 1) ? 0.01 : 0.001;
        for (int i = 0; i < 20000; i++) b.cycle();
        b.read_all_exact();
        if (round == 4) {
            while (b.reading || b.gap) b.cycle();
            b.cycle(false, true);  // clear
            b.read_all_exact();
        }
    }

    // wrapping: preset counters through the RAM just below 2^32 - 1
    while (b.reading || b.gap) b.cycle();
    b.quiet(300);
    b.inc_p = 0;
    auto* r = b.tb.m->rootp;
    for (int i = 0; i < NCNT; i += 2) {
        // poke counter i while the sweep is two counters away from it
        while ((r->stat_counters__DOT__ra >> 2) != (i + 2) % NCNT) b.cycle();
        uint32_t v = 0xFFFFFFFFu - (uint32_t)b.rnd(0, 200);
        for (int k = 0; k < 4; k++) {   // the counter's bytes, not the snapshot's (bits 15..8)
            auto& w = r->stat_counters__DOT__mem[4 * i + k];
            w = (w & 0xFF00) | ((v >> (8 * k)) & 0xFF);
        }
        b.cnt[i] = v;
        b.cycle();
    }
    b.inc_p = 0.04;
    for (int i = 0; i < 5000; i++) b.cycle();
    b.read_all_exact();
    for (int i = 0; i < NCNT; i += 2) CHECK(b.cnt[i] > 0xFFFFFFFFull, "model counter %d wrapped", i);

    // reset clears everything
    for (int i = 0; i < 2; i++) b.cycle(true);
    b.read_all_exact();
    for (int i = 0; i < NCNT; i++) CHECK_EQ(b.cnt[i], 0, "model after reset");
    std::printf("stat_counters: %llu reads, %llu increments left out (limit)\n", (unsigned long long)b.reads,
                (unsigned long long)b.clipped);
    return tb_finish("stat_counters");
}
