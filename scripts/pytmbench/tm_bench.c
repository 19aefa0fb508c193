// pytm_bench DATA CLAUSES WARM EPOCHS: pyTsetlinMachine's MultiClassTsetlinMachine
// (non-indexed path: mc_tm_fit), T 15, s 3.9, 8 state bits, boost 1, as tm.py builds it.
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include "MultiClassConvolutionalTsetlinMachine.h"
#include "Tools.h"
static double cpu_ms(void) { struct timespec t; clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t); return t.tv_sec*1e3 + t.tv_nsec/1e6; }
static double wall_ms(void) { struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec*1e3 + t.tv_nsec/1e6; }
int main(int argc, char **argv) {
	FILE *f = fopen(argv[1], "r"); int clauses = atoi(argv[2]), warm = atoi(argv[3]), epochs = atoi(argv[4]);
	int n, feat; if (fscanf(f, "%d %d", &n, &feat) != 2) return 1;
	unsigned int *X = malloc(sizeof(unsigned)*n*feat); int *y = malloc(sizeof(int)*n);
	for (int r = 0; r < n; r++) { for (int i = 0; i < feat; i++) if (fscanf(f, "%u", &X[r*feat+i]) != 1) return 1; if (fscanf(f, "%d", &y[r]) != 1) return 1; }
	int nf = 2*feat, chunks = (nf-1)/32+1;
	unsigned int *E = malloc(sizeof(unsigned)*n*chunks);
	tm_encode(X, E, n, feat, 1, 1, feat, 1, 1, 0);
	int boost = argc > 5 ? atoi(argv[5]) : 1;
	struct MultiClassTsetlinMachine *tm = CreateMultiClassTsetlinMachine(2, clauses, nf, 1, chunks, 8, 15, 3.9, 3.9, boost, 0, 0.0f, 0.0f, nf);
	mc_tm_fit(tm, E, y, n, warm);
	double c0 = cpu_ms(), w0 = wall_ms();
	mc_tm_fit(tm, E, y, n, epochs);
	double c = (cpu_ms()-c0)/epochs, w = (wall_ms()-w0)/epochs;
	int *p = malloc(sizeof(int)*n); mc_tm_predict(tm, E, p, n); int ok = 0; for (int r = 0; r < n; r++) ok += p[r] == y[r];
	printf("pytm boost %d clauses %d features %d: %.2f cpu-ms/epoch %.2f wall-ms/epoch (train acc %.3f)\n", boost, clauses, feat, c, w, (double)ok/n);
	return 0;
}
