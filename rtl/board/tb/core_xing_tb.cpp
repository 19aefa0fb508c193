// core_xing_tb.cpp - Verilator bench for rtl/board/core_xing.v
//
// Build: verilator --cc --exe --build -Wall -CFLAGS -I../../lib/tb core_xing.v tb/core_xing_tb.cpp
//
// Two clocks, scheduled by time: the shell's clk (period PS) and the
// core's clk_core (period PC, first edge at an offset), in four settings:
// 2:1 phase-aligned (the PLL's GENCLK / GENCLK_HALF), 2:1 with the core
// clock shifted, 2.5:1 and 2.2:1. Both sides are behavioural models:
//
//   shell (as proto_engine): bank writes at most every second clk with a
//     new word held in a register until the next write; requests with
//     an id held while req_valid is high until req_ready; result words
//     taken with a random ready.
//   core (as the generated core): req_ready = idle; a request runs a
//     random number of clk_core cycles and offers 1..5 words (id, index),
//     each held until res_ready; idle rises when its last word is offered
//     (so the next request can be taken while that word waits); rst_core
//     resets it.
//
// The data words themselves never pass through core_xing; the bench
// checks that each side samples the other's held word at the right time:
//   - every bank write reaches the core exactly once, as a one-clk_core
//     strobe with that write's word (in order; the shell's own register
//     moves to the next word two clk after the write at the earliest);
//   - every request reaches the core exactly once, while the shell holds
//     it (its id is the one offered), and the shell sees req_ready only
//     after the core took it;
//   - every result word reaches the shell exactly once, in order, while
//     the core holds it;
//   - s_core_idle is high once everything has drained, and low while the
//     core model has been busy for more than 4 clk;
//   - a reset of 2 clk in the middle of traffic leaves no stale request
//     or result word on either side (and no spurious bank write).
#include <deque>
#include <vector>

#include "Vcore_xing.h"
#include "tb_util.h"

struct Bench {
    std::unique_ptr<VerilatedContext> ctx;
    std::unique_ptr<Vcore_xing> m;
    std::mt19937_64 rng;
    uint64_t PS = 20, PC = 10, ts = 0, tc = 0;

    // shell model
    bool bw_en = false;
    uint32_t bw_word = 0, bw_next = 1;
    std::deque<uint32_t> bank_expect;
    int banks_left = 0;
    bool req_pend = false;
    uint32_t req_id = 0, next_id = 0;
    int reqs_left = 0;
    std::deque<uint32_t> res_expect;   // words the shell must take, in order
    bool res_ready = false;
    int rst_left = 0;                  // clk cycles of rst still to drive
    bool after_rst = false;            // a reset happened: stale state must not appear
    // core model
    int c_busy = 0;                    // clk_core cycles until the words start
    std::deque<uint32_t> c_words;      // words of the running request not yet offered
    bool c_valid = false;
    uint32_t c_word = 0;
    bool c_running = false;
    uint64_t c_busy_since = 0;         // shell cycle when the core model became busy
    // counters
    uint64_t shell_cycles = 0, bank_writes = 0, bank_seen = 0, reqs = 0, words = 0, accepted = 0;
    double p_bank = 0.5, p_req = 0.5, p_ready = 0.7;

    Bench(const TbOpts& o) : ctx(new VerilatedContext), m(new Vcore_xing(ctx.get())), rng(o.seed) {
        m->clk = 0;
        m->clk_core = 0;
        m->rst = 0;
        m->eval();
    }
    bool coin(double p) { return std::uniform_real_distribution<double>(0, 1)(rng) < p; }
    int rnd(int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); }
    bool core_idle() const { return !c_running; }

    void drive() {
        m->s_bank_wr_en = bw_en;
        m->s_bank_wr_word = bw_word;
        m->s_req_valid = req_pend;
        m->s_res_ready = res_ready;
        m->rst = rst_left > 0;
        m->c_req_ready = core_idle();
        m->c_res_valid = c_valid;
        m->c_idle = core_idle();
    }

    // one scheduler step: the next edge of either clock (or both)
    void step() {
        uint64_t t = std::min(ts, tc);
        bool sh = (t == ts), co = (t == tc);
        drive();
        m->eval();
        // ---- samples before the edge (both sides from the same state)
        bool s_req_ready = m->s_req_ready, s_res_valid = m->s_res_valid, s_core_idle = m->s_core_idle;
        bool c_bank = m->c_bank_wr_en, c_req_valid = m->c_req_valid, c_res_ready = m->c_res_ready;
        bool rst_core = m->rst_core;
        uint32_t shell_word = m->c_bank_wr_word, shell_id = req_id, core_word = c_word;
        bool shell_pend = req_pend;
        if (rst_core) rst_window = false;   // the core is reset from here

        if (co) {
            g_cycle = shell_cycles;
            if (c_bank) {
                CHECK(!bank_expect.empty(), "bank strobe without a write");
                if (!bank_expect.empty()) {
                    CHECK_EQ(shell_word, bank_expect.front(), "bank word at the core's strobe");
                    bank_expect.pop_front();
                }
                bank_seen++;
            }
            if (rst_core) {
                c_running = false;
                c_valid = false;
                c_words.clear();
                c_busy = 0;
            } else {
                if (c_req_valid && core_idle() && rst_window) {
                    // a request taken while the reset reaches the core: the
                    // core is reset a clock or two later
                } else if (c_req_valid && core_idle()) {
                    // the core takes a request: the one the shell holds, once
                    CHECK(shell_pend, "core took a request the shell does not offer");
                    CHECK_EQ(accepted, shell_id - pre_reset_ids, "requests taken by the core (each once, in order)");
                    accepted++;
                    c_running = true;
                    c_busy = rnd(0, 30);
                    c_busy_since = shell_cycles;
                    int n = 1 + (int)(shell_id % 5);
                    for (int j = 0; j < n; j++) {
                        c_words.push_back(shell_id << 8 | (uint32_t)j);
                        res_expect.push_back(shell_id << 8 | (uint32_t)j);
                    }
                }
                if (c_valid && c_res_ready) c_valid = false;
                if (c_running && c_busy > 0) {
                    c_busy--;
                } else if (c_running && !c_valid && !c_words.empty() && coin(0.6)) {
                    c_valid = true;
                    c_word = c_words.front();
                    c_words.pop_front();
                    if (c_words.empty()) c_running = false;   // last word offered: idle
                }
            }
        }
        if (sh) {
            shell_cycles++;
            g_cycle = shell_cycles;
            if (rst_left > 0) {
                rst_left--;
                bw_en = false;
                req_pend = false;
                res_ready = false;
                res_expect.clear();
            } else {
                if (req_pend && s_req_ready) {
                    CHECK_EQ(accepted, req_id - pre_reset_ids + 1, "req_ready after the core took the request");
                    reqs++;
                    req_pend = false;
                } else if (!req_pend && reqs_left > 0 && coin(p_req)) {
                    req_pend = true;
                    req_id = next_id++;
                    reqs_left--;
                }
                if (res_ready && s_res_valid) {
                    CHECK(!res_expect.empty(), "result word without a request");
                    if (!res_expect.empty()) {
                        CHECK_EQ(core_word, res_expect.front(), "result word at the shell");
                        res_expect.pop_front();
                    }
                    words++;
                }
                res_ready = coin(p_ready);
                if (bw_en) {
                    bw_en = false;                 // one word per two clocks at most
                } else if (banks_left > 0 && coin(p_bank)) {
                    bw_en = true;
                    bw_word = bw_next++ & 0xFFFF;
                    bank_expect.push_back(bw_word);
                    banks_left--;
                    bank_writes++;
                }
            }
            if (!c_running) c_busy_since = shell_cycles;
            if (s_core_idle) {
                CHECK(shell_cycles - c_busy_since <= 4, "s_core_idle while the core has run for %llu clk",
                      (unsigned long long)(shell_cycles - c_busy_since));
            }
        }
        // ---- the edge
        if (sh) m->clk = 1;
        if (co) m->clk_core = 1;
        m->eval();
        m->clk = 0;
        m->clk_core = 0;
        m->eval();
        if (sh) ts += PS;
        if (co) tc += PC;
    }
    uint64_t pre_reset_ids = 0;   // ids issued before the last reset (their acceptance is moot)
    bool rst_window = false;      // rst driven, not yet seen by the core

    void shell_clocks(int n) {
        uint64_t end = shell_cycles + (uint64_t)n;
        while (shell_cycles < end) step();
    }

    bool drained() const {
        return banks_left == 0 && reqs_left == 0 && !req_pend && bank_expect.empty() && res_expect.empty() &&
               !c_running && !c_valid && !bw_en;
    }

    void reset() {
        int left = reqs_left, bleft = banks_left;
        reqs_left = 0;
        banks_left = 0;
        rst_left = 2;
        rst_window = true;
        shell_clocks(6);
        // the pre-reset request (if any) is gone on both sides
        pre_reset_ids = next_id;
        accepted = 0;
        CHECK(!rst_window, "rst_core never rose");
        shell_clocks(6);
        drive();
        m->eval();
        CHECK(!m->c_req_valid, "a request offered to the core after the reset");
        CHECK(!m->s_res_valid, "a result word offered to the shell after the reset");
        CHECK(m->s_core_idle, "s_core_idle low after the reset");
        CHECK(!m->rst_core, "rst_core still high");
        CHECK(bank_expect.empty(), "bank writes lost over the reset: %zu left, front %u, strobes %llu of %llu", bank_expect.size(), bank_expect.empty() ? 0u : bank_expect.front(), (unsigned long long)bank_seen, (unsigned long long)bank_writes);
        reqs_left = left;
        banks_left = bleft;
    }
};

static void run(Bench& b, uint64_t ps, uint64_t pc, uint64_t phase, const char* name) {
    b.PS = ps;
    b.PC = pc;
    b.ts = b.tc = std::max(b.ts, b.tc) + 100;
    b.tc += phase;
    b.rst_left = 4;
    b.rst_window = true;
    b.shell_clocks(8);
    b.pre_reset_ids = b.next_id;
    b.accepted = 0;
    uint64_t w0 = b.bank_writes, r0 = b.reqs, d0 = b.words;
    for (int round = 0; round < 12; round++) {
        b.p_bank = (round & 1) ? 1.0 : 0.3;
        b.p_req = (round & 2) ? 1.0 : 0.2;
        b.p_ready = (round & 4) ? 1.0 : 0.4;
        b.banks_left = b.rnd(0, 200);
        b.reqs_left = b.rnd(1, 40);
        if (round == 9) {
            b.shell_clocks(b.rnd(20, 60));   // mid-traffic reset
            b.reset();
        }
        long guard = 0;
        while (!b.drained() && guard++ < 200000) b.step();
        CHECK(b.drained(), "%s round %d: traffic did not drain (%zu bank, %d requests, %zu words left)", name, round,
              b.bank_expect.size(), b.reqs_left, b.res_expect.size());
        b.shell_clocks(8);
        b.drive();
        b.m->eval();
        CHECK(b.m->s_core_idle, "%s round %d: s_core_idle low after the traffic drained", name, round);
        CHECK(!b.m->c_bank_wr_en && !b.m->c_req_valid && !b.m->s_res_valid, "%s round %d: strobes after draining",
              name, round);
    }
    CHECK_EQ(b.bank_seen, b.bank_writes, "bank strobes at the core = bank writes");
    std::printf("core_xing %s: %llu bank writes, %llu requests, %llu result words\n", name,
                (unsigned long long)(b.bank_writes - w0), (unsigned long long)(b.reqs - r0),
                (unsigned long long)(b.words - d0));
}

int main(int argc, char** argv) {
    Verilated::commandArgs(argc, argv);
    TbOpts o = tb_parse(argc, argv);
    Bench b(o);
    run(b, 20, 10, 0, "2:1 aligned");
    run(b, 20, 10, 3, "2:1 shifted");
    run(b, 25, 10, 7, "2.5:1");
    run(b, 22, 10, 4, "2.2:1");
    return tb_finish("core_xing");
}
