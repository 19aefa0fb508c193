package pipeline

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ptmhw/ptm/golden/ptm"
)

func quickParams() ptm.Params {
	p := ptm.DefaultParams()
	p.Epochs, p.Clauses, p.N = 2, 4, 16
	return p
}

func TestFingerprintRefusesOtherData(t *testing.T) {
	d, _ := LoadData(Iris, "")
	f, err := Train(d, TrainConfig{Params: quickParams(), SplitSeed: 1})
	if err != nil {
		t.Fatal(err)
	}
	if f.DataFingerprint != d.Fingerprint() {
		t.Fatalf("fingerprint %q not recorded", f.DataFingerprint)
	}
	if _, err := Rows(f, d, "test"); err != nil {
		t.Fatalf("same data refused: %v", err)
	}
	other := &Data{Dataset: d.Clone()}
	other.X[0], other.X[1] = other.X[1], other.X[0] // same rows count, other order
	other.Y[0], other.Y[1] = other.Y[1], other.Y[0]
	other.X[60][2] += 0.5
	for _, split := range []string{"test", "train"} {
		if _, err := Rows(f, other, split); err == nil || !strings.Contains(err.Error(), "differs") || !strings.Contains(err.Error(), "--test-data") {
			t.Errorf("--split %s on other data with the same row count: %v", split, err)
		}
	}
	if _, err := Rows(f, other, "all"); err != nil {
		t.Errorf("--split all: %v", err)
	}
}

func TestNoTest(t *testing.T) {
	d, _ := LoadData(Iris, "")
	f, err := Train(d, TrainConfig{Params: quickParams(), NoTest: true, TestFraction: 0.3})
	if err != nil {
		t.Fatal(err)
	}
	if len(f.Split.Train) != 150 || len(f.Split.Test) != 0 || f.Split.TestFraction != 0 {
		t.Fatalf("split %d/%d %v", len(f.Split.Train), len(f.Split.Test), f.Split.TestFraction)
	}
	if _, err := Rows(f, d, "test"); err == nil || !strings.Contains(err.Error(), "no test rows") {
		t.Errorf("--split test of a model without test rows: %v", err)
	}
}

func TestSizeLimits(t *testing.T) {
	d, _ := LoadData(Iris, "")
	p := quickParams()
	p.Clauses = 100_000_000
	if _, err := Train(d, TrainConfig{Params: p}); err == nil || !strings.Contains(err.Error(), "--clauses") || !strings.Contains(err.Error(), "limit") {
		t.Errorf("--clauses 1e8: %v", err)
	}
	if _, err := Train(d, TrainConfig{Params: quickParams(), Thresholds: MaxThresholds + 1}); err == nil || !strings.Contains(err.Error(), "--thresholds") {
		t.Errorf("--thresholds too many: %v", err)
	}
	f, err := Train(d, TrainConfig{Params: quickParams()})
	if err != nil {
		t.Fatal(err)
	}
	_, err = Evaluate(f, d, []int{0}, 1_000_000_000, 1, DefaultMapping, 10)
	if err == nil || !strings.Contains(err.Error(), "--samples 1000000000") || !strings.Contains(err.Error(), "at most") {
		t.Errorf("--samples 1e9: %v", err)
	}
	t.Setenv("PTM_MAX_MEMORY", "1M")
	if lim, err := MemoryLimit(); err != nil || lim != 1<<20 {
		t.Errorf("PTM_MAX_MEMORY=1M: %d %v", lim, err)
	}
	if _, err := Evaluate(f, d, []int{0}, 100_000, 1, DefaultMapping, 10); err == nil || !strings.Contains(err.Error(), "1 MiB limit") {
		t.Errorf("--samples under a 1M limit: %v", err)
	}
	for _, bad := range []string{"lots", "-5", "0"} {
		t.Setenv("PTM_MAX_MEMORY", bad)
		if _, err := MemoryLimit(); err == nil {
			t.Errorf("PTM_MAX_MEMORY=%s accepted", bad)
		}
	}
	t.Setenv("PTM_MAX_MEMORY", "8GB")
	if lim, _ := MemoryLimit(); lim != 8<<30 {
		t.Errorf("8GB: %d", lim)
	}
}

func TestUnknownDataNamesBuiltins(t *testing.T) {
	_, err := LoadData("iriss", "")
	if err == nil || !strings.Contains(err.Error(), `"iriss"`) || !strings.Contains(err.Error(), "iris, wine, breast-cancer, xor, xor-noisy, xor-classic") {
		t.Errorf("iriss: %v", err)
	}
	_, err = LoadData(filepath.Join(t.TempDir(), "nope.csv"), "")
	if err == nil || !strings.Contains(err.Error(), "nope.csv") || !strings.Contains(err.Error(), "no such file") {
		t.Errorf("missing CSV: %v", err)
	}
}

func TestProgressCallbacks(t *testing.T) {
	path := filepath.Join(t.TempDir(), "d.csv")
	var b strings.Builder
	b.WriteString("a,b,y\n")
	for i := 0; i < 600; i++ {
		b.WriteString("1,2,x\n3,4,y\n")
	}
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	var loaded int64
	d, err := LoadDataProgress(path, "", func(read, total int64) { loaded = read })
	if err != nil || loaded != int64(b.Len()) {
		t.Fatalf("loaded %d of %d: %v", loaded, b.Len(), err)
	}
	var rows []int
	_, err = Train(d, TrainConfig{Params: quickParams(), RowProgress: func(row, n int) { rows = append(rows, row) }})
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) < 4 || rows[len(rows)-1] != 960 {
		t.Errorf("row progress %v", rows)
	}
}
