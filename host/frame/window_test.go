package frame

import (
	"bytes"
	"testing"
)

func TestWindow(t *testing.T) {
	ans := []byte{10, 11, 20, 21, 30, 31, 40, 41} // 4 items of 2 bytes
	for _, c := range []struct {
		w    Window
		want []byte
	}{
		{Window{0, 4}, ans},
		{Window{1, 2}, []byte{20, 21, 30, 31}},
		{Window{3, 9}, []byte{40, 41}},
		{Window{4, 1}, []byte{}},
		{Window{0, 0}, []byte{}},
		{Window{0xffff, 0xffff}, []byte{}},
	} {
		if got := c.w.Select(ans, 2); !bytes.Equal(got, c.want) {
			t.Errorf("%+v: % x, want % x", c.w, got, c.want)
		}
	}
	q := InferRequest{Mode: ModeSums, Sets: 2, K: 300, Seed: 0x01020304, Count: 1, Features: []byte{0xaa, 0xbb}}
	p := AppendInferWindow(nil, q.AppendTo(nil), Window{First: 0x1122, Count: 5})
	want := []byte{3, 2, 0x2c, 1, 4, 3, 2, 1, 1, 0, 0x22, 0x11, 5, 0, 0xaa, 0xbb}
	if !bytes.Equal(p, want) {
		t.Fatalf("INFER_WINDOW payload % x, want % x", p, want)
	}
	var w Window
	inf, err := w.DecodeFromBytes(p)
	if err != nil || w != (Window{0x1122, 5}) || !bytes.Equal(inf, q.AppendTo(nil)) {
		t.Fatalf("decoded %+v % x %v", w, inf, err)
	}
	if _, err := w.DecodeFromBytes(p[:13]); err == nil {
		t.Fatal("a 13-byte INFER_WINDOW payload decoded")
	}
}
