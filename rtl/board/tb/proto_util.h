// proto_util.h - board protocol helpers shared by the benches in rtl/board/tb.
//
// Frames follow docs/protocol.md section 1:
//   SOF(0xA5) type flags seq[2] len[2] payload[len] crc[4]
// with the CRC-32 (IEEE) over type .. payload, least significant byte first.
#pragma once
#include <cstdint>
#include <cstdio>
#include <deque>
#include <vector>

static const uint8_t SOF = 0xA5;

struct Crc32 {
    uint32_t tab[256];
    Crc32() {
        for (uint32_t i = 0; i < 256; i++) {
            uint32_t c = i;
            for (int k = 0; k < 8; k++) c = (c & 1) ? (c >> 1) ^ 0xEDB88320u : c >> 1;
            tab[i] = c;
        }
    }
    uint32_t update(uint32_t st, uint8_t b) const { return tab[(st ^ b) & 0xFF] ^ (st >> 8); }
    uint32_t of(const uint8_t* p, size_t n, uint32_t st = 0xFFFFFFFFu) const {
        for (size_t i = 0; i < n; i++) st = update(st, p[i]);
        return ~st;
    }
    uint32_t of(const std::vector<uint8_t>& v) const { return of(v.data(), v.size()); }
};
static const Crc32 g_crc;

// A protocol frame (command or response).
struct Frame {
    uint8_t type = 0;
    uint8_t flags = 0;
    uint16_t seq = 0;
    std::vector<uint8_t> payload;

    std::vector<uint8_t> encode() const {
        std::vector<uint8_t> b;
        b.push_back(SOF);
        b.push_back(type);
        b.push_back(flags);
        b.push_back((uint8_t)seq);
        b.push_back((uint8_t)(seq >> 8));
        b.push_back((uint8_t)payload.size());
        b.push_back((uint8_t)(payload.size() >> 8));
        b.insert(b.end(), payload.begin(), payload.end());
        uint32_t c = g_crc.of(b.data() + 1, b.size() - 1);
        for (int i = 0; i < 4; i++) b.push_back((uint8_t)(c >> (8 * i)));
        return b;
    }
};

static inline void put_u16(std::vector<uint8_t>& v, uint16_t x) {
    v.push_back((uint8_t)x);
    v.push_back((uint8_t)(x >> 8));
}
static inline void put_u32(std::vector<uint8_t>& v, uint32_t x) {
    for (int i = 0; i < 4; i++) v.push_back((uint8_t)(x >> (8 * i)));
}
static inline uint32_t get_u32(const std::vector<uint8_t>& v, size_t i) {
    return v[i] | v[i + 1] << 8 | v[i + 2] << 16 | (uint32_t)v[i + 3] << 24;
}
static inline std::vector<uint32_t> words_of(const std::vector<uint8_t>& p) {
    std::vector<uint32_t> w;
    for (size_t i = 0; i + 4 <= p.size(); i += 4) w.push_back(get_u32(p, i));
    return w;
}

// FrameDecoder reassembles frames from a byte stream that should contain
// only well-formed frames back to back (a board's output). Any deviation is
// reported through `errors`.
struct FrameDecoder {
    std::vector<uint8_t> cur;
    std::deque<Frame> frames;
    uint64_t errors = 0;
    const char* name;
    explicit FrameDecoder(const char* n) : name(n) {}

    void byte(uint8_t b) {
        if (cur.empty() && b != SOF) {
            errors++;
            std::fprintf(stderr, "%s: byte 0x%02x outside a frame\n", name, b);
            return;
        }
        cur.push_back(b);
        if (cur.size() >= 7) {
            size_t len = cur[5] | cur[6] << 8;
            if (len > 1024) {
                errors++;
                std::fprintf(stderr, "%s: frame length %zu\n", name, len);
                cur.clear();
                return;
            }
            if (cur.size() == 11 + len) {
                uint32_t c = g_crc.of(cur.data() + 1, 6 + len);
                uint32_t got = get_u32(cur, 7 + len);
                if (c != got) {
                    errors++;
                    std::fprintf(stderr, "%s: bad CRC %08x want %08x\n", name, got, c);
                } else {
                    Frame f;
                    f.type = cur[1];
                    f.flags = cur[2];
                    f.seq = (uint16_t)(cur[3] | cur[4] << 8);
                    f.payload.assign(cur.begin() + 7, cur.begin() + 7 + len);
                    frames.push_back(f);
                }
                cur.clear();
            }
        }
    }
};
