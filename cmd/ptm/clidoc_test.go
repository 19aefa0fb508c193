package main

import (
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
)

// TestCLIDoc: docs/cli.md's table names exactly the registered commands,
// each once, so the reference cannot miss a command or keep a removed one.
func TestCLIDoc(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "..", "docs", "cli.md"))
	if err != nil {
		t.Fatal(err)
	}
	var doc []string
	for _, m := range regexp.MustCompile("(?m)^\\| `ptm ([a-z-]+)` \\|").FindAllStringSubmatch(string(b), -1) {
		doc = append(doc, m[1])
	}
	var code []string
	for n := range commands {
		code = append(code, n)
	}
	sort.Strings(doc)
	sort.Strings(code)
	if strings.Join(doc, " ") != strings.Join(code, " ") {
		t.Errorf("docs/cli.md lists %v, ptm has %v", doc, code)
	}
}
