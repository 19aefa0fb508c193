// pytm_conv_bench IMAGES N CLAUSES T S WINDOW WARM EPOCHS
// pyTsetlinMachine's MultiClassConvolutionalTsetlinMachine2D as tm.py's fit
// builds and calls it: tm_encode(X, E, n, 28, 28, 1, W, W, 1, 0), then
// CreateMultiClassTsetlinMachine(classes, CLAUSES (per class), 2F, patches,
// chunks, 8 state bits, T, s, s, boost 1, unweighted, no drop, 2F) and
// mc_tm_fit, one call per timed epoch (WARM untimed epochs first).
// IMAGES: N x 784 bytes of 0/1 then N label bytes (convtrain's
// TestWriteBenchImages). Prints CPU and wall ms per epoch.
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include "MultiClassConvolutionalTsetlinMachine.h"
#include "Tools.h"
static double cpu_ms(void) { struct timespec t; clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t); return t.tv_sec*1e3 + t.tv_nsec/1e6; }
static double wall_ms(void) { struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec*1e3 + t.tv_nsec/1e6; }
int main(int argc, char **argv) {
	if (argc != 9) { fprintf(stderr, "usage: %s IMAGES N CLAUSES T S WINDOW WARM EPOCHS\n", argv[0]); return 2; }
	int n = atoi(argv[2]), clauses = atoi(argv[3]), T = atoi(argv[4]); double s = atof(argv[5]);
	int win = atoi(argv[6]), warm = atoi(argv[7]), epochs = atoi(argv[8]);
	const int dim = 28, px = dim*dim;
	FILE *f = fopen(argv[1], "rb"); if (!f) { perror(argv[1]); return 1; }
	unsigned char *raw = malloc(n*(px+1));
	if (fread(raw, 1, n*(px+1), f) != (size_t)n*(px+1)) { fprintf(stderr, "short file\n"); return 1; }
	unsigned int *X = malloc(sizeof(unsigned)*n*px); int *y = malloc(sizeof(int)*n); int classes = 0;
	for (int i = 0; i < n*px; i++) X[i] = raw[i];
	for (int r = 0; r < n; r++) { y[r] = raw[n*px+r]; if (y[r]+1 > classes) classes = y[r]+1; }
	int F = win*win + 2*(dim-win), nf = 2*F, chunks = (nf-1)/32+1, patches = (dim-win+1)*(dim-win+1);
	unsigned int *E = malloc(sizeof(unsigned)*n*patches*chunks);
	tm_encode(X, E, n, dim, dim, 1, win, win, 1, 0);
	struct MultiClassTsetlinMachine *tm = CreateMultiClassTsetlinMachine(classes, clauses, nf, patches, chunks, 8, T, s, s, 1, 0, 0.0f, 0.0f, nf);
	mc_tm_fit(tm, E, y, n, warm);
	double c0 = cpu_ms(), w0 = wall_ms();
	mc_tm_fit(tm, E, y, n, epochs);
	double c = (cpu_ms()-c0)/epochs, w = (wall_ms()-w0)/epochs;
	int *p = malloc(sizeof(int)*n); mc_tm_predict(tm, E, p, n); int ok = 0; for (int r = 0; r < n; r++) ok += p[r] == y[r];
	printf("pytm-conv classes %d clauses/class %d T %d s %g window %d images %d: %.1f cpu-ms/epoch %.1f wall-ms/epoch (train acc %.3f after %d epochs)\n",
		classes, clauses, T, s, win, n, c, w, (double)ok/n, warm+epochs);
	return 0;
}
