// Package doctest finds the shell commands of the project's documents so
// that a test can run them: every fenced block whose info string is sh,
// bash, shell or console, split into commands (a line, with its
// backslash continuations and the lines of an open quote joined to it;
// blank lines and comment lines dropped).
//
// The test in this package (doctest_test.go) runs every command of
// README.md and docs/howto-*.md; a command too long for `make test` has a
// quick form in its table, and the table's entries are checked against
// the documents so that neither can drift from the other.
package doctest

import (
	"bufio"
	"strings"
)

// Command is one shell command of a document.
type Command struct {
	Line int    // 1-based line of the command's first line in the file
	Text string // the command as written, continuation lines joined with "\n"
}

// Block is one fenced shell block.
type Block struct {
	Line     int // 1-based line of the opening fence
	Commands []Command
}

// shellInfo are the info strings of the fences whose contents are run.
var shellInfo = map[string]bool{"sh": true, "bash": true, "shell": true, "console": true}

// Blocks returns the fenced shell blocks of a Markdown text in order.
// Fences of other languages (go, json, none) are skipped: they show
// code or output, not commands.
func Blocks(md string) []Block {
	b, _ := blocks(md)
	return b
}

// Unlabeled returns the 1-based lines of the fences without an info
// string: their contents are not run, whatever they hold.
func Unlabeled(md string) []int {
	_, u := blocks(md)
	return u
}

func blocks(md string) (out []Block, unlabeled []int) {
	sc := bufio.NewScanner(strings.NewReader(md))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	n := 0
	in, run := false, false
	fence := ""
	var cur *Block
	var lines []string
	var first int
	for sc.Scan() {
		n++
		line := sc.Text()
		trim := strings.TrimSpace(line)
		if !in {
			if strings.HasPrefix(trim, "```") || strings.HasPrefix(trim, "~~~") {
				in = true
				fence = trim[:3]
				info := strings.Fields(strings.TrimLeft(trim, "`~"))
				run = len(info) > 0 && shellInfo[info[0]]
				if run {
					out = append(out, Block{Line: n})
					cur = &out[len(out)-1]
				}
				if len(info) == 0 {
					unlabeled = append(unlabeled, n)
				}
			}
			continue
		}
		if strings.HasPrefix(trim, fence) && strings.Trim(trim, fence[:1]) == "" {
			in = false
			if run && len(lines) > 0 {
				cur.Commands = append(cur.Commands, Command{Line: first, Text: strings.Join(lines, "\n")})
			}
			lines, run, cur = nil, false, nil
			continue
		}
		if !run {
			continue
		}
		if len(lines) == 0 {
			if trim == "" || strings.HasPrefix(trim, "#") {
				continue
			}
			first = n
		}
		lines = append(lines, line)
		if open(strings.Join(lines, "\n")) {
			continue
		}
		cur.Commands = append(cur.Commands, Command{Line: first, Text: strings.Join(lines, "\n")})
		lines = nil
	}
	return out, unlabeled
}

// open reports whether a command continues on the next line: it ends in
// a backslash, or a single or double quote is still open.
func open(s string) bool {
	if strings.HasSuffix(s, "\\") {
		return true
	}
	var q byte
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case q == 0 && (c == '\'' || c == '"'):
			q = c
		case q == c:
			q = 0
		case q == '"' && c == '\\':
			i++
		case q == 0 && c == '\\':
			i++
		case q == 0 && c == '#' && (i == 0 || s[i-1] == ' ' || s[i-1] == '\t'):
			// a comment: the rest of the line is not code
			j := strings.IndexByte(s[i:], '\n')
			if j < 0 {
				return false
			}
			i += j
		}
	}
	return q != 0
}

// Words splits a command into its words before any comment, the way the
// quick-form checks compare commands: quotes group words and are kept.
func Words(cmd string) []string {
	var out []string
	var w strings.Builder
	var q byte
	flush := func() {
		if w.Len() > 0 {
			out = append(out, w.String())
			w.Reset()
		}
	}
	for i := 0; i < len(cmd); i++ {
		c := cmd[i]
		switch {
		case q != 0:
			w.WriteByte(c)
			if c == q {
				q = 0
			}
		case c == '\'' || c == '"':
			q = c
			w.WriteByte(c)
		case c == '\\' && i+1 < len(cmd) && cmd[i+1] == '\n':
			i++
			flush()
		case c == ' ' || c == '\t' || c == '\n':
			flush()
		case c == '#' && w.Len() == 0:
			return out
		default:
			w.WriteByte(c)
		}
	}
	flush()
	return out
}

// Norm is a command without its trailing comment, its words joined by
// single spaces: the key of a quick form.
func Norm(cmd string) string { return strings.Join(Words(cmd), " ") }
