// proto_rx_eth_tb.cpp - Verilator bench for rtl/board/proto_rx_eth.v
//
// Build (the -D values must match the -G values):
//   verilator --cc --exe --build -Wall -GFIFO_DEPTH=1024 -GDESC_DEPTH=0 \
//     -CFLAGS "-I../../lib/tb -DFIFO_DEPTH=1024 -DDESC_DEPTH=0" \
//     proto_rx_eth.v ../lib/crc32.v tb/proto_rx_eth_tb.cpp
//
// A software reference parser (one frame per packet starting at byte 0,
// header, length check, CRC, truncation, padding) predicts from the input
// packets which frames must come out and how many CRC and framing errors
// must be pulsed. The DUT is fed the same packets with random gaps (and
// the input stalls it causes) and its outputs are consumed with random
// back-pressure, sometimes taking the descriptor before its payload,
// sometimes after (the engine's way). Checked: every descriptor (with the
// packet's source MAC) and payload byte in order, valid/ready stability,
// pulse counts. Packets: good frames (lengths 0..MAX_PAYLOAD), bad CRC,
// oversize lengths, random garbage, truncated packets and trailing padding.
// Finally a reset in the middle of a frame.
#include <algorithm>
#include <deque>
#include <vector>

#include "Vproto_rx_eth.h"
#include "proto_util.h"
#include "tb_util.h"

#define ETH_MODE 1
#ifndef IDLE_CYCLES
#define IDLE_CYCLES 0
#endif
#ifndef FIFO_DEPTH
#define FIFO_DEPTH 2048
#endif
#ifndef DESC_DEPTH
#define DESC_DEPTH 4
#endif
static const int MAXP = 1024;

struct In {
    uint8_t b;
    int gap;    // idle cycles before the byte is offered
    bool last;  // ETH_MODE: last byte of a packet
    uint64_t mac = 0;  // source MAC of the packet
};

struct Desc {
    uint8_t type;
    uint16_t seq;
    int len;
    bool busy;
    std::vector<uint8_t> payload;
    uint64_t mac = 0;
};

struct Counts {
    uint64_t good = 0, crc = 0, frame = 0, ovf = 0;
};

// Reference parser: returns the frames that must be delivered (in order).
static std::vector<Desc> model(const std::vector<In>& in, Counts& c) {
    std::vector<Desc> out;
    if (ETH_MODE) {
        size_t i = 0;
        while (i < in.size()) {
            size_t j = i;
            while (!in[j].last) j++;
            std::vector<uint8_t> p;
            for (size_t k = i; k <= j; k++) p.push_back(in[k].b);
            i = j + 1;
            if (p[0] != SOF || p.size() < 7) {
                c.frame++;
                continue;
            }
            int len = p[5] | p[6] << 8;
            if (len > MAXP || p.size() < (size_t)(11 + len)) {
                c.frame++;
                continue;
            }
            uint32_t crc = g_crc.of(p.data() + 1, 6 + len);
            if (crc != get_u32(p, 7 + len)) {
                c.crc++;
                continue;
            }
            c.good++;
            out.push_back({p[1], (uint16_t)(p[3] | p[4] << 8), len, false,
                           std::vector<uint8_t>(p.begin() + 7, p.begin() + 7 + len), in[j].mac});
        }
        return out;
    }
    // UART: a byte queue so that header bytes can be replayed
    std::deque<std::pair<uint8_t, int>> q;
    for (auto& x : in) q.push_back({x.b, x.gap});
    enum { HUNT, HDR, PAY, CRC } st = HUNT;
    std::vector<uint8_t> hdr, pay, crcb;
    int len = 0;
    while (!q.empty()) {
        auto [b, gap] = q.front();
        q.pop_front();
        if (st != HUNT && IDLE_CYCLES > 0 && gap >= IDLE_CYCLES) {
            c.frame++;  // timeout: the partial frame is dropped
            st = HUNT;
        }
        switch (st) {
        case HUNT:
            if (b == SOF) {
                st = HDR;
                hdr.clear();
            }
            break;
        case HDR:
            hdr.push_back(b);
            if (hdr.size() == 6) {
                len = hdr[4] | hdr[5] << 8;
                if (len > MAXP) {
                    c.frame++;
                    // the next new byte waits while the 6 bytes are replayed
                    if (!q.empty()) q.front().second = std::max(0, q.front().second - 6);
                    for (int k = 5; k >= 0; k--) q.push_front({hdr[k], 0});
                    st = HUNT;
                } else {
                    pay.clear();
                    crcb.clear();
                    st = len ? PAY : CRC;
                }
            }
            break;
        case PAY:
            pay.push_back(b);
            if ((int)pay.size() == len) st = CRC;
            break;
        case CRC:
            crcb.push_back(b);
            if (crcb.size() == 4) {
                std::vector<uint8_t> all = hdr;
                all.insert(all.end(), pay.begin(), pay.end());
                if (g_crc.of(all) == get_u32(crcb, 0)) {
                    c.good++;
                    out.push_back({hdr[0], (uint16_t)(hdr[2] | hdr[3] << 8), len, false, pay});
                } else {
                    c.crc++;
                }
                st = HUNT;
            }
            break;
        }
    }
    return out;
}

struct Bench {
    Tb<Vproto_rx_eth> tb;
    std::mt19937_64 rng;
    // input side
    std::deque<In> src;
    int wait = 0;           // gap still to wait before src.front()
    bool offered = false;
    bool in_packet = false;  // a byte of the packet taken, its last not yet
    // output side
    std::deque<Desc> expect;          // frames still to be delivered
    std::deque<Desc> taken;           // descriptors taken, payload pending
    size_t pos = 0;                   // payload byte of taken.front()
    size_t rd_pos = 0;                // payload bytes read ahead for expect.front()
    double desc_p = 1.0, data_p = 1.0;
    bool pop_at_end = false;          // take the descriptor after its payload
    bool checking = true;
    bool stall = false;               // consumer takes nothing
    Counts got;
    // unchecked mode bookkeeping (overflow phase)
    std::vector<Desc> seen_desc;
    std::vector<std::vector<uint8_t>> seen_pay;
    std::vector<uint8_t> cur_pay;
    // stability
    bool prev_dstall = false, prev_pstall = false;
    uint64_t prev_desc = 0;
    uint8_t prev_data = 0;

    Bench(const TbOpts& o) : tb("proto_rx_eth", o), rng(o.seed) {}
    bool coin(double p) { return std::uniform_real_distribution<double>(0, 1)(rng) < p; }
    int rnd(int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); }

    uint64_t desc_word() {
        auto* m = tb.m.get();
        return (uint64_t)m->m_desc_type | (uint64_t)m->m_desc_seq << 8 |
               (uint64_t)m->m_desc_len << 24 | (uint64_t)m->m_desc_busy << 40;
    }

    void cycle(bool rst = false) {
        auto* m = tb.m.get();
        if (!offered && !src.empty()) {
            if (wait > 0) {
                wait--;
            } else {
                offered = true;
            }
        }
        m->rst = rst;
        m->s_axis_tvalid = offered;
        m->s_axis_tdata = offered ? src.front().b : (uint8_t)rnd(0, 255);
        m->s_axis_tlast = offered ? src.front().last : 0;
        // s_mac: the packet's from its first byte until its last is taken,
        // gaps included (eth_mac_rx's m_src_mac); between packets anything
        m->s_mac = (offered || in_packet) ? src.front().mac : rng() & 0xFFFFFFFFFFFFull;
        // consumer: descriptor ready only when its payload rules allow it
        bool want_desc = !stall && coin(desc_p);
        bool can_take = true;
        if (pop_at_end && m->m_desc_valid) {
            // the engine's way: take the descriptor after reading its payload
            can_take = m->m_desc_busy || rd_pos == m->m_desc_len;
        }
        m->m_desc_ready = want_desc && can_take;
        bool want_data = !stall && coin(data_p);
        if (pop_at_end) {
            // read ahead only the payload of the offered descriptor
            want_data = want_data && m->m_desc_valid && !m->m_desc_busy && rd_pos < m->m_desc_len;
        } else {
            want_data = want_data && !taken.empty();
        }
        m->m_axis_tready = want_data;
        tb.settle();

        // stability of the outputs
        if (prev_dstall) {
            CHECK(m->m_desc_valid, "m_desc_valid dropped without a transfer");
            CHECK_EQ(desc_word(), prev_desc, "descriptor changed while stalled");
        }
        if (prev_pstall) {
            CHECK(m->m_axis_tvalid, "m_axis_tvalid dropped without a transfer");
            CHECK_EQ(m->m_axis_tdata, prev_data, "m_axis_tdata changed while stalled");
        }
        if (!rst) {
            got.good += m->ev_good;
            got.crc += m->ev_crc_error;
            got.frame += m->ev_frame_error;
            CHECK(m->ev_good + m->ev_crc_error + m->ev_frame_error <= 1,
                  "several event pulses at once");
        }

        bool dx = m->m_desc_valid && m->m_desc_ready && !rst;
        bool px = m->m_axis_tvalid && m->m_axis_tready && !rst;
        Desc d{m->m_desc_type, m->m_desc_seq, (int)m->m_desc_len, (bool)m->m_desc_busy, {}, m->m_desc_mac};
        if (pop_at_end) {
            if (px) {
                if (checking) {
                    CHECK(!expect.empty(), "payload byte without an expected frame");
                    if (!expect.empty() && rd_pos < expect.front().payload.size())
                        CHECK_EQ(m->m_axis_tdata, expect.front().payload[rd_pos], "payload byte");
                }
                cur_pay.push_back(m->m_axis_tdata);
                rd_pos++;
            }
            if (dx) {
                take_desc(d);
                rd_pos = 0;
            }
        } else {
            if (dx) {
                taken.push_back(d);
                take_desc(d);
            }
            if (px) {
                if (taken.empty()) {
                    CHECK(false, "payload byte before its descriptor");
                } else {
                    Desc& t = taken.front();
                    if (checking) CHECK_EQ(m->m_axis_tdata, t.payload.size() > pos ? t.payload[pos] : 0x100, "payload byte");
                    cur_pay.push_back(m->m_axis_tdata);
                    pos++;
                }
            }
            while (!taken.empty() && (taken.front().busy || (int)pos == taken.front().len)) {
                seen_pay.push_back(cur_pay);
                cur_pay.clear();
                taken.pop_front();
                pos = 0;
            }
        }

        if (offered && m->s_axis_tready && !rst) {
            in_packet = !src.front().last;
            src.pop_front();
            offered = false;
            wait = src.empty() ? 0 : src.front().gap;
        }
        prev_dstall = m->m_desc_valid && !m->m_desc_ready && !rst;
        prev_pstall = m->m_axis_tvalid && !m->m_axis_tready && !rst;
        prev_desc = desc_word();
        prev_data = m->m_axis_tdata;
        tb.tick();
    }

    // record a taken descriptor; in checked mode compare with the model and
    // attach the expected payload for the non-read-ahead consumer
    void take_desc(const Desc& d) {
        seen_desc.push_back(d);
        if (pop_at_end) {
            seen_pay.push_back(cur_pay);
            cur_pay.clear();
        }
        if (!checking) return;
        CHECK(!expect.empty(), "unexpected descriptor type 0x%02x seq %u", d.type, d.seq);
        if (expect.empty()) return;
        Desc& e = expect.front();
        CHECK_EQ(d.type, e.type, "descriptor type");
        CHECK_EQ(d.seq, e.seq, "descriptor seq");
        CHECK_EQ(d.len, e.len, "descriptor len");
        CHECK_EQ(d.busy, 0, "descriptor busy");
        CHECK_EQ(d.mac, e.mac, "descriptor source MAC");
        if (!pop_at_end && !taken.empty()) taken.back().payload = e.payload;
        expect.pop_front();
    }

    void feed(const std::vector<In>& in) {
        for (auto& x : in) src.push_back(x);
        if (!offered && src.size() == in.size()) wait = src.front().gap;
    }
    // run until the input is consumed, the parser has given up any partial
    // frame and the consumer has drained every delivered frame
    void run_until_idle(int extra = 200) {
        long guard = 0;
        while (!src.empty() && guard++ < 50000000) cycle();
        for (int i = 0; i < extra + 2 * IDLE_CYCLES; i++) cycle();
        if (stall) return;
        guard = 0;
        while ((!taken.empty() || tb.m->m_desc_valid || tb.m->m_axis_tvalid) && guard++ < 1000000) cycle();
        CHECK(guard < 1000000, "consumer never drained the DUT");
    }
};

// ------------------------------------------------------------ stimulus
struct Gen {
    std::mt19937_64& rng;
    explicit Gen(std::mt19937_64& r) : rng(r) {}
    bool coin(double p) { return std::uniform_real_distribution<double>(0, 1)(rng) < p; }
    int rnd(int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); }

    int plen() {
        int r = rnd(0, 9);
        if (r < 4) return rnd(0, 16);
        if (r < 7) return rnd(0, 200);
        if (r < 9) return rnd(0, MAXP);
        return coin(0.5) ? MAXP : MAXP - rnd(0, 3);
    }
    Frame frame(int len) {
        Frame f;
        f.type = (uint8_t)rnd(0, 255);
        f.flags = coin(0.9) ? 0 : (uint8_t)rnd(0, 255);
        f.seq = (uint16_t)rnd(0, 65535);
        for (int i = 0; i < len; i++) f.payload.push_back(coin(0.05) ? SOF : (uint8_t)rnd(0, 255));
        return f;
    }
    // one unit of stimulus bytes: a frame (good, corrupted or oversize) or garbage
    std::vector<uint8_t> unit(int kind) {
        std::vector<uint8_t> b;
        switch (kind) {
        case 0:  // good
            return frame(plen()).encode();
        case 1: {  // bad CRC (one flipped bit after SOF)
            b = frame(plen()).encode();
            b[rnd(1, (int)b.size() - 1)] ^= (uint8_t)(1u << rnd(0, 7));
            return b;
        }
        case 2: {  // oversize length, sometimes with SOF bytes inside the header
            Frame f = frame(0);
            b = f.encode();
            uint16_t len = (uint16_t)rnd(MAXP + 1, 65535);
            b[5] = (uint8_t)len;
            b[6] = (uint8_t)(len >> 8);
            if (coin(0.5)) b[rnd(1, 4)] = SOF;
            return b;
        }
        default: {  // garbage
            int n = rnd(1, 60);
            for (int i = 0; i < n; i++) b.push_back(coin(0.1) ? SOF : (uint8_t)rnd(0, 255));
            return b;
        }
        }
    }
};

int main(int argc, char** argv) {
    Verilated::commandArgs(argc, argv);
    TbOpts o = tb_parse(argc, argv);
    Bench t(o);
    Gen g(t.rng);
    char name[64];
    std::snprintf(name, sizeof name, "proto_rx_eth");

    for (int i = 0; i < 4; i++) t.cycle(true);
    Counts want;

    // 1. mixed streams, checked against the model, several consumer styles
    for (int round = 0; round < 8; round++) {
        t.pop_at_end = round & 1;
        t.desc_p = (round & 2) ? 0.3 : 1.0;
        t.data_p = (round & 4) ? 0.4 : 1.0;
        std::vector<In> in;
        int units = ETH_MODE ? 60 : 40;
        for (int u = 0; u < units; u++) {
            int kind = g.rnd(0, 9);
            kind = kind < 6 ? 0 : kind < 7 ? 1 : kind < 8 ? 2 : 3;
            std::vector<uint8_t> b = g.unit(kind);
            if (ETH_MODE) {
                // packets: padding after the frame, truncation, junk first byte
                if (g.coin(0.3)) {
                    int pad = g.rnd(1, 40);
                    for (int i = 0; i < pad; i++) b.push_back((uint8_t)g.rnd(0, 255));
                }
                if (g.coin(0.05) && b.size() > 2) b.resize(g.rnd(1, (int)b.size() - 1));
                int gap0 = g.rnd(0, 20);
                uint64_t mac = t.rng() & 0xFFFFFFFFFFFFull;
                for (size_t i = 0; i < b.size(); i++)
                    in.push_back({b[i], i == 0 ? gap0 : (g.coin(0.05) ? g.rnd(1, 5) : 0), i + 1 == b.size(), mac});
            } else {
                for (size_t i = 0; i < b.size(); i++) {
                    int gap = g.coin(0.5) ? g.rnd(2, 4) : g.rnd(4, 12);  // slower than the consumer
                    if (IDLE_CYCLES > 0 && g.coin(0.004)) gap = IDLE_CYCLES + g.rnd(20, 200);  // timeout
                    else if (IDLE_CYCLES > 0 && g.coin(0.01)) gap = IDLE_CYCLES / 2;
                    else if (IDLE_CYCLES > 0 && g.coin(0.004)) gap = IDLE_CYCLES - g.rnd(0, 1);  // exact edge
                    in.push_back({b[i], gap, false});
                }
            }
        }
        // end with good frames after a long gap (flushes a pending timeout)
        for (int k = 0; k < 3; k++) {
            std::vector<uint8_t> b = g.frame(g.plen()).encode();
            for (size_t i = 0; i < b.size(); i++)
                in.push_back({b[i], i == 0 ? (ETH_MODE ? 5 : 2 * IDLE_CYCLES + 50) : 0, ETH_MODE && i + 1 == b.size()});
        }
        Counts c;
        std::vector<Desc> exp = model(in, c);
        want.good += c.good;
        want.crc += c.crc;
        want.frame += c.frame;
        for (auto& d : exp) t.expect.push_back(d);
        t.feed(in);
        t.run_until_idle(3000);
        CHECK(t.expect.empty(), "round %d: %zu frames never delivered", round, t.expect.size());
        t.expect.clear();
        CHECK_EQ(t.got.good, want.good, "ev_good count");
        CHECK_EQ(t.got.crc, want.crc, "ev_crc_error count");
        CHECK_EQ(t.got.frame, want.frame, "ev_frame_error count");
    }

    // 3. reset in the middle of a frame, then good frames
    {
        std::vector<uint8_t> b = g.frame(300).encode();
        std::vector<In> part;
        int cut = g.rnd(3, (int)b.size() - 2);
        for (int i = 0; i < cut; i++) part.push_back({b[i], 0, false});
        t.feed(part);
        while (!t.src.empty()) t.cycle();
        for (int i = 0; i < 3; i++) t.cycle(true);
        t.src.clear();
        t.offered = false;
        std::vector<In> in;
        for (int k = 0; k < 5; k++) {
            auto f = g.frame(g.plen()).encode();
            for (size_t i = 0; i < f.size(); i++) in.push_back({f[i], i == 0 ? 3 : 0, ETH_MODE && i + 1 == f.size()});
        }
        Counts c;
        for (auto& d : model(in, c)) t.expect.push_back(d);
        Counts before = t.got;
        t.feed(in);
        t.run_until_idle(3000);
        CHECK(t.expect.empty(), "after reset: %zu frames never delivered", t.expect.size());
        CHECK_EQ(t.got.good - before.good, c.good, "ev_good after reset");
    }
    std::printf("%s: %llu good, %llu CRC errors, %llu framing errors, %llu overflows\n", name,
                (unsigned long long)t.got.good, (unsigned long long)t.got.crc,
                (unsigned long long)t.got.frame, (unsigned long long)t.got.ovf);
    return tb_finish(name);
}
