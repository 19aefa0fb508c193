package names

import (
	"errors"
	"strings"
	"testing"
)

func TestCheck(t *testing.T) {
	for _, ok := range []string{"sepal length", "Größe", "класс", "日本", "a\u00a0b", "emoji 🙂"} {
		if err := Check(ok); err != nil {
			t.Errorf("Check(%q): %v", ok, err)
		}
		if Quote(ok) != ok {
			t.Errorf("Quote(%q) = %q, want it unchanged", ok, Quote(ok))
		}
	}
	for n, want := range map[string]string{
		"\x1b[31mred": "U+001B at byte 0",
		"a\rb":        "U+000D at byte 1",
		"bell\a":      "U+0007 at byte 4",
		"x\u202eevil": "U+202E at byte 1",
		"nel\u0085":   "U+0085 at byte 3",
		"del\x7f":     "U+007F at byte 3",
		"\u2066iso":   "U+2066 at byte 0",
		"tab\t":       "U+0009 at byte 3",
	} {
		err := Check(n)
		if err == nil || !errors.Is(err, ErrControl) || !strings.Contains(err.Error(), want) {
			t.Errorf("Check(%q) = %v, want %q", n, err, want)
		}
		q := Quote(n)
		if Check(q) != nil || !strings.HasPrefix(q, `"`) || strings.ContainsAny(q, "\x1b\r\a\u202e\u0085\x7f\u2066\t") {
			t.Errorf("Quote(%q) = %q: not a safe escaped form", n, q)
		}
	}
	if err := Check("bad\xff"); err == nil || !strings.Contains(err.Error(), "UTF-8") {
		t.Errorf("invalid UTF-8: %v", err)
	}
}
