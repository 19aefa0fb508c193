// Command ptm is the one command-line tool of the project: it trains and
// evaluates Probabilistic Tsetlin Machines (golden), inspects model files,
// and drives the hardware flow (generate, co-simulate, synthesize, stream).
//
// Usage:
//
//	ptm <command> [flags]
//
// Run `ptm help` for the list of commands and `ptm <command> --help` for the
// flags of one.
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
)

// command is one subcommand.
type command struct {
	summary string
	run     func(args []string, stdout, stderr io.Writer) error
}

var commands = map[string]command{}

func register(name, summary string, run func(args []string, stdout, stderr io.Writer) error) {
	commands[name] = command{summary: summary, run: run}
}

// errUsage marks an error caused by bad flags (exit status 2).
var errUsage = errors.New("invalid arguments")

func usage(w io.Writer) {
	fmt.Fprintln(w, "ptm: Probabilistic Tsetlin Machine golden model and hardware flow")
	fmt.Fprintln(w, "\nUsage: ptm <command> [flags]\n\nCommands:")
	names := make([]string, 0, len(commands))
	for n := range commands {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		fmt.Fprintf(w, "  %-12s %s\n", n, commands[n].summary)
	}
	fmt.Fprintln(w, "\nRun 'ptm <command> --help' for a command's flags.")
}

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

func run(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 || args[0] == "help" || args[0] == "-h" || args[0] == "--help" {
		usage(stdout)
		if len(args) == 0 {
			return 2
		}
		return 0
	}
	c, ok := commands[args[0]]
	if !ok {
		fmt.Fprintf(stderr, "ptm: unknown command %q\n", args[0])
		usage(stderr)
		return 2
	}
	err := c.run(args[1:], stdout, stderr)
	switch {
	case err == nil:
		return 0
	case errors.Is(err, flag.ErrHelp):
		return 0
	case errors.Is(err, errUsage):
		fmt.Fprintf(stderr, "ptm %s: %v\n", args[0], err)
		return 2
	default:
		fmt.Fprintf(stderr, "ptm %s: %v\n", args[0], err)
		return 1
	}
}

// newFlags returns a flag set for a subcommand that reports errors instead
// of exiting.
func newFlags(name, synopsis string, stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet("ptm "+name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprintf(stderr, "Usage: ptm %s %s\n\nFlags:\n", name, synopsis)
		fs.PrintDefaults()
	}
	return fs
}

// parse parses flags, rejecting positional arguments.
func parse(fs *flag.FlagSet, args []string) error {
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return err
		}
		return fmt.Errorf("%w: %v", errUsage, err)
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("%w: unexpected argument %q", errUsage, fs.Arg(0))
	}
	if name := repeatedFlag(fs, args); name != "" {
		return fmt.Errorf("%w: --%s given twice (each flag takes one value; the flag package would keep the last silently)", errUsage, name)
	}
	return nil
}

// repeatedFlag returns the name of a flag that args (already parsed by
// fs without error) give more than once, or "". Only the link flags of
// ptm stream take several values by repetition (their Value has a
// Repeatable method); lists are comma-separated.
func repeatedFlag(fs *flag.FlagSet, args []string) string {
	seen := map[string]bool{}
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" || len(a) < 2 || a[0] != '-' {
			return ""
		}
		name := strings.TrimLeft(a, "-")
		name, _, hasValue := strings.Cut(name, "=")
		if seen[name] {
			return name
		}
		seen[name] = true
		f := fs.Lookup(name)
		if f == nil {
			continue
		}
		if r, ok := f.Value.(interface{ Repeatable() bool }); ok && r.Repeatable() {
			delete(seen, name) // one value per board (ptm stream --uart A --uart B)
		}
		if b, ok := f.Value.(interface{ IsBoolFlag() bool }); (ok && b.IsBoolFlag()) || hasValue {
			continue
		}
		i++ // the value
	}
	return ""
}
