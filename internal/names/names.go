// Package names holds the one rule for the names a data set or a model
// carries (class and feature names), which ptm prints on a terminal and in
// error messages: a name must be UTF-8 without a character that would act
// on the terminal or reorder the text around it. golden/dataset applies it
// to a CSV file's header and labels, golden/modelfile to a model file's
// names.
package names

import (
	"errors"
	"fmt"
	"strconv"
	"unicode"
	"unicode/utf8"
)

// ErrControl is wrapped by Check's error for a control or bidirectional
// control character.
var ErrControl = errors.New("control character")

// Check refuses a name that is not UTF-8 or holds a control character
// (C0 such as ESC, CR, BEL; DEL; C1 such as U+0085) or a bidirectional
// control (U+061C, U+200E, U+200F, U+202A-U+202E, U+2066-U+2069). The
// error names the character and its byte offset in the name.
func Check(n string) error {
	if !utf8.ValidString(n) {
		return errors.New("not valid UTF-8")
	}
	for i, r := range n {
		if Unsafe(r) {
			return fmt.Errorf("%w %U at byte %d", ErrControl, r, i)
		}
	}
	return nil
}

// Unsafe reports whether r is a character Check refuses.
func Unsafe(r rune) bool {
	return unicode.IsControl(r) || r == 0x061c || r == 0x200e || r == 0x200f ||
		r >= 0x202a && r <= 0x202e || r >= 0x2066 && r <= 0x2069
}

// Quote returns n unchanged if Check accepts it, else n as a Go string
// literal in ASCII (quotes included, "\x1b[31mred" for ESC [ 3 1 m r e d):
// printable, and telling the reader the name was escaped.
func Quote(n string) string {
	if Check(n) == nil {
		return n
	}
	return strconv.QuoteToASCII(n)
}
