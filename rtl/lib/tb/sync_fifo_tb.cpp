// sync_fifo_tb.cpp - Verilator bench for rtl/lib/sync_fifo.v
//
// Build and run from rtl/ (--trace-fst and --trace give /tmp/sync_fifo/sync_fifo.fst):
//   verilator --cc --exe --build -j 2 -Wall --trace-fst --Mdir /tmp/sync_fifo \
//     -CFLAGS -I$PWD/lib/tb -GDATA_WIDTH=12 -GDEPTH=8 -CFLAGS "-DDATA_WIDTH=12 -DDEPTH=8" \
//     $PWD/lib/sync_fifo.v $PWD/lib/tb/sync_fifo_tb.cpp
//   (cd /tmp/sync_fifo && ./Vsync_fifo --trace --seed 1)
// (the -G and -D values must match; the Go test uses other values too)
//
// Reference model: a std::deque of (word, cycle accepted). Checked on every
// clock: output order and data; count == words held; s_axis_tready ==
// memory not full (count - m_axis_tvalid < DEPTH); m_axis_tvalid is high
// exactly when the oldest word was accepted two or more clocks ago (FWFT
// latency 2); output stable while stalled. Phases sweep input/output
// probabilities (fill to full, drain to empty, full throughput) and reset
// the FIFO mid-stream.
#include <deque>
#include <utility>

#include "Vsync_fifo.h"
#include "tb_util.h"

#ifndef DATA_WIDTH
#define DATA_WIDTH 12
#endif
#ifndef DEPTH
#define DEPTH 8
#endif

int main(int argc, char** argv) {
    Verilated::commandArgs(argc, argv);
    TbOpts o = tb_parse(argc, argv);
    Tb<Vsync_fifo> tb("sync_fifo", o);
    auto* m = tb.m.get();
    std::mt19937_64 rng(o.seed);
    auto coin = [&](double p) { return std::uniform_real_distribution<double>(0, 1)(rng) < p; };
    const uint32_t mask = (1u << DATA_WIDTH) - 1;

    std::deque<std::pair<uint32_t, uint64_t>> q;
    bool pend = false, stall = false;
    uint32_t pdata = 0, sdata = 0;
    uint64_t moved = 0;
    size_t maxcount = 0;

    auto cycle = [&](double vp, double rp, bool rst) {
        if (!pend && coin(vp)) {
            pend = true;
            pdata = (uint32_t)rng() & mask;
        }
        m->rst = rst;
        m->s_axis_tvalid = pend;
        m->s_axis_tdata = pend ? pdata : ((uint32_t)rng() & mask);
        m->m_axis_tready = coin(rp);
        tb.settle();

        CHECK_EQ(m->count, q.size(), "count");
        bool want_valid = !q.empty() && q.front().second + 2 <= g_cycle;
        CHECK_EQ(m->m_axis_tvalid, want_valid, "m_axis_tvalid");
        CHECK_EQ(m->s_axis_tready, (q.size() - (want_valid ? 1 : 0)) < DEPTH, "s_axis_tready");
        if (stall) CHECK_EQ(m->m_axis_tdata, sdata, "tdata changed while stalled");
        if (m->m_axis_tvalid && m->m_axis_tready) {
            CHECK(!q.empty(), "output from empty FIFO");
            if (!q.empty()) {
                CHECK_EQ(m->m_axis_tdata, q.front().first, "m_axis_tdata");
                q.pop_front();
                moved++;
            }
        }
        stall = m->m_axis_tvalid && !m->m_axis_tready;
        sdata = m->m_axis_tdata;
        if (m->s_axis_tvalid && m->s_axis_tready) {
            q.emplace_back(pdata, g_cycle);
            pend = false;
        }
        if (rst) {
            q.clear();
            stall = false;
        }
        maxcount = std::max(maxcount, q.size());
        tb.tick();
    };

    for (int i = 0; i < 3; i++) cycle(0, 0, true);
    const double ps[][2] = {{1, 1},     {0.9, 0.1}, {0.1, 0.9}, {0.5, 0.5}, {1, 0},
                            {0, 1},     {0.8, 0.7}, {0.3, 0.3}, {1, 0.5},   {0.5, 1}};
    for (int rep = 0; rep < 30; rep++) {
        for (auto& p : ps) {
            int n = 50 + (int)(rng() % 200);
            for (int i = 0; i < n; i++) cycle(p[0], p[1], false);
        }
        if (rep % 3 == 2) {
            for (int i = 0; i < 1 + (int)(rng() % 2); i++) cycle(0.5, 0.5, true);
        }
    }
    // full throughput: after the 2-clock fill latency one word per clock
    for (int i = 0; i < 50; i++) cycle(0, 1, false);
    uint64_t m0 = moved;
    for (int i = 0; i < 1000; i++) cycle(1, 1, false);
    CHECK(moved - m0 >= 997, "throughput: %llu words in 1000 clocks",
          (unsigned long long)(moved - m0));
    CHECK_EQ(maxcount, DEPTH + 1, "maximum occupancy reached");
    for (int i = 0; i < 50; i++) cycle(0, 1, false);
    CHECK(q.empty(), "words left in FIFO");
    return tb_finish("sync_fifo");
}
