// proto_tx_tb.cpp - Verilator bench for rtl/board/proto_tx.v
//
// Build: verilator --cc --exe --build -Wall -CFLAGS -I../../lib/tb \
//          proto_tx.v ../lib/crc32.v tb/proto_tx_tb.cpp
//
// Responses of random length (0 = empty, 1, FRAG_BYTES-1, FRAG_BYTES,
// FRAG_BYTES+1, multiples, random up to 3*FRAG_BYTES) with random type,
// seq, link and MAC are written with random gaps; the side band of the
// next response is applied right after the last byte of the previous one
// was taken (proto_tx latches it per fragment), as the engine does. The output is decoded as
// protocol frames (SOF, header, payload, CRC) and checked against the
// responses: type, seq, fragment flags (MORE on every fragment but the
// last, index counting from 0), length (<= FRAG_BYTES), payload bytes,
// tlast on the last CRC byte only, m_link/m_mac, one frame_sent per frame,
// s_axis_tready low while a fragment is sent, stability under random
// back-pressure. With the output always ready (the Ethernet MAC's case)
// m_axis_tvalid must stay high from the first byte of a frame to its last
// (not with CRC_SERIAL, whose bytes come at most 9 clocks apart).
// Finally a reset in the middle of a frame.
//
// CRC_SERIAL = 2 (the CRC stepped by the line's transmitter): the bench
// plays uart_tx's part, stepping the 8 data bits of every byte taken on
// crc_step/crc_d, LSB first, at random clocks (UART-paced: one per bit
// time) after the transfer, and takes the next byte 2 clocks or more
// after the last step (uart_tx: 2 bit times); a byte offered may change
// only in the second clock after a step (a CRC byte follows the register).
//
// Every clock the handshake timing is checked against a model of the
// documented interface: s_axis_tready low from the clock after a fragment's
// closing byte to its frame's last transfer and high the clock after; busy
// high from the clock after any accepted transfer to the frame's last
// transfer, low the clock after it; frame_sent exactly the clock after the
// last transfer; the SOF offered 2 clocks after the closing byte
// (CRC_SERIAL: within 10, the previous frame's CRC rotations may still
// run); without CRC_SERIAL m_axis_tvalid never drops inside a frame,
// whatever the back-pressure.
//
// The training board's traffic (rtl/trainboard/train_proto.v, issue 12):
// its answers (TRAIN_INFO 88 bytes, 4- and 8-byte answers and errors,
// TRAIN_READ readbacks of 432 and 6,912 bytes and the largest, 131,072
// bytes = 128 fragments) produced eagerly (each response's first byte
// offered the clock s_axis_tready rises, its side band changed the clock
// after the previous response's last byte) or with the engine's readback
// gaps (2 bytes in 5 clocks), into a sink paced like uart_tx (tready =
// !busy || last clock of the stop bit, 10 bit times a byte).
#include <deque>
#include <vector>

#include "Vproto_tx.h"
#include "proto_util.h"
#include "tb_util.h"

#ifndef FRAG_BYTES
#define FRAG_BYTES 1024
#endif
#ifndef CRC_SERIAL
#define CRC_SERIAL 0
#endif
#define CRC_LINE (CRC_SERIAL >= 2)

struct Resp {
    uint8_t type;
    uint16_t seq;
    int link;
    uint64_t mac;
    std::vector<uint8_t> bytes;
};

struct Bench {
    Tb<Vproto_tx> tb;
    std::mt19937_64 rng;
    std::deque<Resp> todo;     // responses to write
    size_t wpos = 0;           // next byte of todo.front()
    bool active = false;       // side band of todo.front() is applied
    std::deque<Resp> sent;     // responses written, frames expected
    int frag = 0;              // next expected fragment index of sent.front()
    size_t fpos = 0;           // bytes of sent.front() already seen in frames
    FrameDecoder dec{"proto_tx"};
    std::vector<uint8_t> cur;  // bytes of the frame being received
    double valid_p = 1.0, ready_p = 1.0;
    bool eager = false;        // the next response starts at once
    int on = 0, period = 0;    // period > 0: offer on `on` clocks of every `period`
    long phase = 0;
    int uart_cpb = 0;          // > 0: m_axis_tready paced like uart_tx
    long uleft = 0;            // uart_tx model: clocks of the byte being sent left
    std::deque<int> bits;      // CRC_LINE: data bits of the bytes taken still to step
    long since_step = 99;      // CRC_LINE: clocks since the last step
    // the interface timing model (see the header)
    bool e_emit = false, e_busy = false, e_sent = false;
    size_t fill_n = 0;         // bytes of the fragment being filled
    long since_close = -1;     // clocks since the closing byte (-1: no SOF due)
    bool sof_seen = true;
    bool in_frame = false;
    bool prev_stall = false;
    int gap = 0;               // clocks without a byte offered inside a frame
    uint8_t prev_data = 0, prev_last = 0;
    uint64_t frames = 0, pulses = 0;
    Resp side{};               // side band currently driven

    Bench(const TbOpts& o) : tb("proto_tx", o), rng(o.seed) {}
    bool coin(double p) { return std::uniform_real_distribution<double>(0, 1)(rng) < p; }
    int rnd(int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); }

    void cycle(bool rst = false) {
        auto* m = tb.m.get();
        // a new response's side band is applied as soon as the previous
        // response has been written (often while its last fragment is sent)
        if (!active && !todo.empty() && (eager || coin(0.5))) {
            active = true;
            wpos = 0;
            side = todo.front();
        }
        bool offer = active && (period > 0 ? (phase++ % period) < on : coin(valid_p));
        const Resp* r = active ? &todo.front() : nullptr;
        bool empty = r && r->bytes.empty();
        m->rst = rst;
        m->s_type = side.type;
        m->s_seq = side.seq;
        m->s_link = side.link;
        m->s_mac = side.mac;
        m->s_axis_tvalid = offer;
        m->s_axis_tdata = (offer && !empty) ? r->bytes[wpos] : (uint8_t)rng();
        m->s_axis_tlast = offer && (empty || wpos + 1 == r->bytes.size());
        m->s_axis_tuser = offer && empty;
        m->m_axis_tready = uart_cpb > 0 ? uleft <= 1 : coin(ready_p);
#if CRC_LINE
        // the line's transmitter: a data bit per step, the next byte taken
        // 2 clocks or more after the last step (since_step counts from 0
        // the clock after it)
        bool step = !bits.empty() && !rst && (uart_cpb > 0 ? uleft % uart_cpb == 0 : coin(0.5));
        m->crc_step = step;
        m->crc_d = step ? bits.front() : (int)(rng() & 1);
        if (!bits.empty() || since_step < 1) m->m_axis_tready = 0;
#endif
        tb.settle();

        // the interface timing model
        if (!rst) {
            CHECK_EQ(m->s_axis_tready, !e_emit, "s_axis_tready (low from the clock after a closing byte to the frame's end)");
            CHECK_EQ(m->busy, e_busy, "busy");
            CHECK_EQ(m->frame_sent, e_sent, "frame_sent (the clock after a frame's last transfer)");
            if (since_close >= 0 && !sof_seen) {
                since_close++;
                bool offered = m->m_axis_tvalid && m->m_axis_tdata == SOF;
#if CRC_SERIAL == 1
                if (offered) {
                    CHECK(since_close >= 2 && since_close <= 10, "SOF %ld clocks after the closing byte, want 2..10", since_close);
                    sof_seen = true;
                } else {
                    CHECK(!m->m_axis_tvalid && since_close < 10, "no SOF %ld clocks after the closing byte", since_close);
                }
#else
                if (since_close == 2) {
                    CHECK(offered, "SOF not offered 2 clocks after the closing byte");
                    sof_seen = true;
                } else {
                    CHECK(!m->m_axis_tvalid, "a byte offered 1 clock after the closing byte");
                }
#endif
            }
        }

        if (prev_stall) {
            CHECK(m->m_axis_tvalid, "m_axis_tvalid dropped without a transfer");
            if (!CRC_LINE || since_step > 1) CHECK_EQ(m->m_axis_tdata, prev_data, "m_axis_tdata changed while stalled");
            CHECK_EQ(m->m_axis_tlast, prev_last, "m_axis_tlast changed while stalled");
        }
#if CRC_SERIAL == 1
        if (m->m_axis_tvalid || !in_frame || rst) gap = 0;
        else CHECK(++gap <= 8, "more than 8 clocks between the bytes of a frame");
#else
        if (in_frame && !rst) CHECK(m->m_axis_tvalid, "gap inside a frame");
#endif
        if (!rst && m->frame_sent) pulses++;

        if (m->m_axis_tvalid && m->m_axis_tready && !rst) {
            cur.push_back(m->m_axis_tdata);
            in_frame = !m->m_axis_tlast;
            // the frame belongs to the oldest response not fully seen yet
            if (!sent.empty() || !todo.empty()) {
                const Resp& er = !sent.empty() ? sent.front() : todo.front();
                CHECK_EQ(m->m_link, er.link, "m_link");
                CHECK_EQ(m->m_mac, er.mac, "m_mac");
            }
            bool complete = cur.size() >= 7 && cur.size() == (size_t)(11 + (cur[5] | cur[6] << 8));
            CHECK_EQ(m->m_axis_tlast, complete, "m_axis_tlast");
            if (complete || m->m_axis_tlast) {
                for (uint8_t b : cur) dec.byte(b);
                cur.clear();
                check_frames();
            }
        }
        bool taken = m->m_axis_tvalid && m->m_axis_tready;
        bool final_out = taken && m->m_axis_tlast;
        bool accepted = offer && m->s_axis_tready;
        // the model's next clock
        e_sent = final_out;
        if (accepted) {
            e_busy = true;
            if (empty || wpos + 1 == r->bytes.size() || ++fill_n == (size_t)FRAG_BYTES) {
                e_emit = true;
                fill_n = 0;
                since_close = 0;
                sof_seen = false;
            }
        }
        if (final_out) {
            e_emit = false;
            e_busy = false;
        }
#if CRC_LINE
        since_step = step ? 0 : since_step + 1;
        if (step) bits.pop_front();
        if (taken && !rst)
            for (int i = 0; i < 8; i++) bits.push_back((m->m_axis_tdata >> i) & 1);
#endif
        if (uart_cpb > 0) {
            if (taken) uleft = 10L * uart_cpb;
            else if (uleft > 0) uleft--;
        }
        if (rst) {
            e_emit = e_busy = e_sent = false;
            fill_n = 0;
            since_close = -1;
            sof_seen = true;
            uleft = 0;
            bits.clear();
        }
        if (accepted && !rst) {
            if (empty || ++wpos == r->bytes.size()) {
                sent.push_back(todo.front());
                todo.pop_front();
                active = false;
            }
        }
        prev_stall = m->m_axis_tvalid && !m->m_axis_tready && !rst;
        prev_data = m->m_axis_tdata;
        prev_last = m->m_axis_tlast;
        tb.tick();
    }

    void check_frames() {
        while (!dec.frames.empty()) {
            Frame f = dec.frames.front();
            dec.frames.pop_front();
            frames++;
            // fragments of the response being written may come out before
            // its last byte is written
            CHECK(!sent.empty() || !todo.empty(), "frame without a response");
            if (sent.empty() && todo.empty()) continue;
            Resp& r = !sent.empty() ? sent.front() : todo.front();
            size_t left = r.bytes.size() - fpos;
            size_t n = left < FRAG_BYTES ? left : FRAG_BYTES;
            bool more = left > FRAG_BYTES;
            CHECK_EQ(f.type, r.type, "type");
            CHECK_EQ(f.seq, r.seq, "seq");
            CHECK_EQ(f.flags, (frag << 1) | more, "flags (index, MORE)");
            CHECK_EQ(f.payload.size(), n, "payload length");
            for (size_t i = 0; i < f.payload.size() && i < n; i++) CHECK_EQ(f.payload[i], r.bytes[fpos + i], "payload byte");
            fpos += n;
            frag++;
            if (!more) {
                CHECK(!sent.empty(), "last fragment before the last byte");
                if (!sent.empty()) sent.pop_front();
                fpos = 0;
                frag = 0;
            }
        }
    }

    void add(int n) {
        Resp r;
        r.type = (uint8_t)rnd(0x80, 0xFF);
        r.seq = (uint16_t)rnd(0, 65535);
        r.link = rnd(0, 1);
        r.mac = rng() & 0xFFFFFFFFFFFFull;
        for (int i = 0; i < n; i++) r.bytes.push_back((uint8_t)rng());
        todo.push_back(r);
    }
    void drain() {
        long guard = 0;
        while ((!todo.empty() || !sent.empty() || tb.m->busy) && guard++ < 5000000) cycle();
        CHECK(todo.empty() && sent.empty(), "responses never sent: %zu + %zu", todo.size(), sent.size());
        for (int i = 0; i < 20; i++) cycle();
    }
};

int main(int argc, char** argv) {
    Verilated::commandArgs(argc, argv);
    TbOpts o = tb_parse(argc, argv);
    Bench b(o);
    const int F = FRAG_BYTES;
    for (int i = 0; i < 3; i++) b.cycle(true);

    // 1. corner lengths, output always ready (no gaps allowed)
    for (int n : {0, 1, 2, F - 1, F, F + 1, 2 * F, 2 * F + 1, 3 * F - 1, 0, 0, 5}) b.add(n);
    b.drain();

    // 2. random lengths, random valid and back-pressure
    for (int round = 0; round < 6; round++) {
        b.valid_p = (round & 1) ? 0.4 : 1.0;
        b.ready_p = (round & 2) ? 0.3 : (round & 4) ? 0.9 : 1.0;
        for (int k = 0; k < 25; k++) {
            int r = b.rnd(0, 9);
            b.add(r < 2 ? 0 : r < 6 ? b.rnd(1, 20) : b.rnd(1, 3 * F));
        }
        b.drain();
    }
    CHECK_EQ(b.pulses, b.frames, "frame_sent pulses");

    // 3. the training board's answers, eager or with readback gaps, into a
    //    free sink and into a UART-paced one
    const int shapes[] = {88, 4, 8, 4, 88, 432, 432, 6912, 8, 88, 4, 6912, 432, 88};
    for (int mode = 0; mode < 4; mode++) {
        b.eager = true;
        b.valid_p = 1.0;
        b.ready_p = 1.0;
        b.period = (mode & 1) ? 5 : 0;
        b.on = 2;
        b.uart_cpb = (mode & 2) ? 4 : 0;
        for (int n : shapes)
            if (n <= 128 * F) b.add(n);  // a response is at most 128 fragments
        if (mode == 0 && 128 * F >= 131072) b.add(131072);
        b.drain();
    }
    b.eager = false;
    b.period = 0;
    b.uart_cpb = 0;
    CHECK_EQ(b.pulses, b.frames, "frame_sent pulses");

    // 4. reset in the middle of a frame, then normal operation
    b.valid_p = 1.0;
    b.ready_p = 0.5;
    b.add(F + 7);
    for (int i = 0; i < 200; i++) b.cycle();
    for (int i = 0; i < 2; i++) b.cycle(true);
    b.todo.clear();
    b.sent.clear();
    b.active = false;
    b.cur.clear();
    b.in_frame = false;
    b.fpos = 0;
    b.frag = 0;
    b.dec.frames.clear();
    b.ready_p = 1.0;
    for (int k = 0; k < 10; k++) b.add(b.rnd(0, 2 * F));
    b.drain();
    CHECK_EQ(b.dec.errors, 0, "malformed output frames");

    std::printf("proto_tx: %llu frames\n", (unsigned long long)b.frames);
    return tb_finish("proto_tx");
}
