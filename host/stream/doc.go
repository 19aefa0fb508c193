// Package stream is the library behind `ptm stream`: it runs a model file
// on a board through any transport and checks every answer against the
// bit-exact golden model.
//
// [Run] does, in order:
//
//  1. INFO: reads the board's words and checks that the board fits the
//     model ([CheckFit]): the same shape (NT, NC, m, o, T), the same
//     probability bits B, a lane split LC x LL that is valid for the shape
//     with the bank depth D it implies, and K <= KMAX. A mismatch is an
//     error naming both sides.
//
//  2. Upload: the bank words (frame.BankWords: Bank.LaneWords(hw) in the
//     order w = addr*L + lane, u16 each) with LOAD_BEGIN / LOAD_DATA /
//     LOAD_COMMIT, unless the board already holds a committed model with
//     the same CRC-32 (Config.ForceUpload uploads anyway). INFO is read
//     again to confirm loaded = 1 and the CRC.
//
//  3. Stream: every row is booleanized with the model file's booleanizer
//     and sent as one INFER of K samples, many in flight (driver.Stream).
//     Row i (0-based position in the rows given, or Config.RowIDs[i] when
//     set) uses the seed
//
//     seed_i = Config.Seed + id_i  (mod 2^32)
//
//     so a row's answer does not depend on which other rows are streamed
//     or in which order.
//
//  4. Check: every result is compared word for word with
//     fixed.Core.Run(x, K, seed_i) on the same hardware parameters;
//     mismatches are counted and the first one described. Each row gets a
//     status: "ok" (verified), "mismatch" or "lost" (no answer: pred -1).
//
//  5. Report: a [Summary] with the JSON fields queries, lost, duplicated,
//     mismatches_vs_golden, retries, crc_errors, queries_per_s and
//     link_utilization, then requested and verified, per-row
//     probabilities (votes/(K*U)) and, when labels are given, the
//     uncertainty metrics of golden/metrics over the verified rows only.
//     requested = queries + lost and queries = verified + mismatches. When
//     the driver's deadline (driver.Opts.Deadline) passes, Run returns the
//     partial summary (unanswered names what was given up) with the
//     *driver.DeadlineError.
//
// # Modes
//
// In samples mode (the default) the board returns the K raw class sums of
// every sample; each sample becomes its vote vector (one-hot on the top
// score, ties split), so the predictive mean is votes/(K*U) and the
// entropy and mutual information are exact. In stats mode the board
// returns only the accumulated votes, sums and sums of squares (NC + 2*NT
// words instead of K*NT): the mean and entropy are exact, the mutual
// information cannot be computed and is reported as null. Votes mode
// returns the NC vote totals alone (u16 each when they fit), the compact
// answer that lets a pipelined UART stream fill the host-to-board line;
// its metrics are those of stats mode.
//
// # Figures
//
// queries_per_s is the rows answered (queries) divided by the wall time
// of step 3.
// link_utilization is the fraction of time the board's receive line
// carried data. On a UART it is measured by the board itself (STATUS
// counters 11 and 12, read before and after the stream: 10 x bytes
// received / bit times elapsed; link_utilization_source "board"), so it
// holds for a real board and for the Verilated one, whose simulated line
// runs at its own pace. A board that does not count (bit times 0) falls
// back to the host's estimate (source "host"): link_utilization_host, the
// host-to-board utilization over the wall time (transport.Stats.
// TxUtilization: bytes sent x 10 bits / baud / seconds) when the line rate
// is known (the transport's baud, else the board's INFO bit rate);
// link_utilization_rx is the same estimate for the board-to-host
// direction. On Ethernet all three are 0.
package stream
