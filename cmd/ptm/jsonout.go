package main

import (
	"encoding/json"
	"io"
	"math"

	"github.com/ptmhw/ptm/internal/outfile"
)

// num is a float that encodes NaN and infinities as JSON null.
type num float64

func (n num) MarshalJSON() ([]byte, error) {
	f := float64(n)
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return []byte("null"), nil
	}
	return json.Marshal(f)
}

func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// writeJSONFile writes v as writeJSON does to the file path, through
// internal/outfile.
func writeJSONFile(path string, v any) error {
	f, err := outfile.Create(path)
	if err != nil {
		return err
	}
	if err := writeJSON(f, v); err != nil {
		f.Abort()
		return err
	}
	return f.Commit()
}
