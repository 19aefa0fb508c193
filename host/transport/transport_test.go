package transport_test

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/ptmhw/ptm/host/frame"
	"github.com/ptmhw/ptm/host/transport"
	"github.com/ptmhw/ptm/internal/testenv"
)

func TestPipeStream(t *testing.T) {
	host, board := transport.NewPipe(transport.StreamOpts{LineRate: 115200})
	defer host.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	f1, _ := frame.Append(nil, frame.TypeInfo.Response(), 0, 1, []byte{1, 2, 3})
	f2, _ := frame.Append(nil, frame.TypeStatus.Response(), 0, 2, nil)
	bad := bytes.Clone(f2)
	bad[len(bad)-1] ^= 0xff
	// garbage, a frame, a corrupted frame, a frame split over writes
	board.Write([]byte{0, 1, frame.SOF, 2})
	board.Write(f1)
	board.Write(bad)
	board.Write(f2[:4])
	time.Sleep(time.Millisecond)
	board.Write(f2[4:])
	for _, want := range [][]byte{f1, f2} {
		got, err := host.Recv(ctx)
		if err != nil || !bytes.Equal(got, want) {
			t.Fatalf("Recv: % x, %v; want % x", got, err, want)
		}
	}
	st := host.Stats()
	if st.FramesRecv != 2 || st.CRCErrors != 2 || st.LineRate != 115200 {
		t.Fatalf("stats %+v", st)
	}
	// Send reaches the other end unchanged.
	if err := host.Send(f1); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 100)
	board.SetReadDeadline(time.Now().Add(time.Second))
	if n, err := board.Read(buf); err != nil || !bytes.Equal(buf[:n], f1) {
		t.Fatalf("board read % x, %v", buf[:n], err)
	}
	// Close unblocks Recv.
	go func() { time.Sleep(10 * time.Millisecond); host.Close() }()
	if _, err := host.Recv(ctx); !errors.Is(err, transport.ErrClosed) {
		t.Fatalf("Recv after Close: %v", err)
	}
	if err := host.Send(f1); !errors.Is(err, transport.ErrClosed) {
		t.Fatalf("Send after Close: %v", err)
	}
}

// A partial frame followed by silence is dropped after the idle timeout,
// and a frame hidden behind a false SOF is recovered.
func TestPipeIdleTimeout(t *testing.T) {
	host, board := transport.NewPipe(transport.StreamOpts{IdleTimeout: 5 * time.Millisecond})
	defer host.Close()
	f, _ := frame.Append(nil, frame.TypeInfo.Response(), 0, 3, nil)
	board.Write(append([]byte{frame.SOF, 0x81, 0, 0, 0, 0x00, 0x01}, f...)) // claims 256 bytes
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	got, err := host.Recv(ctx)
	if err != nil || !bytes.Equal(got, f) {
		t.Fatalf("Recv: % x, %v", got, err)
	}
	if st := host.Stats(); st.FramingErrors != 1 {
		t.Fatalf("stats %+v", st)
	}
}

// Pacing makes Send take the line time.
func TestPace(t *testing.T) {
	host, board := transport.NewPipe(transport.StreamOpts{LineRate: 100_000, Pace: true})
	defer host.Close()
	defer board.Close()
	f, _ := frame.Append(nil, frame.TypeInfer, 0, 1, make([]byte, 489)) // 500 bytes = 50 ms at 100 kbaud
	start := time.Now()
	for range 4 {
		if err := host.Send(f); err != nil {
			t.Fatal(err)
		}
	}
	// (The lower bound is the pacing; the upper one only catches a pace
	// far too slow, stretched on a loaded machine.)
	if el := time.Since(start); el < 190*time.Millisecond || el > testenv.Scale(400*time.Millisecond) {
		t.Fatalf("4 x 500 bytes at 100 kbaud took %v, want about 200 ms (load %s)", el, testenv.LoadString())
	}
	st := host.Stats()
	if u := st.TxUtilization(200 * time.Millisecond); u < 0.99 || u > 1.01 {
		t.Fatalf("utilization %v over the line time", u)
	}
	if st.TxBusy != 200*time.Millisecond {
		t.Fatalf("TxBusy %v", st.TxBusy)
	}
}

func TestRecordingText(t *testing.T) {
	rec := transport.Recording{{Dir: transport.Tx, At: 1500 * time.Microsecond, Data: []byte{0xa5, 1}}, {Dir: transport.Rx, At: 2 * time.Second, Data: []byte{0xa5, 0x81}}}
	var b bytes.Buffer
	if _, err := rec.WriteTo(&b); err != nil {
		t.Fatal(err)
	}
	got, err := transport.ReadRecording(&b)
	if err != nil || len(got) != 2 || got[0].Dir != transport.Tx || got[1].At != 2*time.Second || !bytes.Equal(got[1].Data, []byte{0xa5, 0x81}) {
		t.Fatalf("round trip: %+v %v", got, err)
	}
	if _, err := transport.ReadRecording(bytes.NewBufferString("> 1 zz\n")); err == nil {
		t.Fatal("bad hex accepted")
	}
}

func TestPlaybackOrder(t *testing.T) {
	a, _ := frame.Append(nil, frame.TypeInfo, 0, 1, nil)
	ra, _ := frame.Append(nil, frame.TypeInfo.Response(), 0, 1, nil)
	p := transport.NewPlayback(transport.Recording{{Dir: transport.Tx, Data: a}, {Dir: transport.Rx, Data: ra}})
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if _, err := p.Recv(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("response delivered before its request was sent: %v", err)
	}
	wrong := bytes.Clone(a)
	wrong[3] = 9
	if err := p.Send(wrong); err == nil {
		t.Fatal("a different frame was accepted")
	}
	if err := p.Send(a); err != nil {
		t.Fatal(err)
	}
	if got, err := p.Recv(context.Background()); err != nil || !bytes.Equal(got, ra) {
		t.Fatalf("Recv % x %v", got, err)
	}
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	p = transport.NewPlayback(transport.Recording{{Dir: transport.Tx, Data: a}})
	if err := p.Close(); err == nil {
		t.Fatal("Close did not report the frame never sent")
	}
}

func TestOpenSpecErrors(t *testing.T) {
	for _, spec := range []string{"", "uart:", "tcp:1.2.3.4", "uart:/dev/null@fast", "eth:lo/zz"} {
		if tr, err := transport.Open(spec); err == nil {
			tr.Close()
			t.Errorf("Open(%q) succeeded", spec)
		}
	}
	if _, err := transport.Open("/nonexistent/tty@115200"); err == nil || !strings.Contains(err.Error(), "/nonexistent/tty") {
		t.Errorf("missing device: %v", err)
	}
}
