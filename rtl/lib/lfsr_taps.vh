// lfsr_taps.vh: the feedback taps of a maximal-length Fibonacci LFSR of
// n bits, 2 <= n <= 24 (Xilinx XAPP052's table; bit k-1 set for tap k;
// 0 for other n). One definition, included inside the modules that
// count or time with LFSRs (uart_tx, proto_rx, board_top):
//
//     `include "../lib/lfsr_taps.vh"
//
// The path is relative to the including file, which yosys resolves by
// itself; Verilator finds it through -I (or -y) of rtl/lib or any folder
// beside it. The table is a constant function: it only sets parameters,
// so including it changes no logic. rtl/board TestLEDLFSRTaps checks
// that every entry has period 2^n - 1.
function automatic [23:0] lfsr_taps(input integer n);
    case (n)
         2: lfsr_taps = 24'h000003; // 2, 1
         3: lfsr_taps = 24'h000006; // 3, 2
         4: lfsr_taps = 24'h00000C; // 4, 3
         5: lfsr_taps = 24'h000014; // 5, 3
         6: lfsr_taps = 24'h000030; // 6, 5
         7: lfsr_taps = 24'h000060; // 7, 6
         8: lfsr_taps = 24'h0000B8; // 8, 6, 5, 4
         9: lfsr_taps = 24'h000110; // 9, 5
        10: lfsr_taps = 24'h000240; // 10, 7
        11: lfsr_taps = 24'h000500; // 11, 9
        12: lfsr_taps = 24'h000829; // 12, 6, 4, 1
        13: lfsr_taps = 24'h00100D; // 13, 4, 3, 1
        14: lfsr_taps = 24'h002015; // 14, 5, 3, 1
        15: lfsr_taps = 24'h006000; // 15, 14
        16: lfsr_taps = 24'h00D008; // 16, 15, 13, 4
        17: lfsr_taps = 24'h012000; // 17, 14
        18: lfsr_taps = 24'h020400; // 18, 11
        19: lfsr_taps = 24'h040023; // 19, 6, 2, 1
        20: lfsr_taps = 24'h090000; // 20, 17
        21: lfsr_taps = 24'h140000; // 21, 19
        22: lfsr_taps = 24'h300000; // 22, 21
        23: lfsr_taps = 24'h420000; // 23, 18
        24: lfsr_taps = 24'hE10000; // 24, 23, 22, 17
        default: lfsr_taps = 24'h000000;
    endcase
endfunction
