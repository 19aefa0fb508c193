package simcache

import (
	"testing"

	"github.com/ptmhw/ptm/hw"
)

// TestVerilatorBuildKey: the build name changes with every input the
// simulator depends on and with nothing else.
func TestVerilatorBuildKey(t *testing.T) {
	base := func() VerilatorBuild {
		return VerilatorBuild{
			Top: "ptm_core", Version: "Verilator 5.006", Flags: []string{"--cc", "-O3"},
			Files:   []hw.File{{Name: "a.v", Data: []byte("module a; endmodule\n")}, {Name: "b.hex", Data: []byte("00\n")}},
			Verilog: []string{"a.v"}, Harness: []byte("int main(){}\n"), Jobs: 2,
		}
	}
	k0 := base().Key()
	if len(k0) != 24 {
		t.Fatalf("key %q: want 24 hex digits", k0)
	}
	changes := map[string]func(*VerilatorBuild){
		"version": func(v *VerilatorBuild) { v.Version = "Verilator 5.020" },
		"flags":   func(v *VerilatorBuild) { v.Flags = append(v.Flags, "--trace-fst") },
		"file":    func(v *VerilatorBuild) { v.Files[1].Data = []byte("01\n") },
		"name":    func(v *VerilatorBuild) { v.Files[1].Name = "c.hex" },
		"harness": func(v *VerilatorBuild) { v.Harness = []byte("int main(){return 0;}\n") },
		// a byte moved from one file to the next keeps the concatenation
		// but not the key (lengths are hashed)
		"boundary": func(v *VerilatorBuild) {
			v.Files[0].Data = []byte("module a; endmodule\n0")
			v.Files[1].Data = []byte("0\n")
		},
	}
	for name, change := range changes {
		v := base()
		change(&v)
		if v.Key() == k0 {
			t.Errorf("%s changed, key did not", name)
		}
	}
	same := base()
	same.Jobs, same.CacheDir = 8, "/elsewhere"
	if same.Key() != k0 {
		t.Error("jobs or cache directory changed the key")
	}
}
