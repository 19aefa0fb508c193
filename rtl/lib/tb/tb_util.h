// tb_util.h - small helpers shared by the Verilator C++ test benches in rtl/.
//
// Every bench:
//   - drives its DUT cycle by cycle through Tb<Model>::tick(): inputs are set
//     while clk is low, eval() settles combinational outputs (the bench samples
//     handshakes there, before the edge), then the rising edge is applied;
//   - counts every comparison with CHECK(); a failure prints a message (the
//     first 20 are shown) and makes the bench return non-zero;
//   - prints "PASS <name> <checks>" (or "FAIL <name> <failures>/<checks>");
//   - accepts "--trace" (writes <name>.fst when built with --trace-fst) and
//     "--seed N" (default seed is fixed, so runs are reproducible).
#pragma once
#include <cinttypes>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <random>
#include <string>

#include "verilated.h"
#if VM_TRACE
#include "verilated_fst_c.h"
#endif

struct TbStats {
    uint64_t checks = 0;
    uint64_t failures = 0;
};
static TbStats g_tb;
static uint64_t g_cycle = 0;

static inline void tb_fail(const char* file, int line, const char* fmt, ...) {
    g_tb.failures++;
    if (g_tb.failures > 20) return;
    std::fprintf(stderr, "%s:%d: cycle %" PRIu64 ": ", file, line, g_cycle);
    va_list ap;
    va_start(ap, fmt);
    std::vfprintf(stderr, fmt, ap);
    va_end(ap);
    std::fputc('\n', stderr);
}

// CHECK(cond, fmt, ...) - count a check; on failure report fmt.
#define CHECK(cond, ...)                                         \
    do {                                                         \
        g_tb.checks++;                                           \
        if (!(cond)) tb_fail(__FILE__, __LINE__, __VA_ARGS__);   \
    } while (0)

// CHECK_EQ(got, want, what) - integer equality with both values printed.
#define CHECK_EQ(got, want, what)                                           \
    do {                                                                    \
        g_tb.checks++;                                                      \
        uint64_t g_ = (uint64_t)(got), w_ = (uint64_t)(want);               \
        if (g_ != w_)                                                       \
            tb_fail(__FILE__, __LINE__, "%s: got 0x%" PRIx64                \
                    " want 0x%" PRIx64, (what), g_, w_);                    \
    } while (0)

struct TbOpts {
    bool trace = false;
    uint64_t seed = 1;
};

static inline TbOpts tb_parse(int argc, char** argv) {
    TbOpts o;
    for (int i = 1; i < argc; i++) {
        if (!std::strcmp(argv[i], "--trace")) o.trace = true;
        else if (!std::strcmp(argv[i], "--seed") && i + 1 < argc)
            o.seed = std::strtoull(argv[++i], nullptr, 0);
    }
    return o;
}

// Tb wraps a Verilated model with a clk input and optional FST tracing.
template <class M>
struct Tb {
    std::unique_ptr<VerilatedContext> ctx;
    std::unique_ptr<M> m;
#if VM_TRACE
    std::unique_ptr<VerilatedFstC> tfp;
#endif
    uint64_t t = 0;

    Tb(const char* name, const TbOpts& o) : ctx(new VerilatedContext) {
        ctx->traceEverOn(o.trace);
        m.reset(new M(ctx.get()));
#if VM_TRACE
        if (o.trace) {
            tfp.reset(new VerilatedFstC);
            m->trace(tfp.get(), 99);
            tfp->open((std::string(name) + ".fst").c_str());
        }
#else
        if (o.trace)
            std::fprintf(stderr, "%s: --trace ignored (build with --trace-fst)\n", name);
#endif
        m->clk = 0;
        m->eval();
    }
    ~Tb() {
        m->final();
#if VM_TRACE
        if (tfp) tfp->close();
#endif
    }
    // settle combinational logic after inputs changed (clk low)
    void settle() { m->eval(); }
    // rising edge then falling edge; call settle() and sample first.
    void tick() {
        m->eval();
#if VM_TRACE
        if (tfp) tfp->dump(t);
#endif
        t += 5;
        m->clk = 1;
        m->eval();
#if VM_TRACE
        if (tfp) tfp->dump(t);
#endif
        t += 5;
        m->clk = 0;
        m->eval();
        g_cycle++;
    }
};

static inline int tb_finish(const char* name) {
    if (g_tb.failures == 0 && g_tb.checks > 0) {
        std::printf("PASS %s %" PRIu64 "\n", name, g_tb.checks);
        return 0;
    }
    std::printf("FAIL %s %" PRIu64 "/%" PRIu64 "\n", name, g_tb.failures, g_tb.checks);
    return 1;
}
