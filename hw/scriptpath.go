package hw

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"unicode"
)

// ErrScriptPath is wrapped by ScriptPath's error: a path that cannot be
// written safely into a tool script.
var ErrScriptPath = errors.New("path unusable in a tool script")

// ScriptPath returns p double-quoted for a yosys script (and a Verilator
// configuration file), where a path is one word: quoted, a space, ';' or
// '#' in it stays part of the name. A path holding a double quote or a
// control character (a newline would end the command, and yosys runs a
// line starting with '!' as a shell command) is refused: the error wraps
// ErrScriptPath and names the offending character.
func ScriptPath(p string) (string, error) {
	if p == "" {
		return "", fmt.Errorf("%w: empty path", ErrScriptPath)
	}
	if i := strings.IndexFunc(p, func(r rune) bool { return r == '"' || unicode.IsControl(r) }); i >= 0 {
		r := []rune(p[i:])[0]
		return "", fmt.Errorf("%w: %q has %s at byte %d (tool scripts cannot quote it): choose another path",
			ErrScriptPath, p, strconv.QuoteRune(r), i)
	}
	return `"` + p + `"`, nil
}

// ScriptPaths quotes every path with ScriptPath, joined by spaces.
func ScriptPaths(ps []string) (string, error) {
	q := make([]string, len(ps))
	for i, p := range ps {
		var err error
		if q[i], err = ScriptPath(p); err != nil {
			return "", err
		}
	}
	return strings.Join(q, " "), nil
}
