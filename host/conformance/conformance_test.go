package conformance_test

import (
	"context"
	"testing"
	"time"

	"github.com/ptmhw/ptm/host/conformance"
	"github.com/ptmhw/ptm/host/internal/testmodel"
	"github.com/ptmhw/ptm/host/softboard"
	"github.com/ptmhw/ptm/host/transport"
)

func TestSoftboardConforms(t *testing.T) {
	for _, sh := range [...]struct {
		name    string
		kmax    int
		version uint32
	}{{"multiclass", 200, 0}, {"binary", 65535, 0}, {"multiclass-v5", 200, 5}} {
		t.Run(sh.name, func(t *testing.T) {
			shape := testmodel.Multiclass
			if sh.name == "binary" {
				shape = testmodel.Binary
			}
			b, err := softboard.New(softboard.Config{Shape: shape, HW: testmodel.HW, KMax: sh.kmax, Version: sh.version})
			if err != nil {
				t.Fatal(err)
			}
			host, _, stop := b.Pipe(context.Background(), transport.StreamOpts{}, softboard.StreamOpts{}, nil)
			defer host.Close()
			defer stop()
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			rep, err := conformance.Check(ctx, host, testmodel.Bank(shape, testmodel.HW.Bits, 5), conformance.Opts{Strict: true})
			if err != nil {
				t.Fatal(err)
			}
			for _, f := range rep.Failed() {
				t.Errorf("%s: %s", f.Name, f.Detail)
			}
			if testing.Verbose() {
				t.Logf("\n%s", rep)
			}
		})
	}
}

// A board that checks the INFER length as 8 + count*FB (section 4 of
// docs/protocol.md taken literally) is caught.
func TestDetectsEightByteHeader(t *testing.T) {
	b, _ := softboard.New(softboard.Config{Shape: testmodel.Binary, HW: testmodel.HW})
	host, _, stop := b.Pipe(context.Background(), transport.StreamOpts{}, softboard.StreamOpts{}, nil)
	defer host.Close()
	defer stop()
	rep, err := conformance.Check(context.Background(), &shortHeader{Transport: host}, testmodel.Bank(testmodel.Binary, testmodel.HW.Bits, 5), conformance.Opts{Garbage: -1, Queries: 3})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Failed()) == 0 {
		t.Fatal("no check failed for a board that reads a different INFER layout")
	}
}

// shortHeader drops the two count bytes of every INFER on the way, as a
// host following "8 + count*FB" would lay them out.
type shortHeader struct{ transport.Transport }

func (s *shortHeader) Send(b []byte) error {
	if len(b) > 17 && b[1] == 0x10 {
		nb := append(append([]byte(nil), b[:7+8]...), b[7+10:len(b)-4]...)
		nb[5], nb[6] = byte(len(nb)-7), 0
		return s.Transport.Send(appendCRC(nb))
	}
	return s.Transport.Send(b)
}
