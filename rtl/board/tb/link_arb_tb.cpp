// link_arb_tb.cpp - Verilator bench for rtl/board/link_arb.v
//
// Build: verilator --cc --exe --build -Wall -CFLAGS -I../../lib/tb link_arb.v tb/link_arb_tb.cpp
//
// Two sources behave like proto_rx outputs: a descriptor FIFO (type, seq,
// len, busy, mac) and a separate payload byte stream holding the payloads
// of the non-busy frames back to back, both with random valid gaps. The
// consumer behaves like proto_engine: it reads the offered frame's payload
// (exactly len bytes, random ready) and takes the descriptor afterwards.
// Checked: every frame of each link arrives once, in its link's order,
// with its own payload and the right m_desc_link; descriptor stability
// while offered; no byte passes without an offered descriptor; round
// robin: while both links have frames waiting, grants alternate.
#include <deque>
#include <vector>

#include "Vlink_arb.h"
#include "tb_util.h"

struct F {
    uint8_t type;
    uint16_t seq;
    int len;
    bool busy;
    uint64_t mac;
    std::vector<uint8_t> pay;
};

struct Src {
    std::deque<F> desc;          // descriptors not yet taken
    std::deque<uint8_t> bytes;   // payload bytes not yet read
    std::deque<F> expect;        // frames not yet fully received
};

struct Bench {
    Tb<Vlink_arb> tb;
    std::mt19937_64 rng;
    Src s[2];
    double dv_p = 1.0, bv_p = 1.0, rd_p = 1.0;
    int rd = 0;                   // payload bytes read for the offered descriptor
    bool prev_offer = false;
    uint64_t prev_word = 0;
    int last_link = -1;
    uint64_t frames = 0, alternations = 0, contested = 0;

    Bench(const TbOpts& o) : tb("link_arb", o), rng(o.seed) {}
    bool coin(double p) { return std::uniform_real_distribution<double>(0, 1)(rng) < p; }
    int rnd(int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); }

    void add(int link, int n) {
        for (int k = 0; k < n; k++) {
            F f;
            f.type = (uint8_t)rnd(0, 255);
            f.seq = (uint16_t)rnd(0, 65535);
            f.busy = coin(0.1);
            f.len = coin(0.2) ? 0 : rnd(1, 40);
            f.mac = link ? rng() & 0xFFFFFFFFFFFFull : 0;
            if (!f.busy)
                for (int i = 0; i < f.len; i++) f.pay.push_back((uint8_t)rnd(0, 255));
            s[link].desc.push_back(f);
            s[link].bytes.insert(s[link].bytes.end(), f.pay.begin(), f.pay.end());
            s[link].expect.push_back(f);
        }
    }

    uint64_t word() {
        auto* m = tb.m.get();
        return (uint64_t)m->m_desc_type | (uint64_t)m->m_desc_seq << 8 | (uint64_t)m->m_desc_len << 24 |
               (uint64_t)m->m_desc_busy << 35 | (uint64_t)m->m_desc_link << 36 | (m->m_desc_mac & 0xFFFFFF) << 37;
    }

    void cycle(bool rst = false) {
        auto* m = tb.m.get();
        bool dv[2], bv[2];
        for (int l = 0; l < 2; l++) {
            // a proto_rx descriptor stays valid once offered (FIFO head)
            dv[l] = !s[l].desc.empty() && (coin(dv_p) || l == (int)m->m_desc_link);
            bv[l] = !s[l].bytes.empty() && coin(bv_p);
        }
        const F* h0 = s[0].desc.empty() ? nullptr : &s[0].desc.front();
        const F* h1 = s[1].desc.empty() ? nullptr : &s[1].desc.front();
        m->rst = rst;
        m->s0_desc_valid = dv[0];
        m->s0_desc_type = h0 ? h0->type : 0;
        m->s0_desc_seq = h0 ? h0->seq : 0;
        m->s0_desc_len = h0 ? h0->len : 0;
        m->s0_desc_busy = h0 ? h0->busy : 0;
        m->s0_desc_mac = h0 ? h0->mac : 0;
        m->s0_axis_tvalid = bv[0];
        m->s0_axis_tdata = bv[0] ? s[0].bytes.front() : 0;
        m->s1_desc_valid = dv[1];
        m->s1_desc_type = h1 ? h1->type : 0;
        m->s1_desc_seq = h1 ? h1->seq : 0;
        m->s1_desc_len = h1 ? h1->len : 0;
        m->s1_desc_busy = h1 ? h1->busy : 0;
        m->s1_desc_mac = h1 ? h1->mac : 0;
        m->s1_axis_tvalid = bv[1];
        m->s1_axis_tdata = bv[1] ? s[1].bytes.front() : 0;
        tb.settle();
        // consumer: read the payload, then take the descriptor
        bool need = m->m_desc_valid && !m->m_desc_busy && rd < (int)m->m_desc_len;
        m->m_axis_tready = need && coin(rd_p);
        m->m_desc_ready = m->m_desc_valid && !need && coin(0.7);
        tb.settle();

        if (prev_offer) {
            CHECK(m->m_desc_valid, "m_desc_valid dropped without a transfer");
            CHECK_EQ(word(), prev_word, "descriptor changed while offered");
        }
        CHECK(!(m->m_axis_tvalid && !m->m_desc_valid), "payload byte without a descriptor");
        int l = m->m_desc_link;
        if (m->m_axis_tvalid && m->m_axis_tready && !rst) {
            CHECK(!s[l].expect.empty() && rd < (int)s[l].expect.front().pay.size(), "byte beyond the payload");
            if (!s[l].expect.empty() && rd < (int)s[l].expect.front().pay.size())
                CHECK_EQ(m->m_axis_tdata, s[l].expect.front().pay[rd], "payload byte");
            rd++;
        }
        if (m->s0_axis_tvalid && m->s0_axis_tready && !rst) s[0].bytes.pop_front();
        if (m->s1_axis_tvalid && m->s1_axis_tready && !rst) s[1].bytes.pop_front();
        CHECK(!(m->s0_axis_tready && l == 1 && m->m_desc_valid), "link 0 read while link 1 is offered");
        CHECK(!(m->s1_axis_tready && l == 0 && m->m_desc_valid), "link 1 read while link 0 is offered");
        if (m->m_desc_valid && m->m_desc_ready && !rst) {
            CHECK(l == 0 ? m->s0_desc_ready && !m->s1_desc_ready : m->s1_desc_ready && !m->s0_desc_ready,
                  "descriptor taken from the wrong link");
            CHECK(!s[l].expect.empty(), "descriptor from an empty link");
            if (!s[l].expect.empty()) {
                F& f = s[l].expect.front();
                CHECK_EQ(m->m_desc_type, f.type, "type");
                CHECK_EQ(m->m_desc_seq, f.seq, "seq");
                CHECK_EQ(m->m_desc_len, f.len, "len");
                CHECK_EQ(m->m_desc_busy, f.busy, "busy");
                if (l == 1) CHECK_EQ(m->m_desc_mac, f.mac, "mac");
                CHECK_EQ(rd, f.pay.size(), "payload bytes read");
                s[l].expect.pop_front();
                s[l].desc.pop_front();
            }
            // round robin: with both links waiting the other one is next
            bool both = dv_p >= 1.0 && !s[0].desc.empty() && !s[1].desc.empty();
            if (last_link >= 0 && contested_next) {
                contested++;
                if (l != last_link) alternations++;
            }
            contested_next = both;
            last_link = l;
            rd = 0;
            frames++;
        }
        prev_offer = m->m_desc_valid && !m->m_desc_ready && !rst;
        prev_word = word();
        tb.tick();
    }
    bool contested_next = false;
};

int main(int argc, char** argv) {
    Verilated::commandArgs(argc, argv);
    TbOpts o = tb_parse(argc, argv);
    Bench b(o);
    for (int i = 0; i < 3; i++) b.cycle(true);
    for (int round = 0; round < 8; round++) {
        b.dv_p = (round & 1) ? 0.3 : 1.0;
        b.bv_p = (round & 2) ? 0.4 : 1.0;
        b.rd_p = (round & 4) ? 0.5 : 1.0;
        b.add(0, b.rnd(0, 60));
        b.add(1, b.rnd(0, 60));
        long guard = 0;
        while ((!b.s[0].expect.empty() || !b.s[1].expect.empty()) && guard++ < 1000000) b.cycle();
        CHECK(b.s[0].expect.empty() && b.s[1].expect.empty(), "round %d: frames not delivered", round);
        for (int i = 0; i < 10; i++) b.cycle();
    }
    CHECK(b.contested > 50, "too few contested grants: %llu", (unsigned long long)b.contested);
    CHECK_EQ(b.alternations, b.contested, "round robin alternation under contention");
    std::printf("link_arb: %llu frames, %llu contested grants\n", (unsigned long long)b.frames,
                (unsigned long long)b.contested);
    return tb_finish("link_arb");
}
