// eth_mac_rx_tb.cpp - Verilator bench for rtl/eth/eth_mac_rx.v
//
// Build and run from rtl/ (--trace-fst and --trace give /tmp/eth_mac_rx/eth_mac_rx.fst):
//   verilator --cc --exe --build -j 2 -Wall --trace-fst --Mdir /tmp/eth_mac_rx \
//     -CFLAGS -I$PWD/lib/tb \
//     $PWD/eth/eth_mac_rx.v $PWD/lib/crc32.v $PWD/eth/tb/eth_mac_rx_tb.cpp
//   (cd /tmp/eth_mac_rx && ./Veth_mac_rx --trace --seed 1)
//
// The bench builds wire bursts (preamble, SFD, header, payload, FCS from a
// table-driven CRC-32) and classifies each with a reference model that
// follows the documented priority: frame error (gmii_rx_er, bad or missing
// SFD, runt < 64, too long > MAX_FRAME) > CRC error > filtered (destination
// not local/broadcast, EtherType) > good. Every burst must produce exactly one
// status pulse of the predicted kind, except that a good frame may end as an
// overflow when the consumer is slow (never when tready is always high);
// overflow_count must track the overflow pulses. Good frames must come out in
// order, byte for byte (payload incl. padding, tlast on the last byte), with
// m_src_mac; output stable while stalled. Covered: clk_en always / 1-in-2 /
// random (inputs are random junk on disabled clocks), random back-pressure,
// short and random preambles, gaps of one byte, bad FCS (one flipped bit),
// MAC/type filtering incl. near misses and broadcast, runts, 64 and 1518-byte
// limits, too long, gmii_rx_er, garbage bursts, an exact overflow scenario,
// and resets mid-frame and with frames buffered.
#include <deque>
#include <vector>

#include "Veth_mac_rx.h"
#include "tb_util.h"

#ifndef MAX_FRAME
#define MAX_FRAME 1518
#endif
#ifndef BUFFER_DEPTH
#define BUFFER_DEPTH 2048
#endif
static const uint16_t ETYPE = 0x88B5;

static uint32_t crc_tab[256];
static uint32_t crc32_ref(const std::vector<uint8_t>& v, size_t a, size_t b) {
    uint32_t c = 0xFFFFFFFFu;
    for (size_t i = a; i < b; i++) c = crc_tab[(c ^ v[i]) & 0xFF] ^ (c >> 8);
    return ~c;
}

enum Cls { GOOD, CRCERR, FRAMEERR, FILT, OVF };
static const char* cls_name[] = {"good", "crc_error", "frame_error", "filtered", "overflow"};

struct Burst {
    std::vector<uint8_t> d;   // bytes while gmii_rx_dv is high
    std::vector<uint8_t> er;  // gmii_rx_er per byte
    Cls cls;
    uint64_t src = 0;
    std::vector<uint8_t> payload;
};

struct Spec {
    int pre = 7;                // preamble bytes
    bool sfd = true;
    int dst = 0;                // 0 local, 1 broadcast, 2 random, 3 near miss
    bool type_ok = true;
    int plen = 46;              // payload bytes before padding
    bool pad = true;            // pad the body to 60 bytes
    bool bad_fcs = false;
    bool er = false;            // gmii_rx_er on one byte
    bool garbage = false;       // random bytes, first is not 0x55/0xD5
};

struct Bench {
    Tb<Veth_mac_rx> tb;
    std::mt19937_64 rng;
    uint64_t local = 0x02A1B2C3D4E5ull;
    int en_mode = 0;            // 0 always, 1 every other clock, 2 random
    double ready_p = 1.0;
    bool ovf_ok = false;        // good frames may be dropped for overflow
    std::deque<Burst> pending;  // ended bursts awaiting their status pulse
    std::deque<Burst> deliver;  // good frames awaiting output
    size_t pos = 0;             // byte position in deliver.front()
    uint64_t ovf_count = 0, nfr[5] = {0, 0, 0, 0, 0};
    bool prev_stall = false;
    uint8_t prev_data = 0, prev_last = 0;
    uint64_t prev_src = 0;

    Bench(const TbOpts& o) : tb("eth_mac_rx", o), rng(o.seed) {}
    bool coin(double p) { return std::uniform_real_distribution<double>(0, 1)(rng) < p; }
    int rnd(int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); }

    Burst make(const Spec& s) {
        Burst b;
        if (s.garbage) {
            int n = rnd(1, 40);
            for (int i = 0; i < n; i++) b.d.push_back((uint8_t)rnd(0, 255));
            while (b.d[0] == 0x55 || b.d[0] == 0xD5) b.d[0] = (uint8_t)rnd(0, 255);
            if (coin(0.5)) b.d.insert(b.d.begin(), 7, 0x55);  // preamble, then junk
            b.er.assign(b.d.size(), 0);
            b.cls = FRAMEERR;
            return b;
        }
        uint64_t dst = local;
        if (s.dst == 1) dst = 0xFFFFFFFFFFFFull;
        if (s.dst == 2) dst = rng() & 0xFFFFFFFFFFFFull;
        if (s.dst == 3) dst = local ^ (1ull << rnd(0, 47));
        b.src = rng() & 0xFFFFFFFFFFFFull;
        uint16_t type = s.type_ok ? ETYPE : (uint16_t)(ETYPE ^ (1u << rnd(0, 15)));
        std::vector<uint8_t> body;
        for (int i = 5; i >= 0; i--) body.push_back((uint8_t)(dst >> (8 * i)));
        for (int i = 5; i >= 0; i--) body.push_back((uint8_t)(b.src >> (8 * i)));
        body.push_back((uint8_t)(type >> 8));
        body.push_back((uint8_t)type);
        for (int i = 0; i < s.plen; i++) body.push_back((uint8_t)rnd(0, 255));
        while (s.pad && body.size() < 60) body.push_back(0);
        b.payload.assign(body.begin() + 14, body.end());
        uint32_t fcs = crc32_ref(body, 0, body.size());
        for (int i = 0; i < 4; i++) body.push_back((uint8_t)(fcs >> (8 * i)));
        if (s.bad_fcs) body[rnd(0, (int)body.size() - 1)] ^= (uint8_t)(1u << rnd(0, 7));
        b.d.assign(s.pre, 0x55);
        if (s.sfd) b.d.push_back(0xD5);
        size_t hdr = b.d.size();
        b.d.insert(b.d.end(), body.begin(), body.end());
        b.er.assign(b.d.size(), 0);
        if (s.er) b.er[rnd(0, (int)b.d.size() - 1)] = 1;

        // reference classification
        size_t len = body.size();
        bool erx = s.er;
        bool dst_ok = dst == local || dst == 0xFFFFFFFFFFFFull;
        if (erx || !s.sfd || len < 64 || len > MAX_FRAME) b.cls = FRAMEERR;
        else if (crc32_ref(b.d, hdr, b.d.size() - 4) !=
                 (uint32_t)(b.d[b.d.size() - 4] | b.d[b.d.size() - 3] << 8 |
                            b.d[b.d.size() - 2] << 16 | (uint32_t)b.d[b.d.size() - 1] << 24))
            b.cls = CRCERR;
        else if (!dst_ok || !s.type_ok) b.cls = FILT;
        else b.cls = GOOD;
        // payload as received (a flipped bit may have hit it: then not GOOD)
        return b;
    }

    bool enable() {
        if (en_mode == 0) return true;
        if (en_mode == 1) return (g_cycle & 1) == 0;
        return coin(0.5);
    }

    // one clock; when `en` the byte (dv, d, er) is presented with clk_en
    void clock(bool en, int dv, uint8_t d, int er, bool rst = false) {
        auto* m = tb.m.get();
        m->rst = rst;
        m->clk_en = en;
        m->gmii_rx_dv = en ? dv : rnd(0, 1);
        m->gmii_rxd = en ? d : (uint8_t)rnd(0, 255);
        m->gmii_rx_er = en ? er : rnd(0, 1);
        m->local_mac = local;
        m->m_axis_tready = coin(ready_p);
        tb.settle();

        // status pulses
        int np = m->rx_good + m->crc_error + m->frame_error + m->rx_filtered + m->rx_overflow;
        CHECK(np <= 1, "%d status pulses at once", np);
        if (np == 1) {
            Cls got = m->rx_good ? GOOD : m->crc_error ? CRCERR : m->frame_error ? FRAMEERR
                    : m->rx_filtered ? FILT : OVF;
            CHECK(!pending.empty(), "status pulse %s without a burst", cls_name[got]);
            if (!pending.empty()) {
                Burst& b = pending.front();
                bool ok = got == b.cls || (got == OVF && b.cls == GOOD && ovf_ok);
                CHECK(ok, "status: got %s want %s (burst of %zu bytes)", cls_name[got],
                      cls_name[b.cls], b.d.size());
                if (got == GOOD) deliver.push_back(b);
                if (got == OVF) ovf_count++;
                nfr[got]++;
                pending.pop_front();
            }
        }
        CHECK_EQ(m->overflow_count, ovf_count & 0xFFFF, "overflow_count");

        // output stream
        if (prev_stall) {
            CHECK(m->m_axis_tvalid, "tvalid dropped while stalled");
            CHECK_EQ(m->m_axis_tdata, prev_data, "tdata changed while stalled");
            CHECK_EQ(m->m_axis_tlast, prev_last, "tlast changed while stalled");
            CHECK_EQ(m->m_src_mac, prev_src, "m_src_mac changed while stalled");
        }
        if (m->m_axis_tvalid && m->m_axis_tready) {
            CHECK(!deliver.empty(), "output byte without a good frame");
            if (!deliver.empty()) {
                Burst& f = deliver.front();
                CHECK_EQ(m->m_axis_tdata, f.payload[pos], "payload byte");
                CHECK_EQ(m->m_axis_tlast, pos + 1 == f.payload.size(), "tlast");
                CHECK_EQ(m->m_src_mac, f.src, "m_src_mac");
                if (++pos == f.payload.size() || m->m_axis_tlast) {
                    deliver.pop_front();
                    pos = 0;
                }
            }
        }
        prev_stall = m->m_axis_tvalid && !m->m_axis_tready && !rst;
        prev_data = m->m_axis_tdata;
        prev_last = m->m_axis_tlast;
        prev_src = m->m_src_mac;
        tb.tick();
        if (rst) {  // reset empties the DUT: forget everything in flight
            pending.clear();
            deliver.clear();
            pos = 0;
            ovf_count = 0;
        }
    }

    // present one byte slot (waits for an enabled clock)
    void slot(int dv, uint8_t d, int er) {
        for (;;) {
            bool en = enable();
            clock(en, dv, d, er);
            if (en) return;
        }
    }
    void gap(int slots) {
        for (int i = 0; i < slots; i++) slot(0, (uint8_t)rnd(0, 255), rnd(0, 1));
    }
    void send(const Burst& b, int gap_slots) {
        for (size_t i = 0; i < b.d.size(); i++) slot(1, b.d[i], b.er[i]);
        CHECK(pending.size() <= 1, "status of the previous burst still missing");
        pending.push_back(b);
        gap(gap_slots);
    }
    void drain(const char* what) {
        double rp = ready_p;
        ready_p = 1.0;
        for (int i = 0; i < 4 * BUFFER_DEPTH && !(pending.empty() && deliver.empty()); i++)
            clock(enable(), 0, 0, 0);
        for (int i = 0; i < 8; i++) clock(enable(), 0, 0, 0);
        CHECK(pending.empty(), "%s: %zu bursts without status", what, pending.size());
        CHECK(deliver.empty(), "%s: %zu good frames not delivered", what, deliver.size());
        CHECK(!tb.m->m_axis_tvalid, "%s: tvalid with nothing to deliver", what);
        ready_p = rp;
    }
    void reset(int n) {
        for (int i = 0; i < n; i++) clock(enable(), rnd(0, 1), 0, 0, true);
        tb.settle();
        CHECK(!tb.m->m_axis_tvalid, "tvalid after reset");
    }

    Spec random_spec() {
        Spec s;
        int r = rnd(0, 99);
        s.plen = coin(0.7) ? rnd(0, 100) : rnd(0, 1500);
        if (r < 45) {
        } else if (r < 55) s.bad_fcs = true;
        else if (r < 60) s.dst = 1;
        else if (r < 65) s.dst = 2;
        else if (r < 70) s.dst = 3;
        else if (r < 74) s.type_ok = false;
        else if (r < 78) s.er = true;
        else if (r < 82) { s.pad = false; s.plen = rnd(0, 45); }    // runt (or exact)
        else if (r < 84) s.plen = rnd(1501, 1600);                  // too long
        else if (r < 87) s.garbage = true;
        else if (r < 89) s.sfd = false;
        else if (r < 94) s.pre = rnd(0, 12);
        else { s.plen = coin(0.5) ? 1500 : 46; }                    // limits
        return s;
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
    b.reset(3);
    b.gap(4);

    // sanity: one minimum and one maximum good frame
    Spec s;
    b.send(b.make(s), 12);
    s.plen = 1500;
    b.send(b.make(s), 12);
    // length limits: 63 (runt), 64, MAX_FRAME, MAX_FRAME+1 bytes dst..FCS
    for (int plen : {45, 46, MAX_FRAME - 18, MAX_FRAME - 17}) {
        Spec sl;
        sl.pad = false;
        sl.plen = plen;
        Burst f = b.make(sl);
        CHECK_EQ(f.cls, (plen == 45 || plen == MAX_FRAME - 17) ? FRAMEERR : GOOD, "model class");
        b.send(f, 12);
    }
    b.drain("sanity");
    CHECK_EQ(b.nfr[GOOD], 4, "good frames in sanity phase");
    CHECK_EQ(b.nfr[FRAMEERR], 2, "runt/too long in sanity phase");

    // random traffic under each clk_en mode and back-pressure level
    for (int mode = 0; mode < 3; mode++) {
        for (double rp : {1.0, 0.7, 0.3}) {
            b.en_mode = mode;
            b.ready_p = rp;
            b.ovf_ok = rp < 1.0;
            b.local = b.rng() & 0xFEFFFFFFFFFFull;  // unicast address
            for (int i = 0; i < 70; i++) b.send(b.make(b.random_spec()), b.coin(0.3) ? 1 : b.rnd(1, 20));
            b.drain("random traffic");
        }
    }
    CHECK(b.nfr[GOOD] > 100 && b.nfr[CRCERR] > 10 && b.nfr[FRAMEERR] > 10 && b.nfr[FILT] > 10,
          "coverage: good %llu crc %llu frame %llu filt %llu", (unsigned long long)b.nfr[GOOD],
          (unsigned long long)b.nfr[CRCERR], (unsigned long long)b.nfr[FRAMEERR],
          (unsigned long long)b.nfr[FILT]);

    // exact overflow: consumer stalled, 506-word frames (6 src + 500 payload);
    // the reader pre-fetches 7 words of the first frame, so k frames fit while
    // k*506 <= BUFFER_DEPTH + 7
    b.en_mode = 0;
    b.ready_p = 0.0;
    b.ovf_ok = false;
    int fit = (BUFFER_DEPTH + 7) / 506;
    uint64_t ovf0 = b.ovf_count;
    for (int i = 0; i < fit + 2; i++) {
        Spec so;
        so.plen = 500;
        Burst f = b.make(so);
        if (i >= fit) f.cls = OVF;
        b.send(f, 12);
    }
    b.gap(20);
    CHECK_EQ(b.ovf_count - ovf0, 2, "overflow drops");
    CHECK_EQ(b.deliver.size(), fit, "frames buffered while stalled");
    b.drain("overflow");
    b.ready_p = 0.5;
    b.send(b.make(Spec()), 12);
    b.drain("after overflow");

    // resets: mid-frame, and with good frames buffered (all discarded)
    for (int rep = 0; rep < 30; rep++) {
        b.en_mode = b.rnd(0, 2);
        b.ready_p = b.coin(0.5) ? 0.0 : 0.5;
        b.ovf_ok = true;
        for (int i = 0; i < 3; i++) b.send(b.make(b.random_spec()), b.rnd(8, 20));
        Spec sr;
        sr.plen = b.rnd(0, 300);
        Burst f = b.make(sr);
        size_t cut = (size_t)b.rnd(8, (int)f.d.size() - 1);
        for (size_t i = 0; i < cut; i++) b.slot(1, f.d[i], 0);
        b.reset(b.rnd(1, 3));
        for (size_t i = cut; i < f.d.size(); i++) b.slot(1, f.d[i], 0);  // ignored
        b.gap(b.rnd(1, 12));
        b.ready_p = 0.7;
        b.ovf_ok = false;
        for (int i = 0; i < 3; i++) b.send(b.make(Spec()), b.rnd(1, 12));
        b.drain("after reset");
    }

    std::printf("frames: good %llu crc_error %llu frame_error %llu filtered %llu overflow %llu\n",
                (unsigned long long)b.nfr[GOOD], (unsigned long long)b.nfr[CRCERR],
                (unsigned long long)b.nfr[FRAMEERR], (unsigned long long)b.nfr[FILT],
                (unsigned long long)b.nfr[OVF]);
    return tb_finish("eth_mac_rx");
}
