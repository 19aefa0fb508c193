// eth_mac_tx_tb.cpp - Verilator bench for rtl/eth/eth_mac_tx.v
//
// Build and run from rtl/ (--trace-fst and --trace give /tmp/eth_mac_tx/eth_mac_tx.fst):
//   verilator --cc --exe --build -j 2 -Wall --trace-fst --Mdir /tmp/eth_mac_tx \
//     -CFLAGS -I$PWD/lib/tb \
//     $PWD/eth/eth_mac_tx.v $PWD/lib/crc32.v $PWD/eth/tb/eth_mac_tx_tb.cpp
//   (cd /tmp/eth_mac_tx && ./Veth_mac_tx --trace --seed 1)
//
// Reference model: for every packet the expected wire bytes are
// 7 x 0x55, 0xD5, destination, local_mac, EtherType, payload, zero padding
// to 60 bytes, FCS (table-driven CRC-32, LSB first). gmii_* are sampled on
// every clk_en clock (one sample per byte time); each gmii_tx_en burst must
// equal the next expected frame, gmii_tx_er must be low, and the idle gap
// between frames must be >= 12 byte times, exactly 12 when the next packet is
// already waiting. An underflow (source drops tvalid after payload byte k)
// must give one error byte (tx_er) after byte k-1, end the frame, pulse
// underflow and discard the rest of the packet. Covered: clk_en always /
// 1-in-2 / random, payload 1..1500 bytes with many below the 46-byte
// minimum, back-to-back and random gaps, underflows, resets mid-frame.
#include <deque>
#include <vector>

#include "Veth_mac_tx.h"
#include "tb_util.h"

static uint32_t crc_tab[256];

struct Pkt {
    uint64_t dst;
    uint16_t type;
    std::vector<uint8_t> pay;
    int hole = -1;              // payload index where tvalid drops (underflow)
};

struct Bench {
    Tb<Veth_mac_tx> tb;
    std::mt19937_64 rng;
    uint64_t local = 0x02123456789Aull;
    int en_mode = 0;
    // source
    std::deque<Pkt> src;        // packets not yet fully accepted
    size_t idx = 0;             // next payload byte of src.front()
    bool started = false;       // src.front() presented (expected frame queued)
    int hole_left = 0;          // enabled clocks left in the current hole
    bool hole_done = false;
    // sink
    std::deque<std::vector<uint16_t>> expect;  // bytes | er<<8
    std::deque<bool> expect_prefix;            // compare a prefix only (reset)
    std::vector<uint16_t> cur;
    long idle_slots = 1000;
    bool gap_exact = false;     // next gap must be exactly 12 (back to back)
    bool gap_check = true;
    uint64_t frames = 0, underflows = 0, underflow_pulses = 0, padded = 0;

    Bench(const TbOpts& o) : tb("eth_mac_tx", o), rng(o.seed) {}
    bool coin(double p) { return std::uniform_real_distribution<double>(0, 1)(rng) < p; }
    int rnd(int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); }
    bool enable() {
        if (en_mode == 0) return true;
        if (en_mode == 1) return (g_cycle & 1) == 0;
        return coin(0.5);
    }

    std::vector<uint16_t> wire(const Pkt& p) {
        std::vector<uint8_t> b;
        for (int i = 5; i >= 0; i--) b.push_back((uint8_t)(p.dst >> (8 * i)));
        for (int i = 5; i >= 0; i--) b.push_back((uint8_t)(local >> (8 * i)));
        b.push_back((uint8_t)(p.type >> 8));
        b.push_back((uint8_t)p.type);
        b.insert(b.end(), p.pay.begin(), p.pay.end());
        while (b.size() < 60) b.push_back(0);
        uint32_t c = 0xFFFFFFFFu;
        for (uint8_t x : b) c = crc_tab[(c ^ x) & 0xFF] ^ (c >> 8);
        c = ~c;
        for (int i = 0; i < 4; i++) b.push_back((uint8_t)(c >> (8 * i)));
        std::vector<uint16_t> w(7, 0x55);
        w.push_back(0xD5);
        if (p.hole >= 0) {  // underflow: header + payload[0..hole-1] + error byte
            w.insert(w.end(), b.begin(), b.begin() + 14 + p.hole);
            w.push_back(0x100);
        } else {
            w.insert(w.end(), b.begin(), b.end());
        }
        return w;
    }

    void finish_burst() {
        CHECK(!expect.empty(), "frame on the wire that was never sent");
        if (!expect.empty()) {
            auto& e = expect.front();
            bool prefix = expect_prefix.front();
            if (prefix) {
                CHECK(cur.size() <= e.size(), "aborted frame longer than expected");
            } else {
                CHECK_EQ(cur.size(), e.size(), "frame length on the wire");
            }
            for (size_t i = 0; i < cur.size() && i < e.size(); i++)
                if (cur[i] != e[i]) {
                    CHECK_EQ(cur[i], e[i], "wire byte (bit 8 = tx_er)");
                    break;
                }
            g_tb.checks += cur.size();
            expect.pop_front();
            expect_prefix.pop_front();
            frames++;
        }
        cur.clear();
    }

    void clock(bool rst = false) {
        auto* m = tb.m.get();
        bool en = enable();
        m->rst = rst;
        m->clk_en = en;
        m->local_mac = local;
        // source
        bool valid = false;
        if (!src.empty()) {
            Pkt& p = src.front();
            if (!started) {
                started = true;
                expect.push_back(wire(p));
                expect_prefix.push_back(false);
            }
            valid = true;
            if (p.hole >= 0 && (int)idx == p.hole && !hole_done) {
                valid = false;
                if (en && --hole_left == 0) hole_done = true;
            }
            m->s_dest_mac = p.dst;
            m->s_ethertype = p.type;
            m->s_axis_tdata = idx < p.pay.size() ? p.pay[idx] : 0;
            m->s_axis_tlast = idx + 1 == p.pay.size();
        } else {
            m->s_dest_mac = rng();
            m->s_ethertype = (uint16_t)rng();
            m->s_axis_tdata = (uint8_t)rng();
            m->s_axis_tlast = rnd(0, 1);
        }
        m->s_axis_tvalid = valid;
        tb.settle();

        // sink: one sample per byte time
        if (en && !rst) {
            if (m->gmii_tx_en) {
                if (cur.empty() && gap_check) {
                    if (gap_exact) CHECK_EQ(idle_slots, 12, "inter-frame gap (back to back)");
                    else CHECK(idle_slots >= 12, "inter-frame gap %ld < 12", idle_slots);
                }
                cur.push_back((uint16_t)(m->gmii_txd | (m->gmii_tx_er << 8)));
                idle_slots = 0;
                gap_check = true;
            } else {
                CHECK(!m->gmii_tx_er, "tx_er without tx_en");
                if (!cur.empty()) finish_burst();
                idle_slots++;
            }
        }
        underflow_pulses += m->underflow;

        // source transfer
        if (!rst && valid && m->s_axis_tready) {
            Pkt& p = src.front();
            bool last = idx + 1 == p.pay.size();
            idx++;
            if (last) {
                src.pop_front();
                idx = 0;
                started = false;
                hole_done = false;
            }
        }
        tb.tick();
        if (rst) {
            // the DUT drops gmii_tx_en at once: a frame on the wire is cut
            // short (compare its prefix), and the source abandons the packet
            // it was presenting (its frame may not have started at all).
            if (!cur.empty()) {
                expect_prefix.front() = true;
                finish_burst();
            }
            if (started) {
                if (!expect.empty()) {
                    expect.pop_back();
                    expect_prefix.pop_back();
                }
                src.pop_front();
                idx = 0;
                started = false;
                hole_done = false;
            }
            gap_check = false;
        }
    }

    Pkt random_pkt(int maxlen) {
        Pkt p;
        p.dst = rng() & 0xFFFFFFFFFFFFull;
        p.type = coin(0.5) ? 0x88B5 : (uint16_t)rng();
        int n = coin(0.5) ? rnd(1, 60) : rnd(1, maxlen);
        for (int i = 0; i < n; i++) p.pay.push_back((uint8_t)rng());
        if (n < 46) padded++;
        return p;
    }
    void run_until_idle() {
        for (int i = 0; i < 100000 && !(src.empty() && expect.empty() && cur.empty()); i++) clock();
        for (int i = 0; i < 40; i++) clock();
        CHECK(src.empty() && expect.empty(), "packets left: %zu queued, %zu frames not seen",
              src.size(), expect.size());
        CHECK(!tb.m->busy, "busy when idle");
    }
};

int main(int argc, char** argv) {
    Verilated::commandArgs(argc, argv);
    TbOpts o = tb_parse(argc, argv);
    for (uint32_t i = 0; i < 256; i++) {
        uint32_t c = i;
        for (int k = 0; k < 8; k++) c = (c & 1) ? (c >> 1) ^ 0xEDB88320u : c >> 1;
        crc_tab[i] = c;
    }
    Bench b(o);
    for (int i = 0; i < 3; i++) b.clock(true);
    for (int i = 0; i < 20; i++) b.clock();

    for (int mode = 0; mode < 3; mode++) {
        b.en_mode = mode;
        // back to back: all packets queued at once, gaps must be exactly 12
        b.gap_exact = true;
        for (int i = 0; i < 40; i++) b.src.push_back(b.random_pkt(1500));
        b.run_until_idle();
        // random gaps between packets
        b.gap_exact = false;
        for (int i = 0; i < 60; i++) {
            b.src.push_back(b.random_pkt(600));
            for (int k = b.rnd(0, 60); k > 0; k--) b.clock();
        }
        b.run_until_idle();
        // underflows
        uint64_t u0 = b.underflow_pulses;
        int nu = 0;
        for (int i = 0; i < 20; i++) {
            Pkt p = b.random_pkt(300);
            if (p.pay.size() >= 2 && b.coin(0.6)) {
                p.hole = b.rnd(1, (int)p.pay.size() - 1);
                b.hole_left = b.rnd(1, 3);
                nu++;
            }
            b.src.push_back(p);
            b.run_until_idle();
        }
        CHECK_EQ(b.underflow_pulses - u0, nu, "underflow pulses");
        b.underflows += nu;
        // resets in the middle of frames
        for (int i = 0; i < 15; i++) {
            b.src.push_back(b.random_pkt(200));
            b.src.push_back(b.random_pkt(200));
            for (int k = b.rnd(1, 400); k > 0; k--) b.clock();
            for (int k = b.rnd(1, 3); k > 0; k--) b.clock(true);
            b.run_until_idle();
        }
    }
    // minimum-size corner cases: 1, 45, 46, 47 payload bytes
    b.en_mode = 0;
    for (int n : {1, 45, 46, 47, 1500}) {
        Pkt p;
        p.dst = 0xFFFFFFFFFFFFull;
        p.type = 0x88B5;
        for (int i = 0; i < n; i++) p.pay.push_back((uint8_t)i);
        b.src.push_back(p);
    }
    b.gap_exact = true;
    b.run_until_idle();

    std::printf("frames %llu (padded %llu, underflows %llu)\n", (unsigned long long)b.frames,
                (unsigned long long)b.padded, (unsigned long long)b.underflows);
    return tb_finish("eth_mac_tx");
}
