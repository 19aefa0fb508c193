// crc32_tb.cpp - Verilator bench for rtl/lib/crc32.v (combinational)
//
// Build and run from rtl/ (--trace-fst and --trace give /tmp/crc32/crc32.fst):
//   verilator --cc --exe --build -j 2 -Wall --trace-fst --Mdir /tmp/crc32 \
//     -CFLAGS -I$PWD/lib/tb \
//     $PWD/lib/crc32.v $PWD/lib/tb/crc32_tb.cpp
//   (cd /tmp/crc32 && ./Vcrc32 --trace --seed 1)
//
// Reference: bitwise reflected CRC-32 (poly 0xEDB88320) and an independent
// table-driven implementation, cross-checked with each other. Checks:
//   - CRC32("123456789") == 0xCBF43926 through chained DUT updates;
//   - all 256 bytes from states 0, 0xFFFFFFFF and random states;
//   - 200000 random (state, byte) pairs;
//   - random messages (0..1600 bytes): ~state equals the reference CRC, and
//     after appending the FCS (LSB first) the state equals the residue
//     0xDEBB20E3.
#include "Vcrc32.h"
#include "tb_util.h"

static uint32_t ref_bitwise(uint32_t c, uint8_t d) {
    for (int i = 0; i < 8; i++) c = ((c ^ (d >> i)) & 1) ? (c >> 1) ^ 0xEDB88320u : c >> 1;
    return c;
}
static uint32_t table[256];
static uint32_t ref_table(uint32_t c, uint8_t d) { return table[(c ^ d) & 0xFF] ^ (c >> 8); }

static std::unique_ptr<Vcrc32> m;
#if VM_TRACE
static std::unique_ptr<VerilatedFstC> tfp;
#endif
static uint64_t t = 0;
static uint32_t dut(uint32_t c, uint8_t d) {
    m->crc_in = c;
    m->data_in = d;
    m->eval();
#if VM_TRACE
    if (tfp) tfp->dump(t);
#endif
    t++;
    g_cycle++;
    return m->crc_out;
}

int main(int argc, char** argv) {
    Verilated::commandArgs(argc, argv);
    TbOpts o = tb_parse(argc, argv);
    std::mt19937_64 rng(o.seed);
    VerilatedContext ctx;
    ctx.traceEverOn(o.trace);
    m.reset(new Vcrc32(&ctx));
#if VM_TRACE
    if (o.trace) {
        tfp.reset(new VerilatedFstC);
        m->trace(tfp.get(), 99);
        tfp->open("crc32.fst");
    }
#endif
    for (uint32_t i = 0; i < 256; i++) {
        uint32_t c = i;
        for (int k = 0; k < 8; k++) c = (c & 1) ? (c >> 1) ^ 0xEDB88320u : c >> 1;
        table[i] = c;
    }

    // check value
    const char* s = "123456789";
    uint32_t c = 0xFFFFFFFFu, r = 0xFFFFFFFFu;
    for (const char* p = s; *p; p++) {
        c = dut(c, (uint8_t)*p);
        r = ref_bitwise(r, (uint8_t)*p);
    }
    CHECK_EQ(~c, 0xCBF43926u, "CRC32(\"123456789\") from DUT");
    CHECK_EQ(~r, 0xCBF43926u, "CRC32(\"123456789\") from reference");

    // exhaustive bytes from fixed and random states
    std::vector<uint32_t> states = {0u, 0xFFFFFFFFu, 0x80000000u, 1u};
    for (int i = 0; i < 12; i++) states.push_back((uint32_t)rng());
    for (uint32_t st : states)
        for (int d = 0; d < 256; d++) {
            uint32_t want = ref_bitwise(st, (uint8_t)d);
            CHECK_EQ(ref_table(st, (uint8_t)d), want, "table vs bitwise reference");
            CHECK_EQ(dut(st, (uint8_t)d), want, "crc_out");
        }

    // random pairs
    for (int i = 0; i < 200000; i++) {
        uint32_t st = (uint32_t)rng();
        uint8_t d = (uint8_t)rng();
        CHECK_EQ(dut(st, d), ref_table(st, d), "crc_out (random)");
    }

    // random messages with FCS residue
    for (int msg = 0; msg < 300; msg++) {
        int len = (int)(rng() % 1601);
        uint32_t dc = 0xFFFFFFFFu, rc = 0xFFFFFFFFu;
        for (int i = 0; i < len; i++) {
            uint8_t d = (uint8_t)rng();
            dc = dut(dc, d);
            rc = ref_table(rc, d);
        }
        CHECK_EQ(dc, rc, "message state");
        uint32_t fcs = ~dc;
        for (int i = 0; i < 4; i++) dc = dut(dc, (uint8_t)(fcs >> (8 * i)));
        CHECK_EQ(dc, 0xDEBB20E3u, "residue after FCS");
    }

    m->final();
#if VM_TRACE
    if (tfp) tfp->close();
    tfp.reset();
#endif
    m.reset();
    return tb_finish("crc32");
}
