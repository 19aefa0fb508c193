// uart_tx_tb.cpp - Verilator bench for rtl/uart/uart_tx.v
//
// Build and run from rtl/ (--trace-fst and --trace give /tmp/uart_tx/uart_tx.fst):
//   verilator --cc --exe --build -j 2 -Wall --trace-fst --Mdir /tmp/uart_tx \
//     -CFLAGS -I$PWD/lib/tb -GCLKS_PER_BIT=16 -CFLAGS -DCLKS_PER_BIT=16 \
//     $PWD/uart/uart_tx.v $PWD/uart/tb/uart_tx_tb.cpp
//   (cd /tmp/uart_tx && ./Vuart_tx --trace --seed 1)
// (the -G and -D values must match; the Go test uses other values too)
//
// Reference model: every accepted byte owns the 10*CLKS_PER_BIT clocks that
// start one clock after the accepting edge (start 0, data LSB first, stop 1);
// outside a character txd must be 1. txd, busy and s_axis_tready are compared
// with the model on every clock. The bit tick comes every CLKS_PER_BIT clocks,
// restarted by rst (the module's own timer; the bench drives the same tick
// on the tick input, which EXT_TICK = 1 uses); tready must be high in a tick
// clock when idle or in the last clock of a stop bit (back-to-back
// characters), low otherwise; bit_step must pulse (with the bit on bit_d)
// exactly in the clock before each data bit starts on txd. Covered:
// continuous stream, random gaps, corner bytes, resets inside characters.
#include <deque>

#include "Vuart_tx.h"
#include "tb_util.h"

#ifndef CLKS_PER_BIT
#define CLKS_PER_BIT 104
#endif
static const long CPB = CLKS_PER_BIT;

struct Bench {
    Tb<Vuart_tx> tb;
    std::mt19937_64 rng;
    long g = 0;               // cycle index
    bool inflight = false;
    long cstart = 0;          // first clock of the start bit on txd
    uint8_t cbyte = 0;
    bool pend = false;        // source has a byte presented
    uint8_t pbyte = 0;
    double valid_p = 1.0;     // probability that the source offers a new byte
    uint64_t sent = 0;
    long tc = 0;              // clocks since the bit tick restarted (tick at CPB-1)

    Bench(const TbOpts& o) : tb("uart_tx", o), rng(o.seed) {}
    bool coin(double p) { return std::uniform_real_distribution<double>(0, 1)(rng) < p; }
    int rnd(int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); }

    void cycle(bool rst = false) {
        auto* m = tb.m.get();
        if (!pend && coin(valid_p)) {
            pend = true;
            pbyte = (uint8_t)rnd(0, 255);
        }
        bool bt = (tc == CPB - 1);
        m->rst = rst;
        m->tick = bt;
        m->s_axis_tvalid = pend;
        m->s_axis_tdata = pend ? pbyte : (uint8_t)rnd(0, 255);
        tb.settle();

        long k = inflight ? (g - cstart) : -1;
        bool active = inflight && k >= 0 && k < 10 * CPB;
        int want = 1;
        if (active) {
            long bit = k / CPB;
            want = bit == 0 ? 0 : bit <= 8 ? (cbyte >> (bit - 1)) & 1 : 1;
        }
        CHECK_EQ(m->txd, want, "txd");
        CHECK_EQ(m->busy, active, "busy");
        bool rdy = bt && (!active || k == 10 * CPB - 1);
        CHECK_EQ(m->s_axis_tready, rdy, "s_axis_tready");
        // bit_step: the clock before data bit j (1..8) starts on txd
        long j = (active && (k + 1) % CPB == 0) ? (k + 1) / CPB : 0;
        bool step = j >= 1 && j <= 8;
        CHECK_EQ(m->bit_step, step, "bit_step");
        if (step) CHECK_EQ(m->bit_d, (cbyte >> (j - 1)) & 1, "bit_d");

        if (rst) {
            inflight = false;          // reset aborts the character
        } else if (m->s_axis_tvalid && m->s_axis_tready) {
            inflight = true;
            cstart = g + 1;
            cbyte = pbyte;
            pend = false;
            sent++;
        }
        tc = (rst || bt) ? 0 : tc + 1;
        tb.tick();
        g++;
    }
};

int main(int argc, char** argv) {
    Verilated::commandArgs(argc, argv);
    TbOpts o = tb_parse(argc, argv);
    Bench b(o);
    char name[32];
#if defined(EXT_TICK) && EXT_TICK
    std::snprintf(name, sizeof name, "uart_tx_%ld_ext", CPB);
#else
    std::snprintf(name, sizeof name, "uart_tx_%ld", CPB);
#endif

    b.valid_p = 0.0;
    for (int i = 0; i < 3; i++) b.cycle(true);
    for (int i = 0; i < 5; i++) b.cycle();

    // continuous stream: exactly one byte per 10*CLKS_PER_BIT clocks
    b.valid_p = 1.0;
    uint64_t s0 = b.sent;
    long n = 200 * 10 * CPB;
    for (long i = 0; i < n; i++) b.cycle();
    CHECK(b.sent - s0 >= 199 && b.sent - s0 <= 201, "throughput: %llu bytes in 200 slots",
          (unsigned long long)(b.sent - s0));

    // random gaps
    b.valid_p = 0.002 * 104 / CPB;
    for (long i = 0; i < 300 * 10 * CPB; i++) b.cycle();

    // resets inside characters
    for (int rep = 0; rep < 40; rep++) {
        b.valid_p = 1.0;
        long wait = b.rnd(1, 25 * (int)CPB);
        for (long i = 0; i < wait; i++) b.cycle();
        int nr = b.rnd(1, 3);
        b.valid_p = b.coin(0.5) ? 1.0 : 0.0;
        for (int i = 0; i < nr; i++) b.cycle(true);
        for (long i = 0; i < 12 * CPB; i++) b.cycle();
    }
    b.valid_p = 0.0;
    for (long i = 0; i < 12 * CPB; i++) b.cycle();
    return tb_finish(name);
}
