package main

import (
	"fmt"
	"io"
	"os"

	"github.com/ptmhw/ptm/golden/modelfile"
)

func init() {
	register("convert", "rewrite a model file in the current format (format 1 files: 16-bit SPVs, a fraction of the size)", cmdConvert)
}

// cmdConvert reads a model file of any format version and writes it in
// the current one (golden/modelfile/doc.go). A format-1 file's float SPVs
// are rounded to the stored width (16 bits, or the bank's width when they
// are exact there); the rounding is reported.
func cmdConvert(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("convert", "--model OLD -o NEW", stderr)
	model := fs.String("model", "", "model `file` to read (format 1 or 2)")
	out := fs.String("o", "", "output model `file` (format 2; may be --model itself)")
	if err := parse(fs, args); err != nil {
		return err
	}
	if *model == "" || *out == "" {
		return fmt.Errorf("%w: --model and -o are required", errUsage)
	}
	fi, err := os.Stat(*model)
	if err != nil {
		return err
	}
	f, hash, err := modelfile.Read(*model)
	if err != nil {
		return err
	}
	r, err := f.Canonicalize()
	if err != nil {
		return fmt.Errorf("%s: %w", *model, err)
	}
	newHash, err := modelfile.Write(*out, f)
	if err != nil {
		return err
	}
	fo, err := os.Stat(*out)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "read %s: format %d, %d bytes (model hash %s)\n", *model, f.Format, fi.Size(), hash[:16])
	fmt.Fprintf(stdout, "wrote %s: format %d, SPVs at %d bits, %d bytes (model hash %s)\n", *out, modelfile.Version, r.Bits, fo.Size(), newHash[:16])
	if r.TAs > 0 {
		fmt.Fprintf(stdout, "rounded %d of %d TAs to %d bits: a state's probability moved by at most %.3g, a P(include) by at most %.3g\n",
			r.TAs, f.Model.NumTAs(), r.Bits, r.MaxSPV, r.MaxInclude)
	} else {
		fmt.Fprintf(stdout, "the SPVs were exact at %d bits: the model is unchanged\n", r.Bits)
	}
	return nil
}
