package hw

import (
	"errors"
	"strings"
	"testing"
)

func TestScriptPath(t *testing.T) {
	for _, p := range []string{"/tmp/a b/c.v", "x;y#z", `back\slash`, "!bang", "ünï"} {
		q, err := ScriptPath(p)
		if err != nil || q != `"`+p+`"` {
			t.Errorf("ScriptPath(%q) = %q, %v", p, q, err)
		}
	}
	for _, p := range []string{"", "out\n!touch /tmp/pwned", "a\"b", "a\rb", "tab\there", "nul\x00"} {
		_, err := ScriptPath(p)
		if !errors.Is(err, ErrScriptPath) {
			t.Errorf("ScriptPath(%q) accepted: %v", p, err)
		}
	}
	_, err := ScriptPaths([]string{"ok.v", "bad\n.v"})
	if err == nil || !strings.Contains(err.Error(), `'\n' at byte 3`) {
		t.Errorf("ScriptPaths: %v", err)
	}
}
