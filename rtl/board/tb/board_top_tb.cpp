// board_top_tb.cpp - Verilator bench for rtl/board/board_top.v with a
// generated core
//
// Build and data: see rtl/board/board_test.go (benches "board_top", and
// "board_top_2clk": CORE_CLK = 1, clk_core toggled twice per clk). The
// test generates a small core (prefix "tiny", selected with PTM_CORE) and a
// data file (--data <file>) with the shape, the info ROM, a random bank in
// upload order and INFER requests whose expected result words were computed
// by golden/fixed (fixed.Core.RunSets, query i with seed + i).
//
// The bench is two hosts at once: one on the UART pins (8N1 bits of
// CLKS_PER_BIT clocks driven on uart_rxd, uart_txd decoded back) and one on
// the GMII interface (Ethernet II frames with preamble, SFD and FCS in,
// frames out checked for FCS, addresses and EtherType). Checked:
//   - INFO on both links (info ROM words, loaded flag, CRC, link bit rate);
//   - a model upload on the UART while Ethernet requests from another MAC
//     are served in between, each response to its own link and MAC;
//   - every INFER of the data file (one set and several, all four modes),
//     on one link or on both at once, reassembled from fragments, equal
//     item for item to the golden results;
//   - garbage on the UART, a bad FCS, a wrong destination MAC, a wrong
//     EtherType and a bad protocol CRC on Ethernet: dropped and counted in
//     STATUS, and the next requests are answered correctly;
//   - LEDs (loaded, heartbeat, activity, error) and the idle output.
#include <cstdlib>
#include <deque>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "Vboard_top.h"
#include "proto_util.h"
#include "tb_util.h"

#ifndef CLKS_PER_BIT
#define CLKS_PER_BIT 8
#endif
#ifndef UART_BAUD
#define UART_BAUD 800
#endif
#ifndef GEN_VERSION
#define GEN_VERSION 0x000100
#endif
#ifndef SETS_MAX
#define SETS_MAX 8
#endif
static const int CPB = CLKS_PER_BIT;
static const uint64_t BOARD_MAC = 0x0250544D0001ull;
static const uint64_t MAC_A = 0x02AAAAAAAA01ull, MAC_B = 0x02BBBBBBBB02ull;

struct Req {
    int mode, k, count;
    int sets = 0, runs = 0;   // sets byte; core runs (sets with K_m >= 1, all queries)
    int ib = 4;               // bytes per result item (2: mode 2 votes as u16, 1 or 2: mode 3)
    uint32_t seed;
    std::vector<uint8_t> feat;
    std::vector<uint32_t> words;
};

struct Data {
    int lanes = 0, depth = 0, nt = 0, nc = 0, fb = 0, kmax = 0, bits = 0;  // not the -D macros
    std::vector<uint32_t> info, bank;
    std::vector<Req> reqs;
    bool load(const char* path) {
        std::ifstream in(path);
        if (!in) return false;
        std::string line;
        while (std::getline(in, line)) {
            std::istringstream s(line);
            std::string tag;
            s >> tag;
            if (tag == "shape") {
                s >> lanes >> depth >> nt >> nc >> fb >> kmax >> bits;
            } else if (tag == "info" || tag == "bank") {
                auto& v = tag == "info" ? info : bank;
                std::string h;
                while (s >> h) v.push_back((uint32_t)std::stoul(h, nullptr, 16));
            } else if (tag == "req") {
                Req r;
                std::string h;
                s >> r.mode >> r.k >> h >> r.count >> r.sets >> r.runs;
                r.seed = (uint32_t)std::stoul(h, nullptr, 16);
                for (int i = 0; i < r.count * std::max(1, r.sets) * fb; i++) {
                    s >> h;
                    r.feat.push_back((uint8_t)std::stoul(h, nullptr, 16));
                }
                int n;
                s >> h >> n >> r.ib;
                for (int i = 0; i < n; i++) {
                    s >> h;
                    r.words.push_back((uint32_t)std::stoul(h, nullptr, 16));
                }
                reqs.push_back(r);
            }
        }
        return lanes > 0 && (int)bank.size() == lanes * depth && info.size() == 16;
    }
};

// A reassembled response (all fragments of one seq on one link/MAC).
struct Resp {
    uint8_t type = 0;
    std::vector<uint8_t> payload;
    int frags = 0;
    bool done = false;
};

struct Bench {
    Tb<Vboard_top> tb;
    std::mt19937_64 rng;
    // UART host
    std::deque<int> utx;          // line levels to drive, one per clock
    int urx_state = 0, urx_cnt = 0, urx_bit = 0;
    uint8_t urx_byte = 0;
    FrameDecoder udec{"uart"};
    // Ethernet host
    std::deque<std::pair<uint8_t, int>> etx;   // (byte, dv) per clock
    std::vector<uint8_t> erx;
    bool erx_on = false;
    uint64_t eth_bad = 0;
    // responses: key = link<<56 | mac<<8... use a map per (link, mac, seq)
    std::map<std::pair<uint64_t, uint16_t>, Resp> resp;
    uint64_t frames_out = 0;
    // LEDs
    int hb_toggles = 0, prev_hb = 0;
    bool seen_act = false, seen_err = false;

    Bench(const TbOpts& o) : tb("board_top", o), rng(o.seed) {}
    bool coin(double p) { return std::uniform_real_distribution<double>(0, 1)(rng) < p; }
    int rnd(int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); }

    void cycle(bool rst = false) {
        auto* m = tb.m.get();
        m->rst = rst;
        m->uart_rxd = utx.empty() ? 1 : utx.front();
        if (!utx.empty()) utx.pop_front();
        m->eth_clk_en = 1;
        m->gmii_rx_er = 0;
        if (!etx.empty()) {
            m->gmii_rxd = etx.front().first;
            m->gmii_rx_dv = etx.front().second;
            etx.pop_front();
        } else {
            m->gmii_rxd = 0;
            m->gmii_rx_dv = 0;
        }
        tb.settle();
        uart_sample(m->uart_txd);
        eth_sample(m->gmii_tx_en, m->gmii_txd, m->gmii_tx_er);
        if (m->led_heartbeat != prev_hb) hb_toggles++;
        prev_hb = m->led_heartbeat;
        seen_act |= m->led_activity;
        seen_err |= m->led_error;
#if defined(CORE_CLK) && CORE_CLK
        // the dual-clock board: clk_core at twice clk, phase-aligned (a core
        // edge alone in clk's low phase, then both edges together)
        m->clk_core = 1;
        m->eval();
        m->clk_core = 0;
        m->eval();
        m->clk = 1;
        m->clk_core = 1;
        m->eval();
        m->clk = 0;
        m->clk_core = 0;
        m->eval();
        g_cycle++;
#else
        tb.tick();
#endif
    }

    // ---------------------------------------------------------------- UART
    uint64_t uart_bytes = 0;      // bytes driven on uart_rxd
    void uart_send(const std::vector<uint8_t>& bytes) {
        uart_bytes += bytes.size();
        for (uint8_t b : bytes) {
            for (int i = 0; i < CPB; i++) utx.push_back(0);
            for (int k = 0; k < 8; k++)
                for (int i = 0; i < CPB; i++) utx.push_back((b >> k) & 1);
            for (int i = 0; i < CPB; i++) utx.push_back(1);
        }
    }
    void uart_sample(int txd) {
        switch (urx_state) {
        case 0:
            if (!txd) {
                urx_state = 1;
                urx_cnt = 0;
            }
            break;
        case 1:  // inside a character: sample at the middle of every bit
            urx_cnt++;
            if (urx_cnt == CPB / 2) {
                CHECK_EQ(txd, 0, "uart_txd start bit");
            } else if (urx_cnt > CPB / 2 && (urx_cnt - CPB / 2) % CPB == 0) {
                int bit = (urx_cnt - CPB / 2) / CPB;
                if (bit <= 8) {
                    urx_byte = (uint8_t)((urx_byte >> 1) | (txd << 7));
                } else {
                    CHECK_EQ(txd, 1, "uart_txd stop bit");
                    udec.byte(urx_byte);
                    collect(0, 0, udec);
                    urx_state = 0;
                }
            }
            break;
        }
    }

    // ---------------------------------------------------------------- Ethernet
    void eth_send(const std::vector<uint8_t>& proto, uint64_t src, uint64_t dst = BOARD_MAC,
                  uint16_t type = 0x88B5, bool bad_fcs = false) {
        std::vector<uint8_t> f;
        for (int i = 5; i >= 0; i--) f.push_back((uint8_t)(dst >> (8 * i)));
        for (int i = 5; i >= 0; i--) f.push_back((uint8_t)(src >> (8 * i)));
        f.push_back((uint8_t)(type >> 8));
        f.push_back((uint8_t)type);
        f.insert(f.end(), proto.begin(), proto.end());
        while (f.size() < 60) f.push_back(0);
        uint32_t fcs = g_crc.of(f);
        if (bad_fcs) fcs ^= 0x100;
        put_u32(f, fcs);
        for (int i = 0; i < 7; i++) etx.push_back({0x55, 1});
        etx.push_back({0xD5, 1});
        for (uint8_t b : f) etx.push_back({b, 1});
        for (int i = 0; i < 12; i++) etx.push_back({0, 0});
    }
    void eth_sample(int en, uint8_t d, int er) {
        CHECK_EQ(er, 0, "gmii_tx_er");
        if (en) {
            erx.push_back(d);
            erx_on = true;
            return;
        }
        if (!erx_on) return;
        erx_on = false;
        // preamble, SFD, then the frame with FCS
        size_t i = 0;
        while (i < erx.size() && erx[i] == 0x55) i++;
        bool ok = i == 7 && i < erx.size() && erx[i] == 0xD5;
        std::vector<uint8_t> f(erx.begin() + (ok ? i + 1 : 0), erx.end());
        erx.clear();
        ok = ok && f.size() >= 64 && g_crc.of(f.data(), f.size() - 4) == get_u32(f, f.size() - 4);
        CHECK(ok, "Ethernet frame from the board: bad preamble, length or FCS");
        if (!ok) return;
        uint64_t dst = 0, src = 0;
        for (int k = 0; k < 6; k++) dst = dst << 8 | f[k];
        for (int k = 6; k < 12; k++) src = src << 8 | f[k];
        CHECK_EQ(src, BOARD_MAC, "Ethernet source MAC");
        CHECK_EQ(f[12] << 8 | f[13], 0x88B5, "EtherType");
        CHECK(dst == MAC_A || dst == MAC_B, "Ethernet destination %012llx", (unsigned long long)dst);
        FrameDecoder dec("eth");
        size_t plen = f.size() - 18;
        size_t flen = plen >= 7 ? 11 + (f[14 + 5] | f[14 + 6] << 8) : 0;
        CHECK(flen && flen <= plen, "Ethernet payload shorter than its protocol frame");
        for (size_t k = 0; k < flen && k < plen; k++) dec.byte(f[14 + k]);
        CHECK_EQ(dec.frames.size(), 1, "one protocol frame per Ethernet frame");
        collect(1, dst, dec);
        eth_bad += dec.errors;
    }

    // Responses are keyed by (link, MAC) and seq; fragments must arrive in order.
    void collect(int link, uint64_t mac, FrameDecoder& dec) {
        while (!dec.frames.empty()) {
            Frame f = dec.frames.front();
            dec.frames.pop_front();
            frames_out++;
            Resp& r = resp[{(uint64_t)link << 48 | mac, f.seq}];
            CHECK(!r.done, "fragment after the last one (seq %u)", f.seq);
            CHECK_EQ(f.flags >> 1, r.frags, "fragment index");
            if (r.frags) CHECK_EQ(f.type, r.type, "fragment type");
            r.type = f.type;
            r.payload.insert(r.payload.end(), f.payload.begin(), f.payload.end());
            r.frags++;
            r.done = !(f.flags & 1);
        }
    }

    uint16_t next_seq = 1;
    uint16_t send(int link, uint64_t mac, uint8_t type, const std::vector<uint8_t>& payload) {
        Frame f;
        f.type = type;
        f.seq = next_seq++;
        f.payload = payload;
        if (link == 0) uart_send(f.encode());
        else eth_send(f.encode(), mac);
        return f.seq;
    }
    bool done(int link, uint64_t mac, uint16_t seq) {
        auto it = resp.find({(uint64_t)link << 48 | mac, seq});
        return it != resp.end() && it->second.done;
    }
    Resp wait(int link, uint64_t mac, uint16_t seq, long limit = 3000000) {
        long g = 0;
        while (!done(link, mac, seq) && g++ < limit) cycle();
        CHECK(done(link, mac, seq), "no response to seq %u on link %d", seq, link);
        Resp r = resp[{(uint64_t)link << 48 | mac, seq}];
        resp.erase({(uint64_t)link << 48 | mac, seq});
        return r;
    }
    Resp call(int link, uint64_t mac, uint8_t type, const std::vector<uint8_t>& p) {
        return wait(link, mac, send(link, mac, type, p));
    }
};

static std::vector<uint8_t> u32s(std::initializer_list<uint32_t> l) {
    std::vector<uint8_t> v;
    for (uint32_t x : l) put_u32(v, x);
    return v;
}

int main(int argc, char** argv) {
    Verilated::commandArgs(argc, argv);
    TbOpts o = tb_parse(argc, argv);
    const char* path = nullptr;
    for (int i = 1; i + 1 < argc; i++)
        if (!std::strcmp(argv[i], "--data")) path = argv[i + 1];
    Data d;
    if (!path || !d.load(path)) {
        std::fprintf(stderr, "board_top bench: --data <file> missing or unreadable\n");
        return 2;
    }
    Bench b(o);
    for (int i = 0; i < 4; i++) b.cycle(true);
    for (int i = 0; i < 100; i++) b.cycle();
    const uint32_t W = d.lanes * d.depth;

    // 1. INFO on both links
    auto check_info = [&](const Resp& r, int link, bool loaded, uint32_t crc) {
        CHECK_EQ(r.type, 0x81, "INFO response type");
        std::vector<uint32_t> w = words_of(r.payload);
        CHECK_EQ(w.size(), 20, "INFO words");
        if (w.size() != 20) return;
        CHECK_EQ(w[0], 0x424D5450u, "INFO magic");
        CHECK_EQ(w[1], 6, "INFO protocol version");
        CHECK_EQ(w[19], SETS_MAX, "INFO MMAX");
        CHECK_EQ(w[2], GEN_VERSION, "INFO generator version");
        for (int i = 3; i < 15; i++) CHECK_EQ(w[i], d.info[i - 2], "INFO word from the info ROM");
        CHECK_EQ(w[15], loaded, "INFO loaded");
        CHECK_EQ(w[16], crc, "INFO model CRC");
        CHECK_EQ(w[17], link ? 0 : UART_BAUD, "INFO link bit rate");
        CHECK_EQ(w[18], link ? 1 : 31, "INFO receive buffer depth");
    };
    check_info(b.call(0, 0, 0x01, {}), 0, false, 0);
    check_info(b.call(1, MAC_A, 0x01, {}), 1, false, 0);
    CHECK_EQ(b.tb.m->led_loaded, 0, "led_loaded before the upload");

    // INFER before any model: ERROR 4
    {
        std::vector<uint8_t> p = {0, 0, 1, 0, 1, 2, 3, 4, 1, 0};
        for (int i = 0; i < d.fb; i++) p.push_back(0);
        Resp r = b.call(1, MAC_B, 0x10, p);
        CHECK_EQ(r.type, 0xE0, "INFER without a model: ERROR");
        CHECK_EQ(r.payload.size() == 8 ? r.payload[0] : 0, 4, "ERROR code 4");
    }

    // 2. upload on the UART, Ethernet requests from MAC_B in between
    std::vector<uint8_t> bytes;
    for (uint32_t w : d.bank) put_u16(bytes, (uint16_t)w);
    uint32_t crc = g_crc.of(bytes);
    {
        Resp r = b.call(0, 0, 0x02, u32s({W}));
        CHECK_EQ(r.type, 0x82, "LOAD_BEGIN ack");
        CHECK_EQ(r.payload.size(), 0, "LOAD_BEGIN ack payload (version 5: empty)");
        uint32_t off = 0;
        while (off < W) {
            uint32_t n = std::min<uint32_t>(b.rnd(1, 40), W - off);
            std::vector<uint8_t> p;
            put_u32(p, off);
            for (uint32_t i = 0; i < n; i++) put_u16(p, (uint16_t)d.bank[off + i]);
            uint16_t s = b.send(0, 0, 0x03, p);
            uint16_t e = b.coin(0.5) ? b.send(1, MAC_B, 0x01, {}) : 0;
            Resp ra = b.wait(0, 0, s);
            CHECK_EQ(ra.type, 0x83, "LOAD_DATA ack");
            CHECK(words_of(ra.payload) == std::vector<uint32_t>({off + n}), "LOAD_DATA ack: the next offset");
            if (e) check_info(b.wait(1, MAC_B, e), 1, false, 0);
            off += n;
        }
        Resp rc = b.call(0, 0, 0x04, u32s({W, crc}));
        CHECK_EQ(rc.type, 0x84, "LOAD_COMMIT ack");
        CHECK_EQ(rc.payload.size(), 0, "LOAD_COMMIT ack payload (version 5: empty)");
    }
    check_info(b.call(1, MAC_A, 0x01, {}), 1, true, crc);
    CHECK_EQ(b.tb.m->led_loaded, 1, "led_loaded after the commit");

    // 3. INFER: golden results, on either link or both at once
    auto infer_payload = [&](const Req& q) {
        std::vector<uint8_t> p;
        p.push_back((uint8_t)q.mode);
        p.push_back((uint8_t)q.sets);
        put_u16(p, (uint16_t)q.k);
        put_u32(p, q.seed);
        put_u16(p, (uint16_t)q.count);
        p.insert(p.end(), q.feat.begin(), q.feat.end());
        return p;
    };
    auto check_infer = [&](const Resp& r, const Req& q) {
        CHECK_EQ(r.type, 0x90, "INFER response type");
        std::vector<uint32_t> w;
        for (size_t i = 0; i + q.ib <= r.payload.size(); i += q.ib) {
            uint32_t x = 0;
            for (int j = q.ib - 1; j >= 0; j--) x = x << 8 | r.payload[i + j];
            w.push_back(x);
        }
        CHECK_EQ(r.payload.size(), q.words.size() * q.ib, "INFER result bytes");
        size_t bad = 0;
        for (size_t i = 0; i < w.size() && i < q.words.size(); i++) bad += w[i] != q.words[i];
        CHECK_EQ(bad, 0, "INFER words differing from golden/fixed");
        CHECK_EQ(r.frags, (q.words.size() * q.ib + 1023) / 1024, "INFER fragments");
    };
    for (size_t i = 0; i < d.reqs.size(); i++) {
        const Req& q = d.reqs[i];
        auto p = infer_payload(q);
        if (i % 3 == 2) {
            uint16_t su = b.send(0, 0, 0x10, p);
            uint16_t se = b.send(1, MAC_A, 0x10, p);
            check_infer(b.wait(1, MAC_A, se), q);
            check_infer(b.wait(0, 0, su), q);
        } else {
            int link = i % 2;
            check_infer(b.call(link, link ? MAC_B : 0, 0x10, p), q);
        }
    }

    // 4. line errors: UART garbage, Ethernet bad FCS / MAC / type / CRC
    Resp st0 = b.call(1, MAC_A, 0x20, {});
    std::vector<uint32_t> s0 = words_of(st0.payload);
    CHECK_EQ(s0.size(), 13, "STATUS words");
    s0.resize(13);
    const uint64_t ub0 = b.uart_bytes, cyc0 = g_cycle;
    {
        std::vector<uint8_t> junk;
        for (int i = 0; i < 3000; i++) junk.push_back((uint8_t)b.rnd(0, 255));
        b.uart_send(junk);
        Frame f;
        f.type = 0x01;
        f.seq = 999;
        std::vector<uint8_t> enc = f.encode();
        b.eth_send(enc, MAC_A, BOARD_MAC, 0x88B5, true);        // bad FCS
        b.eth_send(enc, MAC_A, 0x02CCCCCCCC03ull);              // another MAC
        b.eth_send(enc, MAC_A, BOARD_MAC, 0x0800);              // another type
        enc[enc.size() - 1] ^= 0x80;
        b.eth_send(enc, MAC_A);                                 // bad protocol CRC
        while (!b.utx.empty()) b.cycle();
        for (int i = 0; i < 200 * CPB; i++) b.cycle();          // > idle timeout
    }
    check_info(b.call(0, 0, 0x01, {}), 0, true, crc);
    check_infer(b.call(1, MAC_A, 0x10, infer_payload(d.reqs[0])), d.reqs[0]);
    check_infer(b.call(0, 0, 0x10, infer_payload(d.reqs[1])), d.reqs[1]);
    Resp st1 = b.call(1, MAC_A, 0x20, {});
    std::vector<uint32_t> s1 = words_of(st1.payload);
    CHECK_EQ(s1.size(), 13, "STATUS words");
    s1.resize(13);
    CHECK_EQ(s1[0] - s0[0], 4, "frames executed since the first STATUS");
    CHECK(s1[1] - s0[1] >= 1, "CRC errors counted (protocol CRC on Ethernet)");
    CHECK(s1[1] + s1[2] > s0[1] + s0[2] + 1, "garbage counted as CRC or framing errors");
    CHECK_EQ(s1[6] - s0[6], 1, "Ethernet FCS errors");
    CHECK_EQ(s1[7] - s0[7], 2, "Ethernet frames dropped (address, type)");
    // frames sent: the first STATUS (read before it was sent), INFO, two INFERs
    uint32_t frags = (uint32_t)((d.reqs[0].words.size() * d.reqs[0].ib + 1023) / 1024 +
                                (d.reqs[1].words.size() * d.reqs[1].ib + 1023) / 1024);
    CHECK_EQ(s1[8] - s0[8], 2 + frags, "response frames sent since the first STATUS");
    CHECK_EQ(s1[9] - s0[9], (uint32_t)(d.reqs[0].runs + d.reqs[1].runs), "core runs");
    CHECK_EQ(s1[10], s0[10], "ERROR responses");
    // receive-line accounting: the UART bytes sent since the first STATUS
    // (junk, INFO, INFER, STATUS commands) and the bit times elapsed
    CHECK_EQ(s1[11] - s0[11], (uint32_t)(b.uart_bytes - ub0), "UART bytes received");
    CHECK(s1[12] - s0[12] >= (uint32_t)(10 * (b.uart_bytes - ub0)), "UART bit times: %u for %llu bytes",
          s1[12] - s0[12], (unsigned long long)(b.uart_bytes - ub0));
    CHECK(s1[12] - s0[12] <= (uint32_t)(g_cycle - cyc0) / CPB + 64, "UART bit times: %u in %llu cycles",
          s1[12] - s0[12], (unsigned long long)(g_cycle - cyc0));

    // 5. RESET_STATUS, LEDs, idle
    Resp rr = b.call(0, 0, 0x21, {});
    CHECK_EQ(rr.type, 0xA1, "RESET_STATUS response");
    CHECK_EQ(rr.payload.size(), 0, "RESET_STATUS payload");
    std::vector<uint32_t> s2 = words_of(b.call(0, 0, 0x20, {}).payload);
    CHECK(s2.size() == 13 && s2[0] == 1 && s2[8] == 1, "counters after RESET_STATUS");
    for (int i = 0; i < 200; i++) b.cycle();
    CHECK(b.tb.m->idle, "idle output low with nothing in flight");
    CHECK(b.hb_toggles >= 2, "heartbeat toggled %d times", b.hb_toggles);
    CHECK(b.seen_act, "activity LED never lit");
    CHECK(b.seen_err, "error LED never lit");
    CHECK_EQ(b.eth_bad + b.udec.errors, 0, "malformed response frames");
    std::printf("board_top: %llu response frames, %llu cycles\n", (unsigned long long)b.frames_out,
                (unsigned long long)g_cycle);
    return tb_finish("board_top");
}
