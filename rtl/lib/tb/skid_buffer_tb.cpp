// skid_buffer_tb.cpp - Verilator bench for rtl/lib/skid_buffer.v
//
// Build and run from rtl/ (--trace-fst and --trace give /tmp/skid_buffer/skid_buffer.fst):
//   verilator --cc --exe --build -j 2 -Wall --trace-fst --Mdir /tmp/skid_buffer \
//     -CFLAGS -I$PWD/lib/tb -GDATA_WIDTH=16 -CFLAGS -DDATA_WIDTH=16 \
//     $PWD/lib/skid_buffer.v $PWD/lib/tb/skid_buffer_tb.cpp
//   (cd /tmp/skid_buffer && ./Vskid_buffer --trace --seed 1)
// (the -G and -D values must match; the Go test uses other values too)
//
// Reference model: a queue of accepted words (at most 2). Every clock:
// m_axis_tvalid == queue not empty, s_axis_tready == fewer than 2 held,
// output data in order and stable while stalled, and one word per clock when
// both sides are always ready. Random valid/ready mixes and mid-stream resets.
#include <deque>

#include "Vskid_buffer.h"
#include "tb_util.h"

#ifndef DATA_WIDTH
#define DATA_WIDTH 16
#endif

int main(int argc, char** argv) {
    Verilated::commandArgs(argc, argv);
    TbOpts o = tb_parse(argc, argv);
    Tb<Vskid_buffer> tb("skid_buffer", o);
    auto* m = tb.m.get();
    std::mt19937_64 rng(o.seed);
    auto coin = [&](double p) { return std::uniform_real_distribution<double>(0, 1)(rng) < p; };
    const uint32_t mask = (uint32_t)((1ull << DATA_WIDTH) - 1);

    std::deque<uint32_t> q;
    bool pend = false, stall = false;
    uint32_t pdata = 0, sdata = 0;
    uint64_t moved = 0;

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
        CHECK_EQ(m->m_axis_tvalid, !q.empty(), "m_axis_tvalid");
        CHECK_EQ(m->s_axis_tready, q.size() < 2, "s_axis_tready");
        if (stall) CHECK_EQ(m->m_axis_tdata, sdata, "tdata changed while stalled");
        if (m->m_axis_tvalid && m->m_axis_tready && !q.empty()) {
            CHECK_EQ(m->m_axis_tdata, q.front(), "m_axis_tdata");
            q.pop_front();
            moved++;
        }
        stall = m->m_axis_tvalid && !m->m_axis_tready;
        sdata = m->m_axis_tdata;
        if (m->s_axis_tvalid && m->s_axis_tready) {
            q.push_back(pdata);
            pend = false;
        }
        if (rst) {
            q.clear();
            stall = false;
        }
        tb.tick();
    };

    for (int i = 0; i < 3; i++) cycle(0, 0, true);
    const double ps[][2] = {{1, 1}, {0.9, 0.2}, {0.2, 0.9}, {0.5, 0.5}, {1, 0}, {0, 1}, {1, 0.5}};
    for (int rep = 0; rep < 200; rep++) {
        for (auto& p : ps) {
            int n = 10 + (int)(rng() % 60);
            for (int i = 0; i < n; i++) cycle(p[0], p[1], false);
        }
        if (rep % 7 == 3) cycle(0.5, 0.5, true);
    }
    for (int i = 0; i < 5; i++) cycle(0, 1, false);
    uint64_t m0 = moved;
    for (int i = 0; i < 1000; i++) cycle(1, 1, false);
    CHECK(moved - m0 >= 999, "throughput: %llu words in 1000 clocks",
          (unsigned long long)(moved - m0));
    return tb_finish("skid_buffer");
}
