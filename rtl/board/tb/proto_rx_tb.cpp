// proto_rx_tb.cpp - Verilator bench for rtl/board/proto_rx.v (UART stream
// receiver with a committed frame queue)
//
// Build (the -D values must match the -G values):
//   verilator --cc --exe --build -Wall -GIDLE_CYCLES=400 \
//     -CFLAGS "-I../../lib/tb -DIDLE_CYCLES=400" \
//     proto_rx.v ../lib/crc32.v tb/proto_rx_tb.cpp
//
// A software reference parser implements docs/protocol.md section 1: SOF
// hunt, header, length check, CRC, idle timeout, and after ANY drop (bad
// length, bad CRC, timeout) hunting restarts at the next byte (the
// dropped candidate's bytes are not rescanned). It predicts from the input
// bytes which frames must come out and how many CRC and framing errors
// must be pulsed.
//
// The DUT is fed the same bytes with random gaps (long gaps inside frames
// for the idle timeout, 100 clocks past its edge) and its outputs are
// consumed with random back-pressure: payload read while the descriptor is
// offered, descriptor taken afterwards (m_axis_tready only while a
// payload byte is still wanted, as PREFETCH = 0 requires). Checked: every descriptor and payload byte in order
// (a frame the DUT answers busy or discards for lack of room is skipped
// and counted), valid/ready stability, pulse counts. Streams: good frames
// (lengths 0..MAX_PAYLOAD), bad CRC, oversize lengths, garbage with false
// SOFs, frames that lose a byte, idle timeouts. Then a false SOF that
// swallows exactly the frame its claimed length reaches into (the frames
// after it survive); the no-room path: with the consumer stalled, every
// delivered descriptor must be a sent frame (normal ones with their
// payload, busy ones without), ev_good counting the normal ones, exactly
// the first min(FRAMES, sent) frames held and the others discarded whole,
// without CRC or framing errors; and a reset in the middle of a frame.
#include <algorithm>
#include <deque>
#include <vector>

#include "Vproto_rx.h"
#include "proto_util.h"
#include "tb_util.h"

#ifndef FRAMES
#define FRAMES 4
#endif
#ifndef IDLE_CYCLES
#define IDLE_CYCLES 400
#endif
// TICK_CLKS > 1: the idle timer steps on idle_tick, driven every TICK_CLKS
// clocks (it then times out a little early, never more than TICK_CLKS)
#ifndef TICK_CLKS
#define TICK_CLKS 1
#endif
// CRC_SERIAL = 1 (bit-serial CRC) needs its input bytes at least 9 clocks
// apart (a UART byte is 80 or more): every gap is stretched to 8 idle
// clocks or more
// CRC_SERIAL = 2 (stepped by the line's receiver): the bench steps each
// byte's 8 data bits in (crc_step, crc_d, LSB first) in the 8 clocks
// before it offers the byte, as uart_rx does while the character arrives
#if defined(CRC_SERIAL) && CRC_SERIAL >= 2
static const bool LINE_CRC = true;
#else
static const bool LINE_CRC = false;
#endif
#if defined(CRC_SERIAL) && CRC_SERIAL
static const int MIN_GAP = 8;
#else
static const int MIN_GAP = 0;
#endif
static const int MAXP = 1024;
// a gap this long inside a frame times out
static const int LONG_GAP = IDLE_CYCLES + 100;

struct In {
    uint8_t b;
    int gap;  // idle cycles before the byte is offered
};

struct Desc {
    uint8_t type;
    uint16_t seq;
    int len;
    bool busy;
    std::vector<uint8_t> payload;
};

struct Counts {
    uint64_t good = 0, crc = 0, frame = 0, ovf = 0;
};

// Reference parser: the frames that must be delivered, in order.
static std::vector<Desc> model(const std::vector<In>& in, Counts& c) {
    std::vector<Desc> out;
    enum { HUNT, HDR, PAY, CRC } st = HUNT;
    std::vector<uint8_t> cand;     // bytes of the candidate after its SOF
    int len = 0;
    auto drop = [&](bool framing) {
        (framing ? c.frame : c.crc)++;
        cand.clear();
        st = HUNT;
    };
    auto parse = [&](uint8_t b) {
        if (st == HUNT) {
            if (b == SOF) {
                st = HDR;
                cand.clear();
            }
            return;
        }
        cand.push_back(b);
        if (st == HDR && cand.size() == 6) {
            len = cand[4] | cand[5] << 8;
            if (len > MAXP) return drop(true);
            st = len ? PAY : CRC;
        } else if (st == PAY && (int)cand.size() == 6 + len) {
            st = CRC;
        } else if (st == CRC && (int)cand.size() == 10 + len) {
            if (g_crc.of(cand.data(), 6 + len) == get_u32(cand, 6 + len)) {
                c.good++;
                out.push_back({cand[0], (uint16_t)(cand[2] | cand[3] << 8), len, false,
                               std::vector<uint8_t>(cand.begin() + 6, cand.begin() + 6 + len)});
                cand.clear();
                st = HUNT;
            } else {
                drop(false);
            }
        }
    };
    for (auto& x : in) {
        if (st != HUNT && IDLE_CYCLES > 0 && x.gap >= LONG_GAP) drop(true);
        parse(x.b);
    }
    return out;
}

struct Bench {
    Tb<Vproto_rx> tb;
    std::mt19937_64 rng;
    std::deque<In> src;
    int wait = 0;
    std::deque<Desc> expect;
    size_t rd = 0;                  // payload bytes read for the offered descriptor
    double desc_p = 1.0, data_p = 1.0;
    bool checking = true;
    bool stall = false;
    Counts got;
    std::vector<Desc> seen;         // descriptors taken (with the payload read)
    std::vector<uint8_t> cur;
    bool matched = false;           // expect.front() is the offered descriptor
    uint64_t discarded = 0;         // expected frames skipped (discarded by the DUT)
    uint64_t busy = 0;              // expected frames delivered busy (no payload)
    bool prev_dstall = false, prev_pstall = false;
    uint64_t prev_desc = 0;
    uint8_t prev_data = 0;

    Bench(const TbOpts& o) : tb("proto_rx", o), rng(o.seed) {}
    bool coin(double p) { return std::uniform_real_distribution<double>(0, 1)(rng) < p; }
    int rnd(int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); }

    uint64_t desc_word() {
        auto* m = tb.m.get();
        return (uint64_t)m->m_desc_type | (uint64_t)m->m_desc_seq << 8 | (uint64_t)m->m_desc_len << 24 |
               (uint64_t)m->m_desc_busy << 40;
    }

    uint64_t ncyc = 0;   // clocks run

    void cycle(bool rst = false) {
        auto* m = tb.m.get();
        bool offer = false;
        bool cstep = false, cd = false;
        if (!src.empty()) {
            if (LINE_CRC && wait >= 1 && wait <= 8) {
                cstep = true;
                cd = (src.front().b >> (8 - wait)) & 1;
            }
            if (wait > 0) wait--;
            else offer = true;
        }
        m->crc_step = cstep;
        m->crc_d = cd;
        m->rst = rst;
        m->idle_tick = (ncyc % TICK_CLKS) == 0;
        m->s_axis_tvalid = offer;
        m->s_axis_tdata = offer ? src.front().b : (uint8_t)rnd(0, 255);
        bool need = m->m_desc_valid && !m->m_desc_busy && rd < m->m_desc_len;
        m->m_axis_tready = !stall && need && coin(data_p);
        m->m_desc_ready = !stall && m->m_desc_valid && !need && coin(desc_p);
        tb.settle();

        if (prev_dstall) {
            CHECK(m->m_desc_valid, "m_desc_valid dropped without a transfer");
            CHECK_EQ(desc_word(), prev_desc, "descriptor changed while offered");
        }
        if (prev_pstall) {
            CHECK(m->m_axis_tvalid, "m_axis_tvalid dropped without a transfer");
            CHECK_EQ(m->m_axis_tdata, prev_data, "m_axis_tdata changed while stalled");
        }
        CHECK(!(m->m_axis_tvalid && !m->m_desc_valid), "payload byte without a descriptor");
        CHECK_EQ(m->s_axis_tready, 1, "s_axis_tready");
        if (!rst) {
            got.good += m->ev_good;
            got.crc += m->ev_crc_error;
            got.frame += m->ev_frame_error;
            got.ovf += m->ev_overflow;
        }
        if (checking && m->m_desc_valid && !matched && !rst) {
            // a good frame that ended while FRAMES were held, or whose
            // header found no room, was discarded (ev_overflow): skip it
            while (!expect.empty() && !(expect.front().type == m->m_desc_type &&
                                        expect.front().seq == m->m_desc_seq &&
                                        (int)expect.front().payload.size() == (int)m->m_desc_len)) {
                expect.pop_front();
                discarded++;
            }
            matched = true;
        }
        if (m->m_axis_tvalid && m->m_axis_tready && !rst) {
            if (checking) {
                CHECK(!expect.empty() && rd < expect.front().payload.size(), "payload byte beyond the frame");
                if (!expect.empty() && rd < expect.front().payload.size())
                    CHECK_EQ(m->m_axis_tdata, expect.front().payload[rd], "payload byte");
            }
            cur.push_back(m->m_axis_tdata);
            rd++;
        }
        if (m->m_desc_valid && m->m_desc_ready && !rst) {
            Desc d{m->m_desc_type, m->m_desc_seq, (int)m->m_desc_len, (bool)m->m_desc_busy, cur};
            seen.push_back(d);
            if (checking) {
                CHECK(!expect.empty(), "unexpected descriptor type 0x%02x seq %u", d.type, d.seq);
                if (!expect.empty()) {
                    Desc& e = expect.front();
                    CHECK_EQ(d.type, e.type, "descriptor type");
                    CHECK_EQ(d.seq, e.seq, "descriptor seq");
                    CHECK_EQ(d.len, e.len, "descriptor len");
                    if (d.busy) busy++;  // no room for its payload
                    CHECK_EQ(cur.size(), d.busy ? 0 : e.payload.size(), "payload bytes read");
                    expect.pop_front();
                }
            }
            cur.clear();
            rd = 0;
            matched = false;
        }
        if (offer && !rst) {
            src.pop_front();
            wait = src.empty() ? 0 : src.front().gap;
        }
        prev_dstall = m->m_desc_valid && !m->m_desc_ready && !rst;
        prev_pstall = m->m_axis_tvalid && !m->m_axis_tready && !rst;
        prev_desc = desc_word();
        prev_data = m->m_axis_tdata;
        tb.tick();
        ncyc++;
    }

    void feed(const std::vector<In>& in) {
        bool was_empty = src.empty();
        for (auto x : in) {
            x.gap = std::max(x.gap, MIN_GAP);
            src.push_back(x);
        }
        if (was_empty && !src.empty()) wait = src.front().gap;
    }
    // run until the input is consumed, any candidate has timed out and the
    // consumer has drained every delivered frame
    void run_until_idle() {
        long guard = 0;
        while (!src.empty() && guard++ < 50000000) cycle();
        for (int i = 0; i < LONG_GAP + 3000; i++) cycle();
        if (stall) return;
        guard = 0;
        while ((tb.m->m_desc_valid || tb.m->in_frame) && guard++ < 1000000) cycle();
        CHECK(guard < 1000000, "DUT never drained");
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
        case 2: {  // a frame that lost a byte (its successor must survive)
            b = frame(rnd(1, 300)).encode();
            b.erase(b.begin() + rnd(1, (int)b.size() - 1));
            return b;
        }
        case 3: {  // oversize length, sometimes with SOF bytes inside the bad header
            b = frame(0).encode();
            uint16_t len = (uint16_t)rnd(MAXP + 1, 65535);
            b[5] = (uint8_t)len;
            b[6] = (uint8_t)(len >> 8);
            if (coin(0.5)) b[rnd(1, 4)] = SOF;
            return b;
        }
        case 4: {  // a false SOF with a plausible length just before good frames
            b.push_back(SOF);
            for (int i = 0; i < 4; i++) b.push_back((uint8_t)rnd(0, 255));
            int len = rnd(20, 600);
            b.push_back((uint8_t)len);
            b.push_back((uint8_t)(len >> 8));
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

    for (int i = 0; i < 4; i++) t.cycle(true);
    Counts want;
    uint64_t swallowed = 0, mixed_discarded = 0;

    // 1. mixed streams, checked against the model, several consumer speeds
    for (int round = 0; round < 8; round++) {
        t.desc_p = (round & 2) ? 0.3 : 1.0;
        t.data_p = (round & 4) ? 0.4 : 1.0;
        std::vector<In> in;
        for (int u = 0; u < 40; u++) {
            int k = g.rnd(0, 19);
            int kind = k < 10 ? 0 : k < 12 ? 1 : k < 14 ? 2 : k < 15 ? 3 : k < 17 ? 4 : 5;
            std::vector<uint8_t> b = g.unit(kind);
            for (size_t i = 0; i < b.size(); i++) {
                int gap = g.coin(0.5) ? g.rnd(2, 4) : g.rnd(4, 12);  // slower than the consumer
                if (IDLE_CYCLES > 0 && g.coin(0.003)) gap = LONG_GAP + g.rnd(0, 200);  // timeout
                else if (IDLE_CYCLES > 0 && g.coin(0.01)) gap = IDLE_CYCLES / 2;
                in.push_back({b[i], gap});
            }
        }
        for (int k = 0; k < 3; k++) {  // end with good frames after a long gap
            std::vector<uint8_t> b = g.frame(g.plen()).encode();
            for (size_t i = 0; i < b.size(); i++) in.push_back({b[i], i == 0 ? LONG_GAP + 50 : 3});
        }
        Counts c;
        std::vector<Desc> exp = model(in, c);
        want.good += c.good;
        want.crc += c.crc;
        want.frame += c.frame;
        for (auto& d : exp) t.expect.push_back(d);
        t.feed(in);
        t.run_until_idle();
        t.discarded += t.expect.size();  // discarded after the last delivered one
        t.expect.clear();
        // every good frame delivered in order, except those discarded
        // (FRAMES held) or delivered busy (no room for the payload), one
        // ev_overflow each
        CHECK_EQ(t.got.good + t.discarded + t.busy, want.good, "ev_good count + discarded + busy");
        CHECK_EQ(t.got.crc, want.crc, "ev_crc_error count");
        CHECK_EQ(t.got.frame, want.frame, "ev_frame_error count");
        CHECK_EQ(t.got.ovf, t.discarded + t.busy, "ev_overflow count (discarded and busy frames)");
    }

    // 1b. a false SOF (claimed payload 20: its CRC ends 30 bytes after it)
    // swallows the frame it reaches into and nothing after it: hunting
    // restarts after the candidate's last byte, inside that frame, whose
    // remaining bytes hold no SOF here; the frames after it arrive intact
    {
        auto clean = [&](int len) {  // a frame with no SOF byte after its first
            for (;;) {
                Frame f = g.frame(len);
                f.type = 0x10;
                f.flags = 0;
                f.seq = (uint16_t)g.rnd(0, 0xA400);
                for (auto& b : f.payload)
                    if (b == SOF) b = 0x5A;
                std::vector<uint8_t> e = f.encode();
                if (std::find(e.begin() + 1, e.end(), SOF) == e.end()) return f;
            }
        };
        std::vector<In> in;
        for (uint8_t b : std::vector<uint8_t>{SOF, 1, 0, 2, 0, 20, 0}) in.push_back({b, 3});
        std::vector<Frame> fs;
        for (int k = 0; k < 5; k++) {
            fs.push_back(clean(30));
            for (uint8_t b : fs.back().encode()) in.push_back({b, 3});
        }
        Counts c;
        std::vector<Desc> exp = model(in, c);
        CHECK_EQ(exp.size(), 4, "model: the frame under the false candidate is lost, the 4 after it survive");
        for (size_t k = 0; k < exp.size(); k++) CHECK_EQ(exp[k].seq, fs[k + 1].seq, "model: surviving frame");
        swallowed = 1;
        for (auto& d : exp) t.expect.push_back(d);
        uint64_t g0 = t.got.good, c0 = t.got.crc;
        t.desc_p = t.data_p = 1.0;
        t.feed(in);
        t.run_until_idle();
        CHECK(t.expect.empty(), "frames after a false SOF: %zu never delivered", t.expect.size());
        CHECK_EQ(t.got.good - g0, 4, "frames delivered after the false SOF");
        CHECK_EQ(t.got.crc - c0, 1, "the false candidate fails its CRC");
        want = t.got;
        mixed_discarded = t.discarded;
        t.discarded = 0;
    }

    // 2. no room (consumer stalled while frames arrive back to back)
    {
        t.checking = false;
        t.seen.clear();
        Counts before = t.got;
        std::vector<Frame> sent;
        std::vector<In> in;
        for (int k = 0; k < 12; k++) {
            Frame f = g.frame(k % 3 == 0 ? MAXP : g.rnd(0, 700));
            sent.push_back(f);
            for (uint8_t b : f.encode()) in.push_back({b, 1});  // a byte every other clock
        }
        t.stall = true;
        t.feed(in);
        t.run_until_idle();
        t.stall = false;
        t.desc_p = t.data_p = 1.0;
        for (int i = 0; i < 60000; i++) t.cycle();
        uint64_t good = t.got.good - before.good, ovf = t.got.ovf - before.ovf;
        CHECK(ovf > 0, "no overflow with a stalled consumer");
        size_t k = 0;
        uint64_t busy = 0, normal = 0;
        for (size_t i = 0; i < t.seen.size(); i++) {
            const Desc& d = t.seen[i];
            while (k < sent.size() && !(sent[k].type == d.type && sent[k].seq == d.seq)) k++;
            CHECK(k < sent.size(), "descriptor %zu is not a sent frame", i);
            if (k >= sent.size()) break;
            CHECK_EQ(d.len, sent[k].payload.size(), "descriptor len");
            if (d.busy) {
                busy++;
                CHECK_EQ(d.payload.size(), 0, "payload of a busy descriptor");
            } else {
                normal++;
                CHECK(d.payload == sent[k].payload, "payload of frame %zu", i);
            }
            k++;
        }
        CHECK_EQ(normal, good, "normal descriptors == ev_good");
        CHECK(normal >= 2, "only %llu frames delivered with a stalled consumer", (unsigned long long)normal);
        // exactly the first FRAMES frames are held (with their payload or
        // busy: the header reserve always has room for them), the others
        // are discarded whole (no frame is mangled into a CRC or framing
        // error)
        CHECK_EQ(t.seen.size(), std::min<size_t>(FRAMES, sent.size()), "descriptors delivered with a stalled consumer");
        for (size_t i = 0; i < t.seen.size() && i < sent.size(); i++)
            CHECK_EQ(t.seen[i].seq, sent[i].seq, "seq of a held frame");
        CHECK_EQ(t.got.crc - before.crc, 0, "CRC errors with a stalled consumer");
        CHECK_EQ(t.got.frame - before.frame, 0, "framing errors with a stalled consumer");
        std::printf("proto_rx no-room: %zu sent, %llu delivered, %llu busy, %llu overflow pulses\n", sent.size(),
                    (unsigned long long)normal, (unsigned long long)busy, (unsigned long long)ovf);
        t.checking = true;
        want = t.got;
    }

    // 3. reset in the middle of a frame, then good frames
    {
        std::vector<uint8_t> b = g.frame(300).encode();
        std::vector<In> part;
        int cut = g.rnd(3, (int)b.size() - 2);
        for (int i = 0; i < cut; i++) part.push_back({b[i], 0});
        t.feed(part);
        while (!t.src.empty()) t.cycle();
        for (int i = 0; i < 3; i++) t.cycle(true);
        t.src.clear();
        t.cur.clear();
        t.rd = 0;
        std::vector<In> in;
        for (int k = 0; k < 5; k++)
            for (uint8_t x : g.frame(g.plen()).encode()) in.push_back({x, 3});
        Counts c;
        for (auto& d : model(in, c)) t.expect.push_back(d);
        Counts before = t.got;
        uint64_t busy0 = t.busy;
        t.feed(in);
        t.run_until_idle();
        CHECK(t.expect.empty(), "after reset: %zu frames never delivered", t.expect.size());
        // a frame whose header ends while a large one is still queued may
        // be refused room (busy: its payload is not stored), which happens
        // with slow input (CRC_SERIAL: bytes 9 clocks apart) and two
        // maximal frames in a row
        CHECK_EQ(t.got.good - before.good + (t.busy - busy0), c.good, "ev_good + busy after reset");
        CHECK_EQ(t.got.ovf - before.ovf, t.busy - busy0, "ev_overflow after reset (busy frames)");
    }
    std::printf("proto_rx: %llu discarded, %llu busy in the mixed streams (FRAMES held, no room)\n",
                (unsigned long long)mixed_discarded, (unsigned long long)t.busy);
    std::printf("proto_rx: %llu good, %llu CRC errors, %llu framing errors, %llu overflows, %llu swallowed by a false SOF\n",
                (unsigned long long)t.got.good, (unsigned long long)t.got.crc, (unsigned long long)t.got.frame,
                (unsigned long long)t.got.ovf, (unsigned long long)swallowed);
    return tb_finish("proto_rx");
}
