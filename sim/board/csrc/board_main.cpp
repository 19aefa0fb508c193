// board_main.cpp - the Verilated PTM board (rtl/board/board_top.v) bridged
// to a pseudo-terminal (UART, bit by bit) and a Linux TAP device (GMII).
//
// Built by package sim/board (see doc.go) with
//   verilator --cc --exe --build -j 2 --top-module board_top ... board_main.cpp
// and CLKS_PER_BIT passed both as -G and -D.
//
// Flags:
//   --uart                 open a pseudo-terminal and bridge it to the UART pins
//   --tap NAME             open TAP device NAME (IFF_TAP|IFF_NO_PI), bring it up,
//                          bridge it to the GMII interface
//   --seed N               seed of the fault injection (default 1)
//   --uart-rx-flip P / --uart-rx-drop P   host->board UART bytes: flip one bit /
//   --uart-tx-flip P / --uart-tx-drop P   drop, each with probability P; board->host
//   --eth-rx-flip P  / --eth-rx-drop P    the same for Ethernet wire bytes (after the
//   --eth-tx-flip P  / --eth-tx-drop P    FCS, so a hit frame fails its FCS check)
//   --delay-ms N           hold every response byte / frame N ms before delivering it
//   --tail N               clocks to keep running after the board goes idle (default
//                          64 + 200 bit times: covers the UART idle timeout)
//   --max-cycles N         stop after N clocks (0: never)
//   --watch-stdin          also stop at end of stdin (the parent's pipe closing)
//
// stdout (line by line, flushed): "UART: /dev/pts/N", "TAP: NAME", then
// "READY clks_per_bit=N", and at exit one "STATS key=value ..." line.
// The program stops on SIGTERM or SIGINT (and with --watch-stdin at end of
// stdin, so that it never outlives the process that started it).
//
// Time: the model is clocked flat out while anything is in flight (UART bits
// or GMII bytes to drive, a frame being received, executed or sent) and for
// --tail clocks after the board's idle output rises; then it waits in poll()
// without clocking, so an idle board costs no CPU. Simulated time therefore
// only advances while there is work: the UART idle timeout of the board is
// measured in simulated clocks.
#include <arpa/inet.h>
#include <fcntl.h>
#include <linux/if.h>
#include <linux/if_tun.h>
#include <poll.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <random>
#include <string>
#include <vector>

#include <verilated.h>
#include "Vboard_top.h"

#ifndef CLKS_PER_BIT
#define CLKS_PER_BIT 8
#endif
static const int CPB = CLKS_PER_BIT;

static volatile sig_atomic_t g_stop = 0;
static void on_signal(int) { g_stop = 1; }

static double now_s() {
    timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static void die(const char* what) {
    std::fprintf(stderr, "board_sim: %s: %s\n", what, std::strerror(errno));
    std::exit(1);
}

// ------------------------------------------------------------------ CRC-32
static uint32_t g_crc_tab[256];
static void crc_init() {
    for (uint32_t i = 0; i < 256; i++) {
        uint32_t c = i;
        for (int k = 0; k < 8; k++) c = (c & 1) ? (c >> 1) ^ 0xEDB88320u : c >> 1;
        g_crc_tab[i] = c;
    }
}
static uint32_t crc32_of(const uint8_t* p, size_t n) {
    uint32_t c = 0xFFFFFFFFu;
    for (size_t i = 0; i < n; i++) c = g_crc_tab[(c ^ p[i]) & 0xFF] ^ (c >> 8);
    return ~c;
}

// ------------------------------------------------------------------ faults
struct Fault {
    double flip = 0, drop = 0;
    uint64_t flipped = 0, dropped = 0;
};
struct Faults {
    Fault urx, utx, erx, etx;
    std::mt19937_64 rng{1};
    double coin() { return std::uniform_real_distribution<double>(0, 1)(rng); }
    // applies f to a byte: returns false when the byte is dropped
    bool apply(Fault& f, uint8_t& b) {
        if (f.drop > 0 && coin() < f.drop) {
            f.dropped++;
            return false;
        }
        if (f.flip > 0 && coin() < f.flip) {
            b ^= (uint8_t)(1u << (rng() % 8));
            f.flipped++;
        }
        return true;
    }
    void apply(Fault& f, std::vector<uint8_t>& v) {
        std::vector<uint8_t> out;
        out.reserve(v.size());
        for (uint8_t b : v)
            if (apply(f, b)) out.push_back(b);
        v.swap(out);
    }
};

// A chunk of output waiting for its delivery time.
struct Due {
    double at;
    std::vector<uint8_t> data;
};

struct Sim {
    Vboard_top* top = nullptr;
    uint64_t cycle = 0;
    Faults faults;
    double delay = 0;
    // UART
    int pty_master = -1, pty_slave = -1;
    std::deque<uint8_t> urx_q;       // host -> board bytes waiting for the line
    int urx_bit = -1, urx_cnt = 0;   // bit being driven (-1: idle), clocks into it
    uint8_t urx_cur = 0;
    int utx_state = 0, utx_cnt = 0;  // decoder of uart_txd
    uint8_t utx_byte = 0;
    std::deque<Due> utx_out;         // board -> host bytes
    uint64_t uart_in = 0, uart_out = 0, uart_ferr = 0;
    // Ethernet
    int tap = -1;
    std::deque<std::vector<uint8_t>> erx_q;   // wire bursts (preamble..FCS) for GMII rx
    size_t erx_pos = 0;
    int erx_gap = 0;
    std::vector<uint8_t> etx_cur;
    bool etx_on = false;
    std::deque<Due> etx_out;
    uint64_t eth_in = 0, eth_out = 0, eth_bad = 0, eth_write_err = 0;
    // activity
    uint64_t quiet = 0;
    uint64_t tail = 64 + 200 * CPB;
    double active_s = 0;

    // -------------------------------------------------------------- clock
    void step() {
        // UART line: start bit, 8 data bits LSB first, stop bit
        if (urx_bit < 0 && !urx_q.empty()) {
            urx_cur = urx_q.front();
            urx_q.pop_front();
            urx_bit = 0;
            urx_cnt = 0;
        }
        int line = 1;
        if (urx_bit == 0) line = 0;
        else if (urx_bit >= 1 && urx_bit <= 8) line = (urx_cur >> (urx_bit - 1)) & 1;
        top->uart_rxd = line;
        if (urx_bit >= 0 && ++urx_cnt == CPB) {
            urx_cnt = 0;
            if (++urx_bit == 10) urx_bit = -1;
        }
        // GMII receive: one byte per clock, 12 idle clocks between bursts
        top->eth_clk_en = 1;
        top->gmii_rx_er = 0;
        if (erx_gap > 0) {
            erx_gap--;
            top->gmii_rx_dv = 0;
        } else if (!erx_q.empty()) {
            top->gmii_rx_dv = 1;
            top->gmii_rxd = erx_q.front()[erx_pos];
            if (++erx_pos == erx_q.front().size()) {
                erx_q.pop_front();
                erx_pos = 0;
                erx_gap = 12;
            }
        } else {
            top->gmii_rx_dv = 0;
        }
#if defined(CORE_CLK) && CORE_CLK
        // the dual-clock board: clk_core at twice clk, phase-aligned (the
        // PLL's GENCLK and GENCLK_HALF): a core edge alone in the middle
        // of clk's period, then both edges together
        top->clk = 0;
        top->clk_core = 0;
        top->eval();
        top->clk_core = 1;
        top->eval();
        top->clk_core = 0;
        top->eval();
        top->clk = 1;
        top->clk_core = 1;
        top->eval();
#else
        top->clk = 0;
        top->eval();
        top->clk = 1;
        top->eval();
#endif
        cycle++;
        sample_uart(top->uart_txd);
        sample_eth(top->gmii_tx_en, top->gmii_txd, top->gmii_tx_er);
    }

    void sample_uart(int txd) {
        if (utx_state == 0) {
            if (!txd) {
                utx_state = 1;
                utx_cnt = 0;
            }
            return;
        }
        utx_cnt++;
        if (utx_cnt == CPB / 2 && txd) {
            utx_state = 0;  // glitch
        } else if (utx_cnt > CPB / 2 && (utx_cnt - CPB / 2) % CPB == 0) {
            int bit = (utx_cnt - CPB / 2) / CPB;
            if (bit <= 8) {
                utx_byte = (uint8_t)((utx_byte >> 1) | (txd << 7));
            } else {
                utx_state = 0;
                if (!txd) {
                    uart_ferr++;
                    return;
                }
                uart_out++;
                uint8_t b = utx_byte;
                if (faults.apply(faults.utx, b)) {
                    double at = now_s() + delay;
                    if (!utx_out.empty() && utx_out.back().at >= at - 1e-3) utx_out.back().data.push_back(b);
                    else utx_out.push_back({at, {b}});
                }
            }
        }
    }

    void sample_eth(int en, uint8_t d, int er) {
        if (en) {
            etx_cur.push_back(er ? (uint8_t)(d ^ 0xFF) : d);
            etx_on = true;
            return;
        }
        if (!etx_on) return;
        etx_on = false;
        std::vector<uint8_t> w;
        w.swap(etx_cur);
        faults.apply(faults.etx, w);
        // strip the preamble and SFD, check and strip the FCS
        size_t i = 0;
        while (i < w.size() && w[i] == 0x55) i++;
        if (i >= w.size() || w[i] != 0xD5 || w.size() - i - 1 < 64) {
            eth_bad++;
            return;
        }
        std::vector<uint8_t> f(w.begin() + i + 1, w.end());
        uint32_t fcs = f[f.size() - 4] | f[f.size() - 3] << 8 | f[f.size() - 2] << 16 | (uint32_t)f[f.size() - 1] << 24;
        if (crc32_of(f.data(), f.size() - 4) != fcs) {
            eth_bad++;
            return;
        }
        f.resize(f.size() - 4);
        eth_out++;
        etx_out.push_back({now_s() + delay, f});
    }

    bool busy() const {
        return urx_bit >= 0 || !urx_q.empty() || !erx_q.empty() || erx_gap > 0 || utx_state != 0 || etx_on;
    }

    // -------------------------------------------------------------- I/O
    void read_pty() {
        if (pty_master < 0) return;
        uint8_t buf[4096];
        for (;;) {
            ssize_t n = read(pty_master, buf, sizeof buf);
            if (n <= 0) return;
            for (ssize_t i = 0; i < n; i++) {
                uint8_t b = buf[i];
                uart_in++;
                if (faults.apply(faults.urx, b)) urx_q.push_back(b);
            }
        }
    }
    void read_tap() {
        if (tap < 0) return;
        uint8_t buf[2048];
        for (;;) {
            ssize_t n = read(tap, buf, sizeof buf);
            if (n <= 0) return;
            if (n < 14) continue;
            eth_in++;
            std::vector<uint8_t> f(buf, buf + n);
            while (f.size() < 60) f.push_back(0);  // the MAC pads, as a NIC does
            uint32_t fcs = crc32_of(f.data(), f.size());
            for (int k = 0; k < 4; k++) f.push_back((uint8_t)(fcs >> (8 * k)));
            std::vector<uint8_t> w(7, 0x55);
            w.push_back(0xD5);
            w.insert(w.end(), f.begin(), f.end());
            faults.apply(faults.erx, w);
            if (!w.empty()) erx_q.push_back(w);
        }
    }
    // delivers due output; returns seconds until the next one (or -1)
    double flush() {
        double t = now_s(), next = -1;
        while (!utx_out.empty() && utx_out.front().at <= t) {
            Due& d = utx_out.front();
            ssize_t n = pty_master >= 0 ? write(pty_master, d.data.data(), d.data.size()) : (ssize_t)d.data.size();
            if (n < 0) {
                if (errno == EAGAIN) break;  // the pty is full: retry later
                n = (ssize_t)d.data.size();  // no reader: drop
            }
            d.data.erase(d.data.begin(), d.data.begin() + n);
            if (!d.data.empty()) break;
            utx_out.pop_front();
        }
        while (!etx_out.empty() && etx_out.front().at <= t) {
            Due& d = etx_out.front();
            if (write(tap, d.data.data(), d.data.size()) < 0) {
                if (errno == EAGAIN) break;
                eth_write_err++;
            }
            etx_out.pop_front();
        }
        for (auto* q : {&utx_out, &etx_out})
            if (!q->empty()) {
                double dt = q->front().at - t;
                if (dt < 0) dt = 0.001;  // blocked write: retry soon
                if (next < 0 || dt < next) next = dt;
            }
        return next;
    }
};

static void open_pty(Sim& s) {
    int m = posix_openpt(O_RDWR | O_NOCTTY);
    if (m < 0) die("posix_openpt");
    if (grantpt(m) < 0) die("grantpt");
    if (unlockpt(m) < 0) die("unlockpt");
    const char* name = ptsname(m);
    if (!name) die("ptsname");
    std::string path = name;
    // keep a slave descriptor open so that the master never sees a hangup
    // when a client closes the terminal, and make the line raw on both sides
    int sl = open(path.c_str(), O_RDWR | O_NOCTTY);
    if (sl < 0) die("open pty slave");
    termios tio;
    if (tcgetattr(sl, &tio) < 0) die("tcgetattr");
    cfmakeraw(&tio);
    if (tcsetattr(sl, TCSANOW, &tio) < 0) die("tcsetattr");
    if (tcgetattr(m, &tio) == 0) {
        cfmakeraw(&tio);
        tcsetattr(m, TCSANOW, &tio);
    }
    fcntl(m, F_SETFL, fcntl(m, F_GETFL) | O_NONBLOCK);
    s.pty_master = m;
    s.pty_slave = sl;
    std::printf("UART: %s\n", path.c_str());
    std::fflush(stdout);
}

static void open_tap(Sim& s, const char* name) {
    int fd = open("/dev/net/tun", O_RDWR | O_NONBLOCK);
    if (fd < 0) die("open /dev/net/tun");
    ifreq ifr;
    std::memset(&ifr, 0, sizeof ifr);
    ifr.ifr_flags = IFF_TAP | IFF_NO_PI;
    std::snprintf(ifr.ifr_name, IFNAMSIZ, "%s", name);
    if (ioctl(fd, TUNSETIFF, &ifr) < 0) die("TUNSETIFF");
    int sk = socket(AF_INET, SOCK_DGRAM, 0);
    if (sk < 0) die("socket");
    if (ioctl(sk, SIOCGIFFLAGS, &ifr) < 0) die("SIOCGIFFLAGS");
    ifr.ifr_flags |= IFF_UP | IFF_RUNNING;
    if (ioctl(sk, SIOCSIFFLAGS, &ifr) < 0) die("SIOCSIFFLAGS");
    close(sk);
    s.tap = fd;
    std::printf("TAP: %s\n", ifr.ifr_name);
    std::fflush(stdout);
}

static double arg_d(int argc, char** argv, int& i) {
    if (i + 1 >= argc) {
        std::fprintf(stderr, "board_sim: %s needs a value\n", argv[i]);
        std::exit(2);
    }
    return std::strtod(argv[++i], nullptr);
}

int main(int argc, char** argv) {
    Verilated::commandArgs(argc, argv);
    crc_init();
    Sim s;
    bool uart = false;
    const char* tap = nullptr;
    uint64_t max_cycles = 0;
    bool watch_stdin = false;
    for (int i = 1; i < argc; i++) {
        std::string a = argv[i];
        if (a == "--uart") uart = true;
        else if (a == "--tap" && i + 1 < argc) tap = argv[++i];
        else if (a == "--seed") s.faults.rng.seed((uint64_t)arg_d(argc, argv, i));
        else if (a == "--uart-rx-flip") s.faults.urx.flip = arg_d(argc, argv, i);
        else if (a == "--uart-rx-drop") s.faults.urx.drop = arg_d(argc, argv, i);
        else if (a == "--uart-tx-flip") s.faults.utx.flip = arg_d(argc, argv, i);
        else if (a == "--uart-tx-drop") s.faults.utx.drop = arg_d(argc, argv, i);
        else if (a == "--eth-rx-flip") s.faults.erx.flip = arg_d(argc, argv, i);
        else if (a == "--eth-rx-drop") s.faults.erx.drop = arg_d(argc, argv, i);
        else if (a == "--eth-tx-flip") s.faults.etx.flip = arg_d(argc, argv, i);
        else if (a == "--eth-tx-drop") s.faults.etx.drop = arg_d(argc, argv, i);
        else if (a == "--delay-ms") s.delay = arg_d(argc, argv, i) / 1000.0;
        else if (a == "--tail") s.tail = (uint64_t)arg_d(argc, argv, i);
        else if (a == "--max-cycles") max_cycles = (uint64_t)arg_d(argc, argv, i);
        else if (a == "--watch-stdin") watch_stdin = true;
        else if (a.rfind("+verilator", 0) == 0) continue;
        else {
            std::fprintf(stderr, "board_sim: unknown argument %s\n", a.c_str());
            return 2;
        }
    }
    signal(SIGTERM, on_signal);
    signal(SIGINT, on_signal);
    signal(SIGPIPE, SIG_IGN);

    VerilatedContext ctx;
    ctx.commandArgs(argc, argv);
    s.top = new Vboard_top(&ctx);
    if (uart) open_pty(s);
    if (tap) open_tap(s, tap);

    // reset
    s.top->uart_rxd = 1;
    s.top->rst = 1;
    for (int i = 0; i < 8; i++) s.step();
    s.top->rst = 0;
    std::printf("READY clks_per_bit=%d\n", CPB);
    std::fflush(stdout);

    double t0 = now_s();
    bool stdin_open = watch_stdin;
    while (!g_stop && (max_cycles == 0 || s.cycle < max_cycles)) {
        s.read_pty();
        s.read_tap();
        double next = s.flush();
        bool work = s.busy() || !s.top->idle;
        if (work) s.quiet = 0;
        if (work || s.quiet < s.tail) {
            double a = now_s();
            for (int i = 0; i < 512; i++) {
                s.step();
                if (s.busy() || !s.top->idle) s.quiet = 0;
                else s.quiet++;
            }
            s.active_s += now_s() - a;
            continue;
        }
        // quiet: wait for input, output deadlines or a signal
        pollfd fds[3];
        int n = 0;
        if (s.pty_master >= 0) fds[n++] = {s.pty_master, POLLIN, 0};
        if (s.tap >= 0) fds[n++] = {s.tap, POLLIN, 0};
        if (stdin_open) fds[n++] = {0, POLLIN, 0};
        int ms = next < 0 ? 200 : (int)(next * 1000) + 1;
        if (poll(fds, n, ms) > 0 && stdin_open && (fds[n - 1].revents & (POLLIN | POLLHUP))) {
            char c[256];
            ssize_t r = read(0, c, sizeof c);
            if (r <= 0) break;  // parent gone
        }
    }
    double wall = now_s() - t0;
    std::printf("STATS cycles=%" PRIu64 " wall_s=%.3f active_s=%.3f cycles_per_s=%.0f "
                "uart_in=%" PRIu64 " uart_out=%" PRIu64 " uart_frame_errors=%" PRIu64 " "
                "eth_in=%" PRIu64 " eth_out=%" PRIu64 " eth_bad_fcs=%" PRIu64 " eth_write_errors=%" PRIu64 " "
                "uart_rx_flipped=%" PRIu64 " uart_rx_dropped=%" PRIu64 " uart_tx_flipped=%" PRIu64
                " uart_tx_dropped=%" PRIu64 " eth_rx_flipped=%" PRIu64 " eth_rx_dropped=%" PRIu64
                " eth_tx_flipped=%" PRIu64 " eth_tx_dropped=%" PRIu64 "\n",
                s.cycle, wall, s.active_s, s.active_s > 0 ? s.cycle / s.active_s : 0.0, s.uart_in, s.uart_out,
                s.uart_ferr, s.eth_in, s.eth_out, s.eth_bad, s.eth_write_err, s.faults.urx.flipped,
                s.faults.urx.dropped, s.faults.utx.flipped, s.faults.utx.dropped, s.faults.erx.flipped,
                s.faults.erx.dropped, s.faults.etx.flipped, s.faults.etx.dropped);
    std::fflush(stdout);
    s.top->final();
    delete s.top;
    return 0;
}
