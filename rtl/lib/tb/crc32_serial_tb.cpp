// crc32_serial_tb.cpp - Verilator bench for rtl/lib/crc32_serial.v
//
// Build and run from rtl/:
//   verilator --cc --exe --build -j 2 -Wall --Mdir /tmp/crc32_serial \
//     -CFLAGS -I$PWD/lib/tb $PWD/lib/crc32_serial.v $PWD/lib/tb/crc32_serial_tb.cpp
//   /tmp/crc32_serial/Vcrc32_serial --seed 1
//
// Reference: the bytewise reflected CRC-32 (poly 0xEDB88320). Checks:
//   - CRC32("123456789") == 0xCBF43926 after init and 72 steps;
//   - random messages (0..1600 bytes, bits fed LSB first, with random idle
//     clocks between steps): the register equals the reference after every
//     byte; then the FCS is read out as a sender does (~crc[7:0], then 8
//     rotations, four times): it equals ~reference LSB first, and 32
//     rotations restore the register; feeding the FCS bytes leaves the
//     residue 0xDEBB20E3;
//   - init has priority over step.
#include "Vcrc32_serial.h"
#include "tb_util.h"

static uint32_t ref_byte(uint32_t c, uint8_t d) {
    for (int i = 0; i < 8; i++) c = ((c ^ (d >> i)) & 1) ? (c >> 1) ^ 0xEDB88320u : c >> 1;
    return c;
}

struct Bench {
    Tb<Vcrc32_serial> tb;
    std::mt19937_64 rng;
    double idle_p = 0.0;
    Bench(const TbOpts& o) : tb("crc32_serial", o), rng(o.seed) {}
    void clock(bool init, bool step, bool rot, bool d) {
        auto* m = tb.m.get();
        m->init = init;
        m->step = step;
        m->rot = rot;
        m->d = d;
        tb.settle();
        tb.tick();
    }
    void idle() {
        while (std::uniform_real_distribution<double>(0, 1)(rng) < idle_p) clock(false, false, (bool)(rng() & 1), (bool)(rng() & 1));
    }
    void byte(uint8_t b) {
        for (int i = 0; i < 8; i++) {
            idle();
            clock(false, true, false, (b >> i) & 1);
        }
    }
    void rotate8() {
        for (int i = 0; i < 8; i++) {
            idle();
            clock(false, true, true, (bool)(rng() & 1));
        }
    }
    uint32_t crc() { return tb.m->crc; }
};

int main(int argc, char** argv) {
    Verilated::commandArgs(argc, argv);
    TbOpts o = tb_parse(argc, argv);
    Bench b(o);

    b.clock(true, false, false, false);
    CHECK_EQ(b.crc(), 0xFFFFFFFFu, "after init");
    for (const char* p = "123456789"; *p; p++) b.byte((uint8_t)*p);
    CHECK_EQ(~b.crc(), 0xCBF43926u, "CRC32(\"123456789\")");

    // init wins over step
    b.clock(true, true, false, true);
    CHECK_EQ(b.crc(), 0xFFFFFFFFu, "init with step");

    for (int msg = 0; msg < 300; msg++) {
        b.idle_p = (msg % 3 == 0) ? 0.0 : (msg % 3 == 1) ? 0.2 : 0.7;
        int len = (int)(b.rng() % 1601);
        b.clock(true, false, false, false);
        uint32_t rc = 0xFFFFFFFFu;
        for (int i = 0; i < len; i++) {
            uint8_t d = (uint8_t)b.rng();
            b.byte(d);
            rc = ref_byte(rc, d);
            CHECK_EQ(b.crc(), rc, "state after a byte");
        }
        uint32_t st = b.crc();
        uint32_t fcs = 0;
        for (int i = 0; i < 4; i++) {
            fcs |= (uint32_t)(uint8_t)~b.crc() << (8 * i);
            b.rotate8();
        }
        CHECK_EQ(fcs, ~rc, "FCS read out by rotation");
        CHECK_EQ(b.crc(), st, "32 rotations restore the register");
        for (int i = 0; i < 4; i++) b.byte((uint8_t)(fcs >> (8 * i)));
        CHECK_EQ(b.crc(), 0xDEBB20E3u, "residue after FCS");
    }
    return tb_finish("crc32_serial");
}
