// uart_rx_tb.cpp - Verilator bench for rtl/uart/uart_rx.v
//
// Build and run from rtl/ (--trace-fst and --trace give /tmp/uart_rx/uart_rx.fst):
//   verilator --cc --exe --build -j 2 -Wall --trace-fst --Mdir /tmp/uart_rx \
//     -CFLAGS -I$PWD/lib/tb -GCLKS_PER_BIT=16 -CFLAGS -DCLKS_PER_BIT=16 \
//     $PWD/uart/uart_rx.v $PWD/uart/tb/uart_rx_tb.cpp
//   (cd /tmp/uart_rx && ./Vuart_rx --trace --seed 1)
// (the -G and -D values must match; the Go test uses other values too)
//
// The bench builds the rxd waveform itself (an ideal 8N1 transmitter with a
// fractional bit period, so baud-rate error can be applied) and checks:
//   - clean bytes with random gaps and random back-pressure, all in order;
//   - +-3% baud-rate error with back-to-back characters;
//   - low glitches of 1 .. CLKS_PER_BIT/2-1 clocks: no byte, no frame error;
//   - bad stop bits and a line break: exactly one frame_error pulse each;
//   - overrun: with ready low, the first byte is held (stable) and each later
//     byte gives one overrun pulse;
//   - random noise on the line, then idle, then valid bytes decode;
//   - reset in the middle of a character and while a byte is held;
//   - throughout: each character's 8 data bits come out on bit_d with a
//     bit_step pulse each, LSB first, before its byte is offered (equal to
//     it), dropped for a bad stop bit or counted as an overrun.
// With BUFFER = 0 (no output buffer) the consumer is always ready (the
// overrun sections are left out) and every byte must be offered for one
// clock only, with no overrun pulse ever.
#include <deque>
#include <vector>

#include "Vuart_rx.h"
#include "tb_util.h"

#ifndef CLKS_PER_BIT
#define CLKS_PER_BIT 104
#endif
#ifndef BUFFER
#define BUFFER 1
#endif
static const int CPB = CLKS_PER_BIT;

struct Bench {
    Tb<Vuart_rx> tb;
    std::mt19937_64 rng;
    std::deque<uint8_t> expect;
    bool checking = true;    // false: output bytes are discarded, not checked
    double ready_p = 1.0;    // probability that m_axis_tready is high
    uint64_t fe = 0, ov = 0, got = 0;
    bool prev_stall = false;
    bool prev_valid = false;   // BUFFER = 0: tvalid in the previous clock
    uint8_t prev_data = 0;
    bool force_ready = false;  // overrides ready_p for one cycle
    unsigned bacc = 0;         // data bits stepped out (bit_step, bit_d) since the last character
    int nbits = 0;

    Bench(const TbOpts& o) : tb("uart_rx", o), rng(o.seed) {}

    bool coin(double p) { return std::uniform_real_distribution<double>(0, 1)(rng) < p; }
    int rnd(int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); }

    void cycle(int rxd, bool rst = false) {
        auto* m = tb.m.get();
        m->rxd = rxd;
        m->rst = rst;
        m->m_axis_tready = force_ready || coin(ready_p) || !BUFFER;
        force_ready = false;
        tb.settle();
        if (!BUFFER) {
            CHECK(!(m->m_axis_tvalid && prev_valid), "BUFFER = 0: tvalid high for two clocks");
            CHECK(!m->overrun, "BUFFER = 0: overrun");
            prev_valid = m->m_axis_tvalid && !rst;
        }
        // overrun: only legal if a byte was held and not taken in the
        // previous cycle; the dropped byte is the one after the held one.
        if (m->overrun) {
            CHECK(prev_stall, "overrun without a stalled byte");
            if (checking && expect.size() >= 2) expect.erase(expect.begin() + 1);
        }
        if (prev_stall) {
            CHECK(m->m_axis_tvalid, "tvalid dropped without a transfer");
            CHECK_EQ(m->m_axis_tdata, prev_data, "tdata changed while stalled");
        }
        // the stepped bits: 8 per character, before its end
        bool done = (m->m_axis_tvalid && !prev_stall) || m->frame_error || m->overrun;
        if (done) {
            CHECK_EQ(nbits, 8, "data bits stepped before the character ended");
            if (m->m_axis_tvalid && !prev_stall) CHECK_EQ(bacc, (unsigned)m->m_axis_tdata, "stepped bits");
            bacc = 0;
            nbits = 0;
        }
        if (m->bit_step) {
            CHECK(nbits < 8, "more than 8 data bits stepped");
            bacc |= (unsigned)m->bit_d << nbits;
            nbits++;
        }
        if (rst) {
            bacc = 0;
            nbits = 0;
        }
        if (m->m_axis_tvalid && m->m_axis_tready) {
            got++;
            if (checking) {
                CHECK(!expect.empty(), "unexpected byte 0x%02x", m->m_axis_tdata);
                if (!expect.empty()) {
                    CHECK_EQ(m->m_axis_tdata, expect.front(), "received byte");
                    expect.pop_front();
                }
            }
        }
        fe += m->frame_error;
        ov += m->overrun;
        prev_stall = m->m_axis_tvalid && !m->m_axis_tready && !rst;
        prev_data = m->m_axis_tdata;
        tb.tick();
    }

    void idle(int n) { for (int i = 0; i < n; i++) cycle(1); }

    // one character: start, 8 data LSB first, stop, with bit period `per`
    // clocks (fractional allowed); expected bytes are queued by the caller.
    void send(uint8_t b, double per = CPB, int stop = 1) {
        int bits[10];
        bits[0] = 0;
        for (int i = 0; i < 8; i++) bits[i + 1] = (b >> i) & 1;
        bits[9] = stop;
        long start = 0;
        for (int k = 0; k < 10; k++) {
            long end = std::lround((k + 1) * per);
            for (long c = start; c < end; c++) cycle(bits[k]);
            start = end;
        }
    }
    void send_good(uint8_t b, double per = CPB) {
        expect.push_back(b);
        send(b, per);
    }
    // idle long enough to finish any character in progress, outputs discarded
    void flush() {
        bool c = checking;
        double rp = ready_p;
        checking = false;
        ready_p = 1.0;
        idle(12 * CPB);
        checking = c;
        ready_p = rp;
        CHECK(!tb.m->busy, "busy after a long idle line");
        CHECK(!tb.m->m_axis_tvalid, "tvalid after a long idle line with ready high");
    }
    void expect_drained(const char* phase) {
        idle(2 * CPB);
        CHECK(expect.empty(), "%s: %zu bytes never received", phase, expect.size());
        expect.clear();
    }
};

int main(int argc, char** argv) {
    Verilated::commandArgs(argc, argv);
    TbOpts o = tb_parse(argc, argv);
    Bench b(o);
    char name[32];
    std::snprintf(name, sizeof name, BUFFER ? "uart_rx_%d" : "uart_rx_%d_nobuf", CPB);

    for (int i = 0; i < 4; i++) b.cycle(1, true);
    b.idle(2 * CPB);

    // 1. clean bytes, random gaps (often back to back), random ready
    b.ready_p = 0.5;
    uint64_t fe0 = b.fe, ov0 = b.ov;
    const uint8_t corners[] = {0x00, 0xFF, 0x55, 0xAA, 0x01, 0x80, 0x7F, 0xFE};
    for (uint8_t c : corners) b.send_good(c);
    for (int i = 0; i < 300; i++) {
        b.send_good((uint8_t)b.rnd(0, 255));
        if (b.coin(0.5)) b.idle(b.rnd(0, 2 * CPB));
    }
    b.expect_drained("clean");

    // 2. baud-rate error, back to back
    for (double e : {-0.03, 0.03, -0.02, 0.02, 0.01, -0.01}) {
        for (int i = 0; i < 40; i++) b.send_good((uint8_t)b.rnd(0, 255), CPB * (1 + e));
        b.idle(CPB);
    }
    b.expect_drained("baud error");
    CHECK_EQ(b.fe - fe0, 0, "frame errors on clean line");
    CHECK_EQ(b.ov - ov0, 0, "overruns with a ready consumer");

    // 3. glitches shorter than half a bit are not start bits
    b.ready_p = 1.0;
    uint64_t got0 = b.got;
    fe0 = b.fe;
    for (int g = 1; g < CPB / 2; g++) {
        for (int i = 0; i < g; i++) b.cycle(0);
        b.idle(b.rnd(CPB / 2, 2 * CPB));
        CHECK(!b.tb.m->busy, "still busy after a %d-clock glitch", g);
    }
    CHECK_EQ(b.got - got0, 0, "bytes decoded from glitches");
    CHECK_EQ(b.fe - fe0, 0, "frame errors from glitches");
    for (int i = 0; i < 20; i++) b.send_good((uint8_t)b.rnd(0, 255));
    b.expect_drained("after glitches");

    // 4. framing errors: bad stop bits (dropped, one pulse each) and a break
    fe0 = b.fe;
    int bad = 0;
    b.ready_p = 0.7;
    for (int i = 0; i < 40; i++) {
        if (b.coin(0.5)) {
            b.send((uint8_t)b.rnd(0, 255), CPB, 0);
            bad++;
            b.idle(b.rnd(CPB, 2 * CPB));
        } else {
            b.send_good((uint8_t)b.rnd(0, 255));
        }
    }
    for (int i = 0; i < 30 * CPB; i++) b.cycle(0);  // break: 3 characters low
    bad++;
    b.idle(CPB);
    b.send_good(0xA5);
    b.expect_drained("frame errors");
    CHECK_EQ(b.fe - fe0, bad, "frame_error pulses");

    // 5. overrun: ready low, three characters; the first is held
    if (BUFFER) {
    b.ready_p = 0.0;
    ov0 = b.ov;
    b.expect.push_back(0x3C);
    b.send(0x3C);
    b.send(0xC3);
    b.send(0x99);
    b.idle(CPB);
    CHECK_EQ(b.ov - ov0, 2, "overrun pulses");
    CHECK(b.tb.m->m_axis_tvalid, "held byte lost");
    b.ready_p = 0.3;
    b.expect_drained("overrun");

    // 5b. ready raised for one cycle at every offset around the end of the
    //     next character: the transfer and the new byte may coincide, which
    //     must not be an overrun (the checker enforces this).
    ov0 = b.ov;
    int ovs = 0;
    for (int off = 9 * CPB; off < 10 * CPB + 8; off++) {
        b.ready_p = 0.0;
        b.send_good((uint8_t)b.rnd(0, 255));      // held
        uint8_t x = (uint8_t)b.rnd(0, 255);
        b.expect.push_back(x);
        for (int c = 0; c < 10 * CPB + 16; c++) {
            if (c == off) b.force_ready = true;
            int bit = c / CPB;
            b.cycle(bit == 0 ? 0 : bit < 9 ? (x >> (bit - 1)) & 1 : 1);
        }
        ovs += (b.ov - ov0) != 0;
        ov0 = b.ov;
        b.ready_p = 1.0;
        b.expect_drained("ready sweep");
    }
    CHECK(ovs > 0 && ovs < CPB + 8, "ready sweep: %d overruns", ovs);
    }

    // 5c. one-clock spikes inside every bit (a mid-bit spike hits at most
    //     one of the three samples, so the majority vote removes it)
    b.ready_p = 0.5;
    fe0 = b.fe;
    for (int i = 0; i < 100; i++) {
        uint8_t x = (uint8_t)b.rnd(0, 255);
        b.expect.push_back(x);
        for (int k = 0; k < 10; k++) {
            int v = k == 0 ? 0 : k < 9 ? (x >> (k - 1)) & 1 : 1;
            int sp = b.coin(0.5) ? CPB / 2 : b.rnd(2, CPB - 3);
            for (int c = 0; c < CPB; c++) b.cycle(c == sp ? !v : v);
        }
        b.idle(b.rnd(0, CPB));
    }
    b.expect_drained("spikes");
    CHECK_EQ(b.fe - fe0, 0, "frame errors from spikes");

    // 6. noise, idle, then valid bytes must decode
    for (int rep = 0; rep < 6; rep++) {
        b.checking = false;
        b.ready_p = 0.5;
        for (int n = 0; n < 60; n++) {
            int lvl = b.rnd(0, 1), len = b.coin(0.5) ? b.rnd(1, 3) : b.rnd(1, 2 * CPB);
            for (int i = 0; i < len; i++) b.cycle(lvl);
        }
        b.flush();
        b.checking = true;
        for (int i = 0; i < 30; i++) b.send_good((uint8_t)b.rnd(0, 255));
        b.expect_drained("after noise");
    }

    // 7. reset in the middle of a character, and while a byte is held
    for (int rep = 0; rep < 20; rep++) {
        b.ready_p = 0.0;
        b.checking = false;
        b.send((uint8_t)b.rnd(0, 255));           // held in the output buffer
        int cut = b.rnd(1, 10 * CPB - 1);
        uint8_t x = (uint8_t)b.rnd(0, 255);
        // replay the first `cut` clocks of a character, then reset
        int bits[10] = {0};
        for (int i = 0; i < 8; i++) bits[i + 1] = (x >> i) & 1;
        bits[9] = 1;
        for (int c = 0; c < cut; c++) b.cycle(bits[c / CPB]);
        int nrst = b.rnd(1, 3);
        for (int i = 0; i < nrst; i++) b.cycle(bits[(cut + i) / CPB < 10 ? (cut + i) / CPB : 9], true);
        b.tb.settle();
        CHECK(!b.tb.m->m_axis_tvalid, "tvalid after reset");
        CHECK(!b.tb.m->busy, "busy after reset");
        for (int c = cut + nrst; c < 10 * CPB; c++) b.cycle(bits[c / CPB]);
        b.flush();
        b.checking = true;
        b.ready_p = 0.5;
        for (int i = 0; i < 5; i++) b.send_good((uint8_t)b.rnd(0, 255));
        b.expect_drained("after reset");
    }

    return tb_finish(name);
}
