package hw

import (
	"fmt"
	"os"
	"regexp"
	"strings"
	"testing"
)

// TestDocVersion keeps docs/core-interface.md's generator version and info
// word 0 equal to the code's (Version, versionWord), so the reference
// cannot go stale when the generator's version changes.
func TestDocVersion(t *testing.T) {
	b, err := os.ReadFile("../docs/core-interface.md")
	if err != nil {
		t.Fatal(err)
	}
	doc := strings.ReplaceAll(string(b), "\n", " ")
	m := regexp.MustCompile("Generator version: `hw.Version` = ([0-9]+\\.[0-9]+\\.[0-9]+) \\(info word 0 = `(0x[0-9A-Fa-f]{8})`").FindStringSubmatch(doc)
	if m == nil {
		t.Fatal("docs/core-interface.md: no line \"Generator version: `hw.Version` = X.Y.Z (info word 0 = `0x...`\"")
	}
	if m[1] != Version {
		t.Errorf("docs/core-interface.md says generator %s, hw.Version is %s", m[1], Version)
	}
	if want := fmt.Sprintf("0x%08X", versionWord); !strings.EqualFold(m[2], want) {
		t.Errorf("docs/core-interface.md says info word 0 = %s, versionWord is %s", m[2], want)
	}
	var major, minor, patch int
	if _, err := fmt.Sscanf(Version, "%d.%d.%d", &major, &minor, &patch); err != nil {
		t.Fatal(err)
	}
	if got := uint32(0x5054_0000 | major<<8 | minor); got != versionWord {
		t.Errorf("versionWord 0x%08X is not \"PT\", major %d, minor %d (0x%08X)", versionWord, major, minor, got)
	}
}
